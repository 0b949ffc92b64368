//! Regeneration of the committed outputs of the `schemas` crate.
//!
//! Shared by the `regenerate` example (which writes into the crate) and the regeneration test
//! (which writes into a temporary directory and compares), so both run exactly the same steps:
//!
//! 1. `capnp compile` every `*.capnp` file of the schema folder into one CodeGeneratorRequest;
//! 2. capnpc turns that request into `<stem>_capnp.rs` files in the generated folder;
//! 3. for every root type, the request is pruned to the nodes the type needs and written as
//!    `<RootType>.bin` into the descriptor folder.
//!
//! A file's root type is the top-level struct named after the file (`engine_rpm.capnp` ->
//! `EngineRpm`); a file without one (`common.capnp`) only provides shared types.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail, ensure};
use capnp::message::{self, ReaderOptions};
use capnp::schema_capnp::{code_generator_request, field, node, type_};
use capnp::serialize;

/// Where the inputs live and where the outputs go.
pub struct Paths {
    /// Folder of the `.capnp` files; it is also the `--src-prefix`, so names read `x.capnp:Type`.
    pub capnp_dir: PathBuf,
    /// Folder for the generated Rust (`<stem>_capnp.rs`).
    pub generated_dir: PathBuf,
    /// Folder for the pruned descriptors (`<RootType>.bin`).
    pub descriptors_dir: PathBuf,
}

impl Paths {
    /// The committed locations inside the crate at `crate_dir`.
    pub fn in_crate(crate_dir: &Path) -> Self {
        Self {
            capnp_dir: crate_dir.join("capnp"),
            generated_dir: crate_dir.join("src").join("generated"),
            descriptors_dir: crate_dir.join("descriptors"),
        }
    }
}

/// One written descriptor.
pub struct Descriptor {
    /// The root type's qualified name, e.g. `engine_rpm.capnp:EngineRpm`.
    pub capnp_name: String,
    /// The file written.
    pub path: PathBuf,
    /// Nodes kept out of the nodes in the whole request.
    pub kept_nodes: usize,
    /// Nodes in the whole request.
    pub total_nodes: usize,
}

/// Runs the whole regeneration with the `capnp` executable `capnp_exe`, replacing every
/// generated file and descriptor in `paths`. Returns the descriptors it wrote.
pub fn regenerate(capnp_exe: &Path, paths: &Paths) -> Result<Vec<Descriptor>> {
    let request_bytes = compile(capnp_exe, &paths.capnp_dir)?;

    replace_dir_contents(&paths.generated_dir, "_capnp.rs")?;
    replace_dir_contents(&paths.descriptors_dir, ".bin")?;

    capnpc::codegen::CodeGenerationCommand::new()
        .output_directory(&paths.generated_dir)
        .run(request_bytes.as_slice())
        .context("generating Rust code")?;

    let message = serialize::read_message_from_flat_slice(
        &mut request_bytes.as_slice(),
        ReaderOptions::new(),
    )?;
    let request = message.get_root::<code_generator_request::Reader>()?;
    let nodes = node_map(request)?;

    let mut written = Vec::new();
    for file in request.get_requested_files()? {
        let filename = file.get_filename()?.to_str()?;
        let Some(root) = root_type(&nodes, file.get_id(), filename)? else {
            continue;
        };
        let capnp_name = root.get_display_name()?.to_str()?.to_owned();
        let struct_name = capnp_name
            .get(root.get_display_name_prefix_length() as usize..)
            .context("display name shorter than its prefix")?;
        let (bytes, kept_nodes) = prune(request, root.get_id())?;
        let path = paths.descriptors_dir.join(format!("{struct_name}.bin"));
        fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        written.push(Descriptor {
            capnp_name,
            path,
            kept_nodes,
            total_nodes: nodes.len(),
        });
    }
    Ok(written)
}

