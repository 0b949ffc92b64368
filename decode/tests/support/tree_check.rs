//! Every numeric leaf a row holds equals the value at the same path in the tree.

use decode::{Plan, Row, Scalar, Value};

/// Checks each present leaf against the tree and returns how many were checked. Time leaves
/// (`stamp` = `stamp.sec * 1e9 + stamp.nanosec`) are checked against their parts.
pub fn leaves_match_tree(plan: &Plan, row: &Row, tree: &Value) -> usize {
    let mut checked = 0;
    for (slot, got) in row.present() {
        let path = &plan.leaves()[slot].path;
        let want = tree
            .at(path)
            .unwrap_or_else(|| panic!("{path} not in tree {tree:?}"));
        let same = match (got, want) {
            (Scalar::Int(a), Value::Int(b)) => a == *b,
            (Scalar::UInt(a), Value::UInt(b)) => a == *b,
            (Scalar::UInt(a), Value::Bool(b)) => a == u64::from(*b),
            (Scalar::UInt(a), Value::Enum { value, .. }) => a == u64::from(*value),
            (Scalar::Float(a), Value::Float(b)) => a == *b || (a.is_nan() && b.is_nan()),
            (Scalar::Int(ns), Value::Struct(f)) => match f.as_slice() {
                [(_, Value::Int(s)), (_, Value::UInt(n))] => ns == s * 1_000_000_000 + *n as i64,
                _ => false,
            },
            (Scalar::UInt(a), Value::Data(d)) => {
                // a byte of a uint8 array: `path` ends in `[i]`
                let i: usize = path
                    .rsplit('[')
                    .next()
                    .and_then(|s| s.strip_suffix(']'))
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(usize::MAX);
                d.get(i).is_some_and(|b| u64::from(*b) == a)
            }
            _ => false,
        };
        assert!(same, "{path}: row {got:?} vs tree {want:?}");
        checked += 1;
    }
    checked
}
