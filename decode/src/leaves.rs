//! The plan's leaf table and the lazily grown tree that maps a message's shape to leaf slots.
//!
//! Slot indices are handed out the first time a leaf is seen and never change, so columns keyed
//! by slot stay valid for the life of a plan. A message walks the tree alongside its own
//! structure; once every shape has been seen, decoding allocates nothing.

use std::collections::HashMap;

use crate::error::DecodeError;
use crate::row::Row;
use crate::value::Scalar;

/// What a numeric leaf holds, so a viewer can format and group it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeafKind {
    /// 0 or 1.
    Bool,
    /// A signed integer.
    Int,
    /// An unsigned integer.
    UInt,
    /// A floating point number.
    Float,
    /// An enum's numeric value (names are in the tree).
    Enum,
    /// A union's discriminant (`$which`; arm names are in the tree).
    Which,
    /// A time as nanoseconds: ROS 2 `builtin_interfaces/Time` (`sec * 1e9 + nanosec`), ROS 1
    /// `time` (`secs * 1e9 + nsecs`), protobuf `google.protobuf.Timestamp`.
    TimeNs,
    /// A ROS 2 `builtin_interfaces/Duration` as nanoseconds.
    DurationNs,
}

/// One numeric leaf of a plan: its stable path and kind. Its slot is its index in
/// [`Plan::leaves`](crate::Plan::leaves).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leaf {
    /// Dotted path, e.g. `header.stamp.sec`, `position[2]`, `u.$which`.
    pub path: String,
    /// What the leaf holds.
    pub kind: LeafKind,
}

/// Bounds on what decoding may create or traverse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most leaves one plan may learn; a message that would add more fails with
    /// [`DecodeError::LimitExceeded`].
    pub max_leaves: usize,
    /// List elements past this index are not flattened into leaves (they are still
    /// validated and skipped, and [`Decoded::clipped`](crate::Decoded::clipped) is set).
    pub max_list_elements: usize,
    /// Deepest nesting of structs and lists followed.
    pub max_depth: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_leaves: 1 << 17,
            max_list_elements: 1024,
            max_depth: 64,
        }
    }
}

#[derive(Debug, Default, Clone)]
pub(crate) struct LeafTable {
    pub(crate) leaves: Vec<Leaf>,
    by_path: HashMap<String, u32>,
}

impl LeafTable {
    pub(crate) fn len(&self) -> usize {
        self.leaves.len()
    }

    pub(crate) fn find(&self, path: &str) -> Option<usize> {
        self.by_path.get(path).map(|&i| i as usize)
    }
}

/// Where one message's values go, and where new leaves are registered.
pub(crate) struct Sink<'a> {
    table: &'a mut LeafTable,
    row: &'a mut Row,
    limits: Limits,
    pub(crate) clipped: bool,
}

impl<'a> Sink<'a> {
    pub(crate) fn new(table: &'a mut LeafTable, row: &'a mut Row, limits: Limits) -> Self {
        Self {
            table,
            row,
            limits,
            clipped: false,
        }
    }

    /// Starts the message over: every leaf written so far becomes absent again.
    pub(crate) fn restart(&mut self) {
        self.row.begin(self.table.len());
    }

    pub(crate) fn max_list_elements(&self) -> usize {
        self.limits.max_list_elements
    }

    #[inline(always)]
    pub(crate) fn put(&mut self, slot: u32, value: Scalar) {
        self.row.set(slot, value);
    }

    #[cold]
    fn new_leaf(&mut self, path: String, kind: LeafKind) -> Result<u32, DecodeError> {
        if let Some(&slot) = self.table.by_path.get(&path) {
            return Ok(slot);
        }
        let max = self.limits.max_leaves;
        if self.table.leaves.len() >= max {
            return Err(DecodeError::limit("leaves per plan", max as u64));
        }
        let slot = u32::try_from(self.table.leaves.len())
            .map_err(|_| DecodeError::limit("leaves per plan", u64::from(u32::MAX)))?;
        self.table.by_path.insert(path.clone(), slot);
        self.table.leaves.push(Leaf { path, kind });
        self.row.ensure(self.table.leaves.len());
        Ok(slot)
    }
}

/// How a child's path is spelled relative to its parent's.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Name<'n> {
    /// `parent.name`
    Field(&'n str),
    /// `parent[i]`
    Index(usize),
    /// The parent's own path (a time's nanoseconds leaf).
    Same,
}

fn child_path(parent: &str, name: Name<'_>) -> String {
    match name {
        Name::Field(n) if parent.is_empty() => n.to_owned(),
        Name::Field(n) => format!("{parent}.{n}"),
        Name::Index(i) => format!("{parent}[{i}]"),
        Name::Same => parent.to_owned(),
    }
}

