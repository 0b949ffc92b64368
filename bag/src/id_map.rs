//! [`IdMap`]: a foreign file's numeric ids (rosbag2's `topics.id`, ROS 1 connection ids) to
//! part-local channel ids, looked up once per message.

use std::collections::HashMap;

/// Id -> part-local channel id: a flat table for the small ids writers give (0, 1, 2, ...),
/// a map for any other, so that the lookup per message costs an index, not a hash.
#[derive(Debug, Default, Clone)]
pub(crate) struct IdMap {
    flat: Vec<Option<u16>>,
    other: HashMap<i64, u16>,
}

impl IdMap {
    /// Ids below this are in the flat table (at most 128 KiB of it).
    const FLAT: i64 = 1 << 16;

    /// Maps `id` to `local`.
    pub(crate) fn insert(&mut self, id: i64, local: u16) {
        match usize::try_from(id) {
            Ok(i) if id < Self::FLAT => {
                if self.flat.len() <= i {
                    self.flat.resize(i + 1, None);
                }
                if let Some(slot) = self.flat.get_mut(i) {
                    *slot = Some(local);
                }
            }
            _ => {
                self.other.insert(id, local);
            }
        }
    }

    /// What `id` maps to.
    #[inline]
    pub(crate) fn get(&self, id: i64) -> Option<u16> {
        match usize::try_from(id) {
            Ok(i) if id < Self::FLAT => self.flat.get(i).copied().flatten(),
            _ => self.other.get(&id).copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::IdMap;

    #[test]
    fn ids_inside_and_outside_the_flat_table_are_found() {
        let mut ids = IdMap::default();
        for (id, local) in [(1, 0), (100_000, 1), (-5, 2), (i64::MAX, 3), (0, 4)] {
            ids.insert(id, local);
        }
        for (id, local) in [(1, 0), (100_000, 1), (-5, 2), (i64::MAX, 3), (0, 4)] {
            assert_eq!(ids.get(id), Some(local), "{id}");
        }
        assert_eq!(ids.get(2), None);
        assert_eq!(ids.get(65_535), None);
        assert_eq!(ids.get(-1), None);
    }
}
