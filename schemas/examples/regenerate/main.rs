//! Regenerates `schemas/src/generated/` and `schemas/descriptors/` from `schemas/capnp/`.
//!
//! Run it through `schemas/regenerate.sh` (or `cargo run -p schemas --example regenerate`); it
//! needs the Cap'n Proto compiler (`apt-get install capnproto`), found as `$CAPNP` or `capnp` on
//! PATH. Commit what it writes: normal builds use the committed files and never run the compiler.

mod regen;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let capnp = std::env::var_os("CAPNP").map_or_else(|| PathBuf::from("capnp"), PathBuf::from);
    let paths = regen::Paths::in_crate(Path::new(env!("CARGO_MANIFEST_DIR")));
    match regen::regenerate(&capnp, &paths) {
        Ok(descriptors) => {
            println!("generated Rust in {}", paths.generated_dir.display());
            for d in descriptors {
                println!(
                    "{}: {} of {} nodes -> {}",
                    d.capnp_name,
                    d.kept_nodes,
                    d.total_nodes,
                    d.path.display()
                );
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("regenerate: {err:#}");
            ExitCode::FAILURE
        }
    }
}
