//! The ROS 2 message definitions this build carries, for recordings that name a type without
//! defining it.
//!
//! rosbag2's SQLite storage wrote no `message_definitions` table before Iron (schema version 4),
//! so a `.db3` file recorded with Foxy, Galactic or Humble, most archived ROS 2 bags, names each
//! topic's type (`sensor_msgs/msg/Imu`) and nothing more; ROS tools decode such bags with the
//! definitions installed beside them. Here the standard ones are built in: every message type of
//! ROS 2 Humble's core packages (`std_msgs`, `geometry_msgs`, `sensor_msgs`, `nav_msgs`,
//! `builtin_interfaces`, `rcl_interfaces`, `tf2_msgs`, `diagnostic_msgs`, `visualization_msgs`,
//! and the rest of rosbags' Humble type store; Apache-2.0), generated into
//! `standard_types/humble.msg` by `standard_types/generate.py`.
//!
//! They are used only where a recording's text lacks a type: its own definitions always win.
//! Three types changed layout between Foxy and Humble (`visualization_msgs/Marker`,
//! `shape_msgs/SolidPrimitive`, `rcl_interfaces/ParameterDescriptor`); a Foxy bag of those
//! decodes wrongly or not at all, which is why a plan says which types it took from here
//! ([`crate::Plan::standard_types`]).

use std::collections::HashMap;
use std::sync::OnceLock;

/// Which definitions are built in, as shown to users.
pub const STANDARD_TYPES_SOURCE: &str = "ROS 2 Humble";

const HUMBLE: &str = include_str!("standard_types/humble.msg");

/// The own definition text (without its dependencies) of the standard type `name`, spelled
/// `pkg/Type` (as `ros2msg::normalize` spells names); `None` when it is not one.
pub(crate) fn definition(name: &str) -> Option<&'static str> {
    static TYPES: OnceLock<HashMap<String, &'static str>> = OnceLock::new();
    TYPES.get_or_init(index).get(name).copied()
}

/// `humble.msg` split at its `===` lines into `MSG: pkg/msg/Type` sections, by `pkg/Type`
/// (every type in it is a message, so the middle is always `/msg/`).
fn index() -> HashMap<String, &'static str> {
    let mut types = HashMap::new();
    let separator = format!("\n{}\n", "=".repeat(80));
    for section in HUMBLE.split(separator.as_str()) {
        let Some(rest) = section.strip_prefix("MSG: ") else {
            continue;
        };
        let (name, text) = rest.split_once('\n').unwrap_or((rest, ""));
        types.insert(name.trim().replacen("/msg/", "/", 1), text.trim_end());
    }
    types
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_standard_type_is_found_by_its_name() {
        let types = index();
        assert_eq!(types.len(), 150, "sections in humble.msg");
        assert!(types.keys().all(|k| k.split('/').count() == 2), "{types:?}");
        assert_eq!(
            definition("builtin_interfaces/Time"),
            Some("int32 sec\nuint32 nanosec")
        );
        assert_eq!(definition("std_msgs/Empty"), Some(""));
        assert!(definition("sensor_msgs/Imu").is_some_and(|t| t.contains("std_msgs/Header")));
        assert_eq!(definition("sensor_msgs/NoSuchType"), None);
        assert_eq!(definition("Imu"), None);
    }

    /// Each standard type's complete text (with the types it uses) compiles on its own, with
    /// nothing taken from the built-in set, and decodes as the built-in fallback does.
    #[test]
    fn every_standard_definition_is_complete() {
        for name in index().keys() {
            let text = crate::standard_definition(name).expect(name);
            let plan = crate::compile(&crate::SchemaSource {
                message_encoding: "cdr",
                schema_encoding: "ros2msg",
                schema_name: name,
                schema_data: text.as_bytes(),
            })
            .unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
            assert!(
                plan.standard_types().is_empty(),
                "{name}: {:?}",
                plan.standard_types()
            );
        }
        let imu = crate::standard_definition("sensor_msgs/msg/Imu").unwrap();
        for used in [
            "std_msgs/Header",
            "builtin_interfaces/Time",
            "geometry_msgs/Quaternion",
        ] {
            assert_eq!(
                imu.matches(&format!("\nMSG: {used}\n")).count(),
                1,
                "{used}\n{imu}"
            );
        }
        assert_eq!(crate::standard_definition("my_msgs/msg/Motor"), None);
    }
}