/// Runs `capnp compile -o-` on every `.capnp` file in `capnp_dir` and returns the
/// CodeGeneratorRequest it prints. The compiler runs inside `capnp_dir` with bare file names and
/// no standard imports, so the request does not depend on where the repository is checked out.
fn compile(capnp_exe: &Path, capnp_dir: &Path) -> Result<Vec<u8>> {
    let mut files = Vec::new();
    for entry in
        fs::read_dir(capnp_dir).with_context(|| format!("listing {}", capnp_dir.display()))?
    {
        let name = entry?.file_name();
        if Path::new(&name)
            .extension()
            .is_some_and(|ext| ext == "capnp")
        {
            files.push(name);
        }
    }
    files.sort();
    ensure!(
        !files.is_empty(),
        "no .capnp files in {}",
        capnp_dir.display()
    );

    let output = Command::new(capnp_exe)
        .current_dir(capnp_dir)
        // capnp warns when PWD disagrees with the working directory it was started in.
        .env_remove("PWD")
        .args(["compile", "-o-", "--no-standard-import", "--src-prefix=."])
        .args(&files)
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running {}", capnp_exe.display()))?;
    ensure!(
        output.status.success(),
        "capnp compile failed: {}",
        output.status
    );
    Ok(output.stdout)
}

/// Creates `dir` if needed and deletes the files in it whose names end in `suffix`, so that a
/// schema file that was removed leaves no stale output behind.
fn replace_dir_contents(dir: &Path, suffix: &str) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.to_str().is_some_and(|p| p.ends_with(suffix)) {
            fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    Ok(())
}

fn node_map(request: code_generator_request::Reader<'_>) -> Result<HashMap<u64, node::Reader<'_>>> {
    Ok(request
        .get_nodes()?
        .iter()
        .map(|n| (n.get_id(), n))
        .collect())
}

/// The top-level struct of file `file_id` named after the file (`gnss_fix.capnp` -> `GnssFix`).
fn root_type<'a>(
    nodes: &HashMap<u64, node::Reader<'a>>,
    file_id: u64,
    filename: &str,
) -> Result<Option<node::Reader<'a>>> {
    let stem = filename.strip_suffix(".capnp").unwrap_or(filename);
    let wanted: String = stem
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect::<String>()
            })
        })
        .collect();
    let file = nodes.get(&file_id).context("requested file has no node")?;
    for nested in file.get_nested_nodes()? {
        if nested.get_name()?.to_str()? != wanted {
            continue;
        }
        let node = nodes.get(&nested.get_id()).context("nested node missing")?;
        ensure!(
            matches!(node.which()?, node::Struct(_)),
            "{filename}: {wanted} must be a struct to be a root type"
        );
        return Ok(Some(*node));
    }
    Ok(None)
}

/// The ids of the nodes `root_id` needs: the types reachable through its fields (structs, enums,
/// groups, list elements, transitively) and the scopes enclosing each of them up to their file,
/// so that every `scopeId` and display name resolves inside the descriptor.
pub fn closure(nodes: &HashMap<u64, node::Reader<'_>>, root_id: u64) -> Result<BTreeSet<u64>> {
    let mut keep = BTreeSet::new();
    let mut pending = vec![root_id];
    while let Some(id) = pending.pop() {
        if !keep.insert(id) {
            continue;
        }
        let node = nodes
            .get(&id)
            .with_context(|| format!("node {id:#x} is not in the request"))?;
        let name = node.get_display_name()?.to_str()?;
        // Annotations and generics would reference nodes (or brand bindings) this walk does not
        // follow; none of our schemas need them, so refuse rather than write a dangling descriptor.
        ensure!(
            !node.get_is_generic(),
            "{name}: generic types are not supported"
        );
        ensure!(
            node.get_annotations()?.is_empty(),
            "{name}: annotations are not supported"
        );
        if node.get_scope_id() != 0 {
            pending.push(node.get_scope_id());
        }
        match node.which()? {
            node::File(()) | node::Enum(_) => {}
            node::Struct(st) => {
                for f in st.get_fields()? {
                    ensure!(
                        f.get_annotations()?.is_empty(),
                        "{name}: annotations are not supported"
                    );
                    match f.which()? {
                        field::Slot(slot) => push_type(slot.get_type()?, &mut pending, name)?,
                        field::Group(group) => pending.push(group.get_type_id()),
                    }
                }
            }
            node::Interface(_) | node::Const(_) | node::Annotation(_) => {
                bail!("{name}: interfaces, constants and annotations are not telemetry types")
            }
        }
    }
    Ok(keep)
}

