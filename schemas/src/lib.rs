//! Redline's telemetry schemas: the Cap'n Proto types our vehicles publish, the Rust code
//! generated from them, and a registry that maps each type's short registry name to what a
//! recording needs to describe it.
//!
//! A recorded channel carries the registry name in its metadata ([`CHANNEL_SCHEMA_KEY`]); its
//! MCAP Schema record carries the capnp qualified name ([`SchemaInfo::capnp_name`]) and the
//! [`SchemaInfo::descriptor`]: a `CodeGeneratorRequest` holding only the nodes that type needs,
//! from which a reader can decode the messages without generated code.
//!
//! [`sample`] says what the simulated vehicle's messages carry at any moment, [`vehicle`] which
//! topics it publishes and how often; the live simulator and the scope's demo recording both
//! take them from here.
//!
//! The `.capnp` sources are in `schemas/capnp/`. The generated Rust (`src/generated/`) and the
//! descriptors (`descriptors/`) are committed, so building this crate needs no Cap'n Proto
//! compiler; after editing a schema, run `schemas/regenerate.sh` and commit what it writes.
//!
//! ```
//! use schemas::engine_rpm_capnp::engine_rpm;
//!
//! let info = schemas::by_name("EngineRpm").expect("EngineRpm is registered");
//! assert_eq!(info.capnp_name, "engine_rpm.capnp:EngineRpm");
//!
//! // One message of the simulated drive, 12.5 s in, decoded with the generated reader.
//! let bytes = schemas::sample::encode("EngineRpm", 12.5, 7)?;
//! let message = capnp::serialize::read_message_from_flat_slice(
//!     &mut bytes.as_slice(),
//!     capnp::message::ReaderOptions::new(),
//! )?;
//! let reading = message.get_root::<engine_rpm::Reader>()?;
//! assert_eq!(reading.get_header()?.get_seq(), 7);
//! assert!(reading.get_rpm() >= 800.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod registry;
pub mod sample;
pub mod vehicle;

pub use error::Error;
pub use registry::{
    ALL, CHANNEL_SCHEMA_KEY, MESSAGE_ENCODING, SCHEMA_ENCODING, SchemaInfo, by_capnp_name, by_name,
};

// The generated modules keep capnpc's output byte for byte (the regeneration test compares it),
// so they are `include!`d, which rustfmt does not follow, and exempt from lints.
macro_rules! generated_module {
    ($(#[$doc:meta])* $name:ident, $file:literal) => {
        $(#[$doc])*
        #[allow(clippy::all, clippy::pedantic, unused, missing_docs)]
        pub mod $name {
            include!(concat!("generated/", $file));
        }
    };
}

generated_module!(
    /// Generated from `common.capnp`: `Header`, `Vector3`, `Quaternion`, shared by the root types.
    common_capnp,
    "common_capnp.rs"
);
generated_module!(
    /// Generated from `engine_rpm.capnp`: the `EngineRpm` root type.
    engine_rpm_capnp,
    "engine_rpm_capnp.rs"
);
generated_module!(
    /// Generated from `wheel_speeds.capnp`: the `WheelSpeeds` root type.
    wheel_speeds_capnp,
    "wheel_speeds_capnp.rs"
);
generated_module!(
    /// Generated from `imu.capnp`: the `Imu` root type.
    imu_capnp,
    "imu_capnp.rs"
);
generated_module!(
    /// Generated from `gnss_fix.capnp`: the `GnssFix` root type and its `FixType` enum.
    gnss_fix_capnp,
    "gnss_fix_capnp.rs"
);
generated_module!(
    /// Generated from `battery.capnp`: the `Battery` root type.
    battery_capnp,
    "battery_capnp.rs"
);
generated_module!(
    /// Generated from `driver_inputs.capnp`: the `DriverInputs` root type, its `Gear` enum and
    /// `mode` union.
    driver_inputs_capnp,
    "driver_inputs_capnp.rs"
);
generated_module!(
    /// Generated from `diagnostic_log.capnp`: the `DiagnosticLog` root type and its `Severity`
    /// enum.
    diagnostic_log_capnp,
    "diagnostic_log_capnp.rs"
);
