//! ROS 1 messages (`ros1` message encoding, `ros1msg` schemas): little endian, packed (no
//! alignment), strings and sequences prefixed by a uint32 length, no encapsulation header.
//!
//! The `.msg` grammar is ROS 2's ([`crate::ros2msg`] parses both, with ROS 1's builtins: `time`
//! as uint32 `secs` + `nsecs` yielding also the time in nanoseconds, `duration` as int32 parts
//! only, `byte` signed, `char` unsigned, `Header` = `std_msgs/Header` with `seq`), and the walk
//! is the CDR one ([`crate::cdr`]) without CDR's alignment and terminators.

use crate::cdr::{Cur, MAX_TREE_VALUES, Order};
use crate::error::DecodeError;
use crate::leaves::{Branch, Limits, Sink};
use crate::ros2msg::{Dialect, MsgSet};
use crate::value::Value;

/// ROS 1 serialization: little endian, no alignment.
pub(crate) struct Ros1;

impl Order for Ros1 {
    const CDR: bool = false;
    #[inline]
    fn u16(b: [u8; 2]) -> u16 {
        u16::from_le_bytes(b)
    }
    #[inline]
    fn u32(b: [u8; 4]) -> u32 {
        u32::from_le_bytes(b)
    }
    #[inline]
    fn u64(b: [u8; 8]) -> u64 {
        u64::from_le_bytes(b)
    }
}

/// Parses `ros1msg` text (the main definition, then `===` lines and `MSG: pkg/Type` sections).
pub(crate) fn parse(schema_name: &str, text: &str) -> Result<MsgSet, DecodeError> {
    crate::ros2msg::parse_in(schema_name, text, Dialect::Ros1)
}

/// The message must end where its last field ends: trailing bytes mean the schema does not
/// describe the payload, and values read with the wrong schema are not shown.
fn check_end(cur: &Cur<'_>, len: usize) -> Result<(), DecodeError> {
    if cur.remaining() != 0 {
        return Err(DecodeError::corrupt(format!(
            "ROS 1 message is {len} bytes but its schema ends at offset {}",
            len - cur.remaining()
        )));
    }
    Ok(())
}

impl MsgSet {
    /// Decodes one ROS 1 message's leaves.
    pub(crate) fn decode_ros1(
        &self,
        bytes: &[u8],
        root: &mut Branch,
        sink: &mut Sink<'_>,
        limits: &Limits,
    ) -> Result<(), DecodeError> {
        let mut cur = Cur::new(bytes, 0);
        self.walk::<Ros1>(self.root, &mut cur, root, sink, limits, 0, true)?;
        check_end(&cur, bytes.len())
    }

    /// Decodes one ROS 1 message as a tree.
    pub(crate) fn tree_ros1(&self, bytes: &[u8], limits: &Limits) -> Result<Value, DecodeError> {
        let mut cur = Cur::new(bytes, 0);
        let mut budget = MAX_TREE_VALUES;
        let v = self.tree_struct::<Ros1>(self.root, &mut cur, limits, 0, &mut budget, true)?;
        check_end(&cur, bytes.len())?;
        Ok(v)
    }
}
