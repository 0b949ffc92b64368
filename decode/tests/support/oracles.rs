//! Locating `../shared/oracles` (beside the workspace) for oracle tests.

use std::path::PathBuf;

/// The oracle folder `sub`, or `None` (with a printed note) when the oracles are not present.
/// Under `CI=true` a missing folder is a failure, not a skip.
pub fn oracle_dir(sub: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/oracles")
        .join(sub);
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "oracle folder {} is missing (required under CI=true)",
            dir.display()
        );
    }
    eprintln!("skipping: oracle folder {} not found", dir.display());
    None
}