fn push_type(ty: type_::Reader<'_>, pending: &mut Vec<u64>, owner: &str) -> Result<()> {
    match ty.which()? {
        type_::Struct(st) => pending.push(st.get_type_id()),
        type_::Enum(en) => pending.push(en.get_type_id()),
        type_::List(list) => push_type(list.get_element_type()?, pending, owner)?,
        type_::Interface(_) | type_::AnyPointer(_) => {
            bail!("{owner}: interface and AnyPointer fields cannot be decoded from a recording")
        }
        _ => {}
    }
    Ok(())
}

/// Copies `request` keeping only [`closure`]`(root_id)`: the nodes in their original order with
/// `nestedNodes` trimmed to kept nodes, their source info (doc comments), and one requested file
/// (the root's) whose imports are trimmed likewise. Returns the single-segment message in stream
/// framing and the number of nodes kept.
pub fn prune(
    request: code_generator_request::Reader<'_>,
    root_id: u64,
) -> Result<(Vec<u8>, usize)> {
    let nodes = node_map(request)?;
    let keep = closure(&nodes, root_id)?;
    let mut file_id = root_id;
    while let Some(node) = nodes.get(&file_id).filter(|n| n.get_scope_id() != 0) {
        file_id = node.get_scope_id();
    }

    let mut builder = message::Builder::new_default();
    let mut out = builder.init_root::<code_generator_request::Builder>();
    out.set_capnp_version(request.get_capnp_version()?)?;

    let kept: Vec<_> = request
        .get_nodes()?
        .iter()
        .filter(|n| keep.contains(&n.get_id()))
        .collect();
    let mut out_nodes = out.reborrow().init_nodes(len_u32(kept.len())?);
    for (i, node) in kept.iter().enumerate() {
        let i = len_u32(i)?;
        out_nodes.set_with_caveats(i, *node)?;
        let nested: Vec<_> = node
            .get_nested_nodes()?
            .iter()
            .filter(|n| keep.contains(&n.get_id()))
            .collect();
        if len_u32(nested.len())? != node.get_nested_nodes()?.len() {
            // Re-initialising orphans the copied list; the final copy below leaves it behind.
            let mut list = out_nodes
                .reborrow()
                .get(i)
                .init_nested_nodes(len_u32(nested.len())?);
            for (j, n) in nested.into_iter().enumerate() {
                list.set_with_caveats(len_u32(j)?, n)?;
            }
        }
    }

    let sources: Vec<_> = request
        .get_source_info()?
        .iter()
        .filter(|s| keep.contains(&s.get_id()))
        .collect();
    let mut out_sources = out.reborrow().init_source_info(len_u32(sources.len())?);
    for (i, source) in sources.into_iter().enumerate() {
        out_sources.set_with_caveats(len_u32(i)?, source)?;
    }

    let file = request
        .get_requested_files()?
        .iter()
        .find(|f| f.get_id() == file_id)
        .context("the root's file is not a requested file")?;
    let mut out_files = out.reborrow().init_requested_files(1);
    out_files.set_with_caveats(0, file)?;
    let imports: Vec<_> = file
        .get_imports()?
        .iter()
        .filter(|i| keep.contains(&i.get_id()))
        .collect();
    let mut out_imports = out_files.get(0).init_imports(len_u32(imports.len())?);
    for (i, import) in imports.into_iter().enumerate() {
        out_imports.set_with_caveats(len_u32(i)?, import)?;
    }

    // Copy into a fresh single-segment message: this drops the lists orphaned above and, unlike
    // canonicalisation, keeps each node's encoding as the compiler wrote it, so capnpc generates
    // the same code from a descriptor as from the full request.
    let pruned = builder.get_root_as_reader::<code_generator_request::Reader>()?;
    let words = u32::try_from(pruned.total_size()?.word_count + 1).context("request too large")?;
    let mut compact =
        message::Builder::new(message::HeapAllocator::new().first_segment_words(words));
    compact.set_root(pruned)?;
    let mut bytes = Vec::new();
    serialize::write_message(&mut bytes, &compact)?;
    Ok((bytes, keep.len()))
}

fn len_u32(n: usize) -> Result<u32> {
    u32::try_from(n).context("list too long for Cap'n Proto")
}
