//! The caller-owned buffer one message's numeric leaves are written into.

use crate::value::Scalar;

/// Where a plan's shortcut puts one message's leaves, slot by slot: a [`Row`], or a caller's
/// own columns (see [`Plan::decode_shortcut`](crate::Plan::decode_shortcut)). Each slot is
/// put at most once per message; a slot not put is a leaf the message does not carry.
pub trait LeafSink {
    /// Leaf `slot` of this message is `value`.
    fn put(&mut self, slot: u32, value: Scalar);
}

impl LeafSink for Row {
    #[inline(always)]
    fn put(&mut self, slot: u32, value: Scalar) {
        self.set(slot, value);
    }
}

/// One message's numeric values, one slot per leaf of a [`Plan`](crate::Plan).
///
/// Reuse one `Row` across messages: starting a message is O(1) (a generation counter marks
/// which slots this message wrote), so a leaf the message did not carry reads as absent,
/// never as 0. The row grows only when the plan learns new leaves.
#[derive(Debug, Clone, Default)]
pub struct Row {
    cells: Vec<Cell>,
    generation: u32,
}

/// One slot: its last value and the generation (message) that wrote it.
#[derive(Debug, Clone, Copy, Default)]
struct Cell {
    value: Scalar,
    stamp: u32,
}

impl Row {
    /// An empty row.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value of leaf `slot` in the last decoded message, `None` if absent.
    #[inline]
    pub fn get(&self, slot: usize) -> Option<Scalar> {
        match self.cells.get(slot) {
            Some(c) if c.stamp == self.generation && self.generation != 0 => Some(c.value),
            _ => None,
        }
    }

    /// The value of leaf `slot` as `f64`, `None` if absent.
    #[inline]
    pub fn get_f64(&self, slot: usize) -> Option<f64> {
        self.get(slot).map(Scalar::as_f64)
    }

    /// Every slot's value in the last decoded message as `f64`, NaN where absent, in slot
    /// order: the cheap way to copy a row into per-leaf columns.
    #[inline]
    pub fn values_f64(&self) -> impl Iterator<Item = f64> + '_ {
        let generation = self.generation;
        self.cells.iter().map(move |c| {
            if c.stamp == generation && generation != 0 {
                c.value.as_f64()
            } else {
                f64::NAN
            }
        })
    }

    /// The leaves the last decoded message carried, as `(slot, value)` in slot order.
    pub fn present(&self) -> impl Iterator<Item = (usize, Scalar)> + '_ {
        let generation = self.generation;
        self.cells
            .iter()
            .enumerate()
            .filter(move |(_, c)| c.stamp == generation && generation != 0)
            .map(|(slot, c)| (slot, c.value))
    }

    /// How many leaves the last decoded message carried.
    pub fn present_count(&self) -> usize {
        self.present().count()
    }

    /// Starts a new message: every slot becomes absent.
    #[inline]
    pub(crate) fn begin(&mut self, leaf_count: usize) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.cells.iter_mut().for_each(|c| c.stamp = 0);
            self.generation = 1;
        }
        self.ensure(leaf_count);
    }

    #[inline]
    pub(crate) fn ensure(&mut self, leaf_count: usize) {
        if self.cells.len() < leaf_count {
            self.cells.resize(leaf_count, Cell::default());
        }
    }

    #[inline(always)]
    pub(crate) fn set(&mut self, slot: u32, value: Scalar) {
        if let Some(c) = self.cells.get_mut(slot as usize) {
            c.value = value;
            c.stamp = self.generation;
        }
    }
}