#[derive(Debug, Default)]
pub(crate) enum Inst {
    #[default]
    Vacant,
    Leaf(u32),
    Branch(Branch),
}

/// One struct, list or object instance seen in messages: its path and its children by index.
#[derive(Debug, Default)]
pub(crate) struct Branch {
    path: Box<str>,
    kids: Vec<Inst>,
    /// Object keys by child index (JSON only).
    pub(crate) keys: Vec<Box<str>>,
    /// Dense slots of a struct's always-present scalar fields (Cap'n Proto), filled once.
    pub(crate) slots: Vec<u32>,
}

impl Branch {
    pub(crate) fn root() -> Self {
        Self::default()
    }

    fn slot_mut(&mut self, idx: usize) -> Option<&mut Inst> {
        if idx >= self.kids.len() {
            self.kids.resize_with(idx + 1, Inst::default);
        }
        self.kids.get_mut(idx)
    }

    pub(crate) fn has_leaf(&self, idx: usize) -> bool {
        matches!(self.kids.get(idx), Some(Inst::Leaf(_)))
    }

    /// The slot of leaf child `idx`, if it has been seen.
    pub(crate) fn leaf_slot(&self, idx: usize) -> Option<u32> {
        match self.kids.get(idx) {
            Some(Inst::Leaf(slot)) => Some(*slot),
            _ => None,
        }
    }

    /// The struct or list child `idx`, if it has been seen.
    pub(crate) fn child(&self, idx: usize) -> Option<&Branch> {
        match self.kids.get(idx) {
            Some(Inst::Branch(b)) => Some(b),
            _ => None,
        }
    }

    pub(crate) fn has_branch(&self, idx: usize) -> bool {
        matches!(self.kids.get(idx), Some(Inst::Branch(_)))
    }

    /// The slot of leaf child `idx`, registering it on first sight.
    #[inline(always)]
    pub(crate) fn leaf(
        &mut self,
        sink: &mut Sink<'_>,
        idx: usize,
        name: Name<'_>,
        kind: LeafKind,
    ) -> Result<u32, DecodeError> {
        if let Some(Inst::Leaf(slot)) = self.kids.get(idx) {
            return Ok(*slot);
        }
        self.leaf_slow(sink, idx, name, kind)
    }

    #[cold]
    fn leaf_slow(
        &mut self,
        sink: &mut Sink<'_>,
        idx: usize,
        name: Name<'_>,
        kind: LeafKind,
    ) -> Result<u32, DecodeError> {
        let slot = sink.new_leaf(child_path(&self.path, name), kind)?;
        if let Some(inst) = self.slot_mut(idx) {
            *inst = Inst::Leaf(slot);
        }
        Ok(slot)
    }

    /// Writes `value` to leaf child `idx`.
    #[inline(always)]
    pub(crate) fn put(
        &mut self,
        sink: &mut Sink<'_>,
        idx: usize,
        name: Name<'_>,
        kind: LeafKind,
        value: Scalar,
    ) -> Result<(), DecodeError> {
        let slot = self.leaf(sink, idx, name, kind)?;
        sink.put(slot, value);
        Ok(())
    }

    /// The struct or list child `idx`, created on first sight.
    #[inline]
    pub(crate) fn branch(
        &mut self,
        idx: usize,
        name: Name<'_>,
    ) -> Result<&mut Branch, DecodeError> {
        self.branch_with(idx, || name)
    }

    /// [`Branch::branch`], spelling the child's name only on first sight.
    #[inline(always)]
    pub(crate) fn branch_with<'n>(
        &mut self,
        idx: usize,
        name: impl FnOnce() -> Name<'n>,
    ) -> Result<&mut Branch, DecodeError> {
        if matches!(self.kids.get(idx), Some(Inst::Branch(_))) {
            return match self.kids.get_mut(idx) {
                Some(Inst::Branch(b)) => Ok(b),
                _ => Err(DecodeError::limit("children per node", idx as u64)),
            };
        }
        self.branch_slow(idx, name())
    }

    #[cold]
    fn branch_slow(&mut self, idx: usize, name: Name<'_>) -> Result<&mut Branch, DecodeError> {
        let path = &self.path;
        if idx >= self.kids.len() {
            self.kids.resize_with(idx + 1, Inst::default);
        }
        let Some(inst) = self.kids.get_mut(idx) else {
            return Err(DecodeError::limit("children per node", idx as u64));
        };
        if !matches!(inst, Inst::Branch(_)) {
            *inst = Inst::Branch(Branch {
                path: child_path(path, name).into_boxed_str(),
                kids: Vec::new(),
                keys: Vec::new(),
                slots: Vec::new(),
            });
        }
        match inst {
            Inst::Branch(b) => Ok(b),
            _ => Err(DecodeError::limit("children per node", idx as u64)),
        }
    }
}
