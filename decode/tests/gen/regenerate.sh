#!/usr/bin/env bash
# Regenerates decode's Cap'n Proto test artifacts from fixtures/telemetry.capnp:
#   fixtures/telemetry.cgr    the raw CodeGeneratorRequest (what an MCAP `capnproto` schema holds)
#   gen/telemetry_capnp.rs    capnpc-rust generated code (the benchmark baseline and message builder)
# and fixtures/capnp-test.cgr from the oracle's test.capnp.
# Needs the `capnp` compiler (Debian package `capnproto`) and cargo with capnpc 0.27 available.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src"
cat > "$work/Cargo.toml" <<'TOML'
[package]
name = "capgen"
version = "0.1.0"
edition = "2021"
[dependencies]
capnpc = "0.27"
[workspace]
TOML
cat > "$work/src/main.rs" <<'RS'
fn main() {
    let a: Vec<String> = std::env::args().collect();
    capnpc::CompilerCommand::new()
        .src_prefix(&a[1])
        .file(&a[2])
        .output_path(&a[3])
        .raw_code_generator_request_path(&a[4])
        .run()
        .expect("capnpc");
}
RS
cargo build -q --manifest-path "$work/Cargo.toml"
cd "$here"
"$work/target/debug/capgen" fixtures fixtures/telemetry.capnp gen fixtures/telemetry.cgr
oracle="$here/../../../shared/oracles/capnproto/capnp-v0.9.2"
(cd "$oracle" && capnp compile -o- -I. capnp/test.capnp) > fixtures/capnp-test.cgr
