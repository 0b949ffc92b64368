//! Where things are in a bag directory: what the parts are called and in which order they come.
//!
//! One rule orders parts for everyone who lists a directory (the reader, `bag verify`): by the
//! number a part's name ends with, so `run2` comes before `run10` and `drive_9` before
//! `drive_10`. The writer names its parts so that this order is the order it wrote them in.

use std::path::Path;

use crate::error::{BagError, Result};

/// The file name of part `index` of a bag named `bag_name`: `drive_0.mcap`, `drive_1.mcap`, ...
pub(crate) fn part_file_name(bag_name: &str, index: usize) -> String {
    format!("{bag_name}_{index}.mcap")
}

/// Sort key of a part file name: the name without `.mcap` and its trailing digits, then the
/// number those digits make (0 when there are none), then the whole name to break ties
/// (`run01` and `run1`).
pub(crate) fn part_sort_key(name: &str) -> (String, u64, String) {
    let stem = name.strip_suffix(".mcap").unwrap_or(name);
    let prefix = stem.trim_end_matches(|c: char| c.is_ascii_digit());
    let digits = stem.get(prefix.len()..).unwrap_or("");
    let number = if digits.is_empty() {
        0
    } else {
        // More digits than a u64 holds: after every number that fits.
        digits.parse().unwrap_or(u64::MAX)
    };
    (prefix.to_string(), number, name.to_string())
}

/// The `*.mcap` files in `dir`, in part order.
pub(crate) fn discover_parts(dir: &Path) -> Result<Vec<String>> {
    let entries = std::fs::read_dir(dir).map_err(|e| BagError::io("listing", dir, e))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".mcap"))
        .collect();
    names.sort_by_cached_key(|n| part_sort_key(n));
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(names: &[&str]) -> Vec<String> {
        let mut names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        names.sort_by_cached_key(|n| part_sort_key(n));
        names
    }

    #[test]
    fn parts_sort_numerically_with_or_without_an_underscore() {
        assert_eq!(
            sorted(&["b_10.mcap", "b_2.mcap", "b_0.mcap", "a.mcap"]),
            ["a.mcap", "b_0.mcap", "b_2.mcap", "b_10.mcap"]
        );
        assert_eq!(
            sorted(&["run10.mcap", "run2.mcap", "run1.mcap", "run.mcap"]),
            ["run.mcap", "run1.mcap", "run2.mcap", "run10.mcap"]
        );
        assert_eq!(
            sorted(&["r_99999999999999999999.mcap", "r_1.mcap", "r_01.mcap"]),
            ["r_01.mcap", "r_1.mcap", "r_99999999999999999999.mcap"]
        );
    }

    #[test]
    fn the_writers_names_sort_in_the_order_it_wrote_them() {
        let names: Vec<String> = (0..12).map(|i| part_file_name("drive", i)).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(sorted(&names), names);
    }
}
