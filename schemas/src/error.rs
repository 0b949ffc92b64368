/// What can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The name is not one of the registry names in [`crate::ALL`].
    #[error("unknown schema {registry_name:?} (not in the registry)")]
    UnknownSchema {
        /// The name that was asked for.
        registry_name: String,
    },
    /// Building or serializing a Cap'n Proto message failed.
    #[error("building a Cap'n Proto message")]
    Capnp(#[from] capnp::Error),
}
