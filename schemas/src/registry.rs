//! The registry: every root type we record, by registry name.

use std::fmt;

use capnp::traits::HasTypeId;

use crate::{
    battery_capnp, diagnostic_log_capnp, driver_inputs_capnp, engine_rpm_capnp, gnss_fix_capnp,
    imu_capnp, wheel_speeds_capnp,
};

/// MCAP `Schema.encoding` of our schemas: the schema data is a Cap'n Proto `CodeGeneratorRequest`.
pub const SCHEMA_ENCODING: &str = "capnproto";

/// MCAP `Channel.message_encoding` of our topics: messages are Cap'n Proto, unpacked, with the
/// standard stream framing (segment table first).
pub const MESSAGE_ENCODING: &str = "capnproto";

/// Key of the MCAP `Channel.metadata` entry that holds the channel's registry name.
pub const CHANNEL_SCHEMA_KEY: &str = "redline/schema";

/// One registered root type.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SchemaInfo {
    /// Short name our tools show, store in channel metadata and put in zenoh encodings
    /// (`application/capnp;EngineRpm`), e.g. `EngineRpm`.
    pub registry_name: &'static str,
    /// Cap'n Proto qualified name, `<file>:<Type>`, used as MCAP `Schema.name`, e.g.
    /// `engine_rpm.capnp:EngineRpm`. It is the root node's `displayName` in [`Self::descriptor`].
    pub capnp_name: &'static str,
    /// The root struct's 64-bit Cap'n Proto type id (its node id in [`Self::descriptor`]).
    pub type_id: u64,
    /// A serialized `CodeGeneratorRequest` (unpacked, stream framing, one segment) holding only
    /// the nodes this type needs: the root struct, every struct, enum and group its fields reach,
    /// and the enclosing scopes up to the files, with their doc comments. Used as MCAP
    /// `Schema.data`. The bytes are not 8-byte aligned: read them with capnp's `unaligned`
    /// feature (enabled in this workspace) or copy them first.
    pub descriptor: &'static [u8],
}

impl fmt::Debug for SchemaInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaInfo")
            .field("registry_name", &self.registry_name)
            .field("capnp_name", &self.capnp_name)
            .field("type_id", &format_args!("{:#018x}", self.type_id))
            .field("descriptor_len", &self.descriptor.len())
            .finish()
    }
}

macro_rules! schema_info {
    ($registry_name:literal, $capnp_name:literal, $root:path) => {
        SchemaInfo {
            registry_name: $registry_name,
            capnp_name: $capnp_name,
            type_id: <$root as HasTypeId>::TYPE_ID,
            descriptor: include_bytes!(concat!("../descriptors/", $registry_name, ".bin")),
        }
    };
}

/// Every registered root type.
pub const ALL: &[SchemaInfo] = &[
    schema_info!(
        "EngineRpm",
        "engine_rpm.capnp:EngineRpm",
        engine_rpm_capnp::engine_rpm::Reader<'static>
    ),
    schema_info!(
        "WheelSpeeds",
        "wheel_speeds.capnp:WheelSpeeds",
        wheel_speeds_capnp::wheel_speeds::Reader<'static>
    ),
    schema_info!("Imu", "imu.capnp:Imu", imu_capnp::imu::Reader<'static>),
    schema_info!(
        "GnssFix",
        "gnss_fix.capnp:GnssFix",
        gnss_fix_capnp::gnss_fix::Reader<'static>
    ),
    schema_info!(
        "Battery",
        "battery.capnp:Battery",
        battery_capnp::battery::Reader<'static>
    ),
    schema_info!(
        "DriverInputs",
        "driver_inputs.capnp:DriverInputs",
        driver_inputs_capnp::driver_inputs::Reader<'static>
    ),
    schema_info!(
        "DiagnosticLog",
        "diagnostic_log.capnp:DiagnosticLog",
        diagnostic_log_capnp::diagnostic_log::Reader<'static>
    ),
];

/// The root type registered as `registry_name` (e.g. `EngineRpm`), if any. Names are
/// case-sensitive.
pub fn by_name(registry_name: &str) -> Option<&'static SchemaInfo> {
    ALL.iter().find(|info| info.registry_name == registry_name)
}

/// The root type whose Cap'n Proto qualified name (MCAP `Schema.name`) is `capnp_name`, e.g.
/// `engine_rpm.capnp:EngineRpm`, if any.
pub fn by_capnp_name(capnp_name: &str) -> Option<&'static SchemaInfo> {
    ALL.iter().find(|info| info.capnp_name == capnp_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for info in ALL {
            assert_eq!(by_name(info.registry_name), Some(info));
            assert_eq!(by_capnp_name(info.capnp_name), Some(info));
            assert_eq!(ALL.iter().filter(|i| i.type_id == info.type_id).count(), 1);
        }
        assert_eq!(by_name("engineRpm"), None);
        assert_eq!(by_capnp_name("EngineRpm"), None);
    }

    #[test]
    fn capnp_name_ends_with_registry_name() {
        for info in ALL {
            let (file, ty) = info.capnp_name.split_once(':').expect("qualified name");
            assert!(file.ends_with(".capnp"), "{info:?}");
            assert_eq!(ty, info.registry_name);
        }
    }
}
