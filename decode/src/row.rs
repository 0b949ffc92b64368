//! The caller-owned buffer one message's numeric leaves are written into.

use crate::value::Scalar;

/// One message's numeric values, one slot per leaf of a [`Plan`](crate::Plan).
///
/// Reuse one `Row` across messages: starting a message is O(1) (a generation counter marks
/// which slots this message wrote), so a leaf the message did not carry reads as absent,
/// never as 0. The row grows only when the plan learns new leaves.
#[derive(Debug, Clone, Default)]
pub struct Row {
    values: Vec<Scalar>,
    stamps: Vec<u32>,
    generation: u32,
    written: Vec<u32>,
}

impl Row {
    /// An empty row.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value of leaf `slot` in the last decoded message, `None` if absent.
    #[inline]
    pub fn get(&self, slot: usize) -> Option<Scalar> {
        match self.stamps.get(slot) {
            Some(&s) if s == self.generation && self.generation != 0 => {
                self.values.get(slot).copied()
            }
            _ => None,
        }
    }

    /// The value of leaf `slot` as `f64`, `None` if absent.
    #[inline]
    pub fn get_f64(&self, slot: usize) -> Option<f64> {
        self.get(slot).map(Scalar::as_f64)
    }

    /// The leaves the last decoded message carried, as `(slot, value)` in decode order.
    pub fn present(&self) -> impl Iterator<Item = (usize, Scalar)> + '_ {
        self.written.iter().filter_map(|&slot| {
            let slot = slot as usize;
            self.values.get(slot).map(|&v| (slot, v))
        })
    }

    /// How many leaves the last decoded message carried.
    pub fn present_count(&self) -> usize {
        self.written.len()
    }

    /// Starts a new message: every slot becomes absent.
    #[inline]
    pub(crate) fn begin(&mut self, leaf_count: usize) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.stamps.iter_mut().for_each(|s| *s = 0);
            self.generation = 1;
        }
        self.written.clear();
        self.ensure(leaf_count);
    }

    #[inline]
    pub(crate) fn ensure(&mut self, leaf_count: usize) {
        if self.values.len() < leaf_count {
            self.values.resize(leaf_count, Scalar::default());
            self.stamps.resize(leaf_count, 0);
        }
    }

    #[inline]
    pub(crate) fn set(&mut self, slot: u32, value: Scalar) {
        let i = slot as usize;
        if let (Some(v), Some(s)) = (self.values.get_mut(i), self.stamps.get_mut(i)) {
            *v = value;
            if *s != self.generation {
                *s = self.generation;
                self.written.push(slot);
            }
        }
    }
}
