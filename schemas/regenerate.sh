#!/usr/bin/env bash
# Regenerates the committed outputs of the `schemas` crate from capnp/*.capnp:
#   src/generated/<stem>_capnp.rs   Rust from capnpc
#   descriptors/<RootType>.bin      CodeGeneratorRequest pruned to one root type (MCAP Schema.data)
# Run it after editing a schema, then commit the schema and everything it rewrote. The
# `regenerate` test (cargo test -p schemas) fails while the committed files are stale.
# Needs the Cap'n Proto compiler: `apt-get install capnproto` (or set CAPNP=/path/to/capnp).
set -euo pipefail
cd "$(dirname "$0")/.."

capnp=${CAPNP:-capnp}
if ! command -v "$capnp" >/dev/null 2>&1; then
  echo "regenerate.sh: the Cap'n Proto compiler ($capnp) is not installed; try: apt-get install capnproto" >&2
  exit 1
fi
echo "using $("$capnp" --version)"
CAPNP=$capnp exec cargo run --quiet -p schemas --example regenerate
