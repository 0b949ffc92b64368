//! The committed generated Rust and descriptors are what `schemas/regenerate.sh` would write
//! from the committed `.capnp` files. Needs the `capnp` compiler: without it the test is skipped,
//! except under CI (`CI=true`), which installs it.

#[path = "../examples/regenerate/regen.rs"]
mod regen;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `$CAPNP`, or `capnp` on PATH.
fn find_capnp() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CAPNP") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("capnp"))
        .find(|exe| exe.is_file())
}

/// File name -> contents, for every file in `dir`.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("listing {}: {err}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect()
}

fn assert_same(committed: &Path, fresh: &Path) {
    let (committed_files, fresh_files) = (contents(committed), contents(fresh));
    assert_eq!(
        committed_files.keys().collect::<Vec<_>>(),
        fresh_files.keys().collect::<Vec<_>>(),
        "files in {} differ from a regeneration; run schemas/regenerate.sh and commit",
        committed.display()
    );
    for (name, bytes) in &committed_files {
        assert!(
            fresh_files.get(name) == Some(bytes),
            "{} is stale; run schemas/regenerate.sh and commit",
            committed.join(name).display()
        );
    }
}

#[test]
fn committed_outputs_match_a_regeneration() {
    let Some(capnp) = find_capnp() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "the capnp compiler is not installed, and CI must run this test (apt-get install capnproto)"
        );
        println!("skipped: capnp compiler not installed (apt-get install capnproto)");
        return;
    };
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let committed = regen::Paths::in_crate(crate_dir);
    let out = tempfile::tempdir().unwrap();
    let fresh = regen::Paths {
        capnp_dir: committed.capnp_dir.clone(),
        generated_dir: out.path().join("generated"),
        descriptors_dir: out.path().join("descriptors"),
    };

    let descriptors = regen::regenerate(&capnp, &fresh).expect("regeneration runs");
    for d in &descriptors {
        assert!(d.path.starts_with(&fresh.descriptors_dir));
        assert!(
            d.kept_nodes < d.total_nodes,
            "{}: pruning kept all {} nodes",
            d.capnp_name,
            d.total_nodes
        );
        assert!(
            schemas::by_capnp_name(&d.capnp_name).is_some(),
            "{} is not registered",
            d.capnp_name
        );
    }
    assert_eq!(
        descriptors.len(),
        schemas::ALL.len(),
        "one descriptor per registry entry"
    );

    assert_same(&committed.generated_dir, &fresh.generated_dir);
    assert_same(&committed.descriptors_dir, &fresh.descriptors_dir);
}
