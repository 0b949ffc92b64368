//! The committed descriptors: each is a CodeGeneratorRequest holding exactly the nodes its root
//! type needs, consistent enough for capnpc to generate the same code from it.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use capnp::message::ReaderOptions;
use capnp::schema_capnp::{code_generator_request, field, node, type_};
use capnp::serialize;
use schemas::{ALL, SchemaInfo};

type Nodes<'a> = HashMap<u64, node::Reader<'a>>;

fn read(info: &SchemaInfo) -> capnp::message::Reader<serialize::BufferSegments<&'static [u8]>> {
    let mut rest = info.descriptor;
    let message = serialize::read_message_from_flat_slice(&mut rest, ReaderOptions::new())
        .unwrap_or_else(|err| panic!("{}: descriptor does not parse: {err}", info.registry_name));
    assert!(
        rest.is_empty(),
        "{}: {} bytes after the message",
        info.registry_name,
        rest.len()
    );
    message
}

/// The nodes a decoder of `root` needs, found by walking field types from the root, plus the
/// scopes that enclose each of them (so display names and scope ids resolve).
fn expected_closure(nodes: &Nodes<'_>, root: u64) -> BTreeSet<u64> {
    fn add_type(ty: type_::Reader<'_>, todo: &mut Vec<u64>) {
        match ty.which().unwrap() {
            type_::Struct(s) => todo.push(s.get_type_id()),
            type_::Enum(e) => todo.push(e.get_type_id()),
            type_::List(l) => add_type(l.get_element_type().unwrap(), todo),
            _ => {}
        }
    }
    let mut seen = BTreeSet::new();
    let mut todo = vec![root];
    while let Some(id) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        let node = *nodes
            .get(&id)
            .unwrap_or_else(|| panic!("node {id:#x} is referenced but not in the descriptor"));
        if node.get_scope_id() != 0 {
            todo.push(node.get_scope_id());
        }
        if let node::Struct(s) = node.which().unwrap() {
            for f in s.get_fields().unwrap() {
                match f.which().unwrap() {
                    field::Slot(slot) => add_type(slot.get_type().unwrap(), &mut todo),
                    field::Group(g) => todo.push(g.get_type_id()),
                }
            }
        }
    }
    seen
}

#[test]
fn every_descriptor_holds_exactly_its_closure() {
    for info in ALL {
        let name = info.registry_name;
        let message = read(info);
        let request = message
            .get_root::<code_generator_request::Reader>()
            .unwrap();
        let list = request.get_nodes().unwrap();
        let nodes: Nodes<'_> = list.iter().map(|n| (n.get_id(), n)).collect();
        assert_eq!(
            nodes.len(),
            list.len() as usize,
            "{name}: duplicate node ids"
        );

        let root = nodes
            .get(&info.type_id)
            .unwrap_or_else(|| panic!("{name}: no root node"));
        assert_eq!(
            root.get_display_name().unwrap().to_str().unwrap(),
            info.capnp_name
        );
        assert!(
            matches!(root.which().unwrap(), node::Struct(_)),
            "{name}: root is not a struct"
        );

        // Every reference resolves: a closure walk that met a missing node would panic above.
        let expected = expected_closure(&nodes, info.type_id);
        let actual: BTreeSet<u64> = nodes.keys().copied().collect();
        let extra: Vec<_> = actual
            .difference(&expected)
            .map(|id| nodes[id].get_display_name())
            .collect();
        assert!(
            extra.is_empty(),
            "{name}: nodes outside the closure: {extra:?}"
        );
        assert_eq!(actual, expected, "{name}: closure nodes missing");

        for node in list {
            for nested in node.get_nested_nodes().unwrap() {
                assert!(
                    actual.contains(&nested.get_id()),
                    "{name}: dangling nested node"
                );
            }
        }
        for source in request.get_source_info().unwrap() {
            assert!(
                actual.contains(&source.get_id()),
                "{name}: source info for a missing node"
            );
        }
        let root_doc = request
            .get_source_info()
            .unwrap()
            .iter()
            .find(|s| s.get_id() == info.type_id);
        assert!(
            root_doc.is_some_and(|s| !s.get_doc_comment().unwrap().is_empty()),
            "{name}: the root's doc comment was lost"
        );

        let files = request.get_requested_files().unwrap();
        assert_eq!(files.len(), 1, "{name}: one requested file");
        let file = files.get(0);
        assert_eq!(
            file.get_id(),
            root.get_scope_id(),
            "{name}: requested file is not the root's"
        );
        let (file_name, _) = info.capnp_name.split_once(':').unwrap();
        assert_eq!(file.get_filename().unwrap().to_str().unwrap(), file_name);
        for import in file.get_imports().unwrap() {
            assert!(
                actual.contains(&import.get_id()),
                "{name}: import of a missing file"
            );
        }
    }
}

/// One segment, holding the request and nothing else (no data orphaned by the pruning).
#[test]
fn descriptors_are_compact_single_segment_messages() {
    for info in ALL {
        let name = info.registry_name;
        assert_eq!(
            info.descriptor.get(..4),
            Some(&[0u8; 4][..]),
            "{name}: one segment"
        );
        let message = read(info);
        let request = message
            .get_root::<code_generator_request::Reader>()
            .unwrap();
        let content_words = request.total_size().unwrap().word_count;
        // Stream framing: 8 bytes of segment table, then the root pointer and the content.
        assert_eq!(
            info.descriptor.len() as u64,
            8 + 8 * (1 + content_words),
            "{name}: garbage"
        );
    }
}

/// capnpc generates, from each pruned descriptor alone, exactly the committed code of the root's
/// file: the pruning kept everything the code generator needs and changed nothing it reads.
#[test]
fn capnpc_generates_the_committed_code_from_each_descriptor() {
    let generated = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join("generated");
    for info in ALL {
        let out = tempfile::tempdir().unwrap();
        capnpc::codegen::CodeGenerationCommand::new()
            .output_directory(out.path())
            .run(info.descriptor)
            .unwrap_or_else(|err| panic!("{}: capnpc failed: {err}", info.registry_name));
        let stem = info.capnp_name.split_once(".capnp:").unwrap().0;
        let file = format!("{stem}_capnp.rs");
        let written: Vec<_> = std::fs::read_dir(out.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(written, [file.as_str()], "{}", info.registry_name);
        let ours = std::fs::read_to_string(out.path().join(&file)).unwrap();
        let committed = std::fs::read_to_string(generated.join(&file)).unwrap();
        assert!(
            ours == committed,
            "{}: code generated from the descriptor differs",
            info.registry_name
        );
    }
}

/// The descriptor folder holds one file per registry entry and nothing else.
#[test]
fn descriptor_folder_matches_the_registry() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("descriptors");
    let mut on_disk: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    on_disk.sort();
    let mut registered: Vec<String> = ALL
        .iter()
        .map(|i| format!("{}.bin", i.registry_name))
        .collect();
    registered.sort();
    assert_eq!(on_disk, registered);
}
