//! ROS 2 message definitions: the `.msg` text parser (`ros2msg` schemas) and the linked,
//! owned type set the CDR decoder walks. `ros2idl` schemas reach the same type set through
//! [`crate::ros2idl`].

use std::collections::HashMap;

use crate::error::DecodeError;
use crate::leaves::LeafKind;
use crate::standard_types::{self, STANDARD_TYPES_SOURCE};

/// A fixed-size primitive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prim {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl Prim {
    pub(crate) fn size(self) -> usize {
        match self {
            Self::Bool | Self::I8 | Self::U8 => 1,
            Self::I16 | Self::U16 => 2,
            Self::I32 | Self::U32 | Self::F32 => 4,
            Self::I64 | Self::U64 | Self::F64 => 8,
        }
    }

    pub(crate) fn kind(self) -> LeafKind {
        match self {
            Self::Bool => LeafKind::Bool,
            Self::I8 | Self::I16 | Self::I32 | Self::I64 => LeafKind::Int,
            Self::U8 | Self::U16 | Self::U32 | Self::U64 => LeafKind::UInt,
            Self::F32 | Self::F64 => LeafKind::Float,
        }
    }

    /// `.msg` and IDL primitive names (`byte` and `char` are unsigned octets in ROS 2).
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "bool" | "boolean" => Self::Bool,
            "int8" => Self::I8,
            "uint8" | "byte" | "char" | "octet" => Self::U8,
            "int16" | "short" => Self::I16,
            "uint16" | "unsigned short" => Self::U16,
            "int32" | "long" => Self::I32,
            "uint32" | "unsigned long" => Self::U32,
            "int64" | "long long" => Self::I64,
            "uint64" | "unsigned long long" => Self::U64,
            "float32" | "float" => Self::F32,
            "float64" | "double" => Self::F64,
            _ => return None,
        })
    }
}

/// A field's element type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Base {
    Prim(Prim),
    /// `string` or (`wide`) `wstring`; bounds are not enforced when reading.
    Str {
        wide: bool,
    },
    Msg(usize),
}

/// Scalar, fixed array `T[N]`, or sequence `T[]` / `T[<=N]` (length-prefixed on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Array {
    One,
    Fixed(usize),
    Seq,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MsgField {
    pub(crate) name: String,
    pub(crate) base: Base,
    pub(crate) array: Array,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MsgType {
    pub(crate) name: String,
    pub(crate) fields: Vec<MsgField>,
    /// `builtin_interfaces/Time` or `Duration`: also yields the value in nanoseconds.
    pub(crate) time: Option<LeafKind>,
    /// Fewest bytes one value can take (alignment ignored), to reject impossible lengths early.
    pub(crate) min_size: usize,
}

/// A linked set of message types; `root` is the message type.
#[derive(Debug, Clone)]
pub(crate) struct MsgSet {
    pub(crate) types: Vec<MsgType>,
    pub(crate) root: usize,
    /// Types the schema text lacked, taken from the [built-in standard
    /// types](crate::standard_types) (the root first when it was one of them).
    pub(crate) standard: Vec<String>,
    /// The root's text was empty and names no standard type: a message without fields, or a
    /// type the recording names without defining it (rosbag2 before Iron); a message longer
    /// than an empty one tells which ([`MsgSet::check_defined`]).
    pub(crate) undefined: bool,
}

/// Most bytes an empty ROS 2 message's CDR body takes: rosidl gives a message without fields
/// one `uint8` member, padded to at most four bytes.
const EMPTY_BODY_MAX: usize = 4;

impl MsgSet {
    pub(crate) fn root_name(&self) -> &str {
        self.types.get(self.root).map_or("", |t| t.name.as_str())
    }

    /// Fails a message body longer than an empty message's when the root is
    /// [`undefined`](MsgSet::undefined): its type has fields the recording does not define.
    pub(crate) fn check_defined(&self, body: &[u8]) -> Result<(), DecodeError> {
        if !self.undefined || body.len() <= EMPTY_BODY_MAX {
            return Ok(());
        }
        Err(DecodeError::bad_schema(
            self.root_name(),
            format!(
                "the recording holds no definition of this type (rosbag2 stored none before \
                 Iron) and it is not one of the {STANDARD_TYPES_SOURCE} standard types built in, \
                 yet this message carries {} bytes",
                body.len()
            ),
        ))
    }
}

/// An element type before linking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RawBase {
    Prim(Prim),
    Str {
        wide: bool,
    },
    /// A type name as written, and the package it was written in.
    Named {
        name: String,
        package: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawField {
    pub(crate) name: String,
    pub(crate) base: RawBase,
    pub(crate) array: Array,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawType {
    /// Normalized `pkg/Type`.
    pub(crate) name: String,
    pub(crate) fields: Vec<RawField>,
}

/// Deepest message nesting accepted.
const MAX_NESTING: usize = 32;
/// Most types and fields one schema may define.
const MAX_TYPES: usize = 4096;
const MAX_FIELDS: usize = 1 << 16;
/// Largest fixed array accepted.
const MAX_FIXED: usize = 1 << 24;

/// `pkg/msg/Type` -> `pkg/Type` (also `srv` and `action` middles).
pub(crate) fn normalize(name: &str) -> String {
    let parts: Vec<&str> = name.split('/').filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        [pkg, "msg" | "srv" | "action", ty] => format!("{pkg}/{ty}"),
        _ => parts.join("/"),
    }
}

fn package_of(name: &str) -> &str {
    name.rsplit_once('/').map_or("", |(p, _)| p)
}

/// Which ROS the `.msg` text is written for: the grammar is shared, a few builtins differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// ROS 2: `byte` and `char` are unsigned octets; `time`/`duration` are `builtin_interfaces`.
    Ros2,
    /// ROS 1: `byte` is int8, `char` is uint8; `time` is (uint32 secs, uint32 nsecs) and
    /// `duration` (int32 secs, int32 nsecs).
    Ros1,
}

/// Parses `ros2msg` text: the main definition, then `===` lines and `MSG: pkg/Type` sections.
pub(crate) fn parse(schema_name: &str, text: &str) -> Result<MsgSet, DecodeError> {
    parse_in(schema_name, text, Dialect::Ros2)
}

/// Parses `.msg` text of either dialect (`ros2msg` or `ros1msg` schemas).
pub(crate) fn parse_in(
    schema_name: &str,
    text: &str,
    dialect: Dialect,
) -> Result<MsgSet, DecodeError> {
    let bad = |reason: String| DecodeError::bad_schema(schema_name, reason);
    let root_name = normalize(schema_name);
    let mut types = vec![RawType {
        name: root_name.clone(),
        fields: Vec::new(),
    }];
    let mut expect_header = false;
    let mut field_count = 0usize;
    // Whether the root's section has a field or constant line: rosbag2 before Iron stored no
    // definitions, so its types arrive as a name with empty text.
    let mut root_defined = false;
    for (n, raw_line) in text.lines().enumerate() {
        let line = raw_line.trim();
        let lineno = n + 1;
        if line.len() >= 3 && line.bytes().all(|b| b == b'=') {
            expect_header = true;
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if expect_header {
            let Some(name) = line.strip_prefix("MSG:") else {
                return Err(bad(format!(
                    "line {lineno}: expected `MSG: pkg/Type` after a `===` line"
                )));
            };
            if types.len() >= MAX_TYPES {
                return Err(bad(format!("more than {MAX_TYPES} types")));
            }
            types.push(RawType {
                name: normalize(name.trim()),
                fields: Vec::new(),
            });
            expect_header = false;
            continue;
        }
        if line == "---" {
            return Err(bad(format!(
                "line {lineno}: `---` separator: this is service or action text (.srv/.action), not a message definition"
            )));
        }
        root_defined |= types.len() == 1;
        let Some(ty) = types.last_mut() else { continue };
        if let Some(field) = parse_line(line, package_of(&ty.name), dialect)
            .map_err(|e| bad(format!("line {lineno}: {e}")))?
        {
            field_count += 1;
            if field_count > MAX_FIELDS {
                return Err(bad(format!("more than {MAX_FIELDS} fields")));
            }
            ty.fields.push(field);
        }
    }
    let standard = dialect == Dialect::Ros2;
    // An empty root: a message without fields, or a type named and not defined; a standard
    // type of that name is taken to be meant.
    let mut root_from_standard = false;
    if standard
        && !root_defined
        && let Some(raw) = standard_type(&root_name)
    {
        let raw = raw.map_err(bad)?;
        // An empty standard type (`std_msgs/Empty`) is what the text says: nothing is taken.
        root_from_standard = !raw.fields.is_empty();
        if let Some(root) = types.first_mut() {
            *root = raw;
        }
    }
    let mut set = link(schema_name, types, 0, standard)?;
    set.undefined = standard && !root_defined && standard_types::definition(&root_name).is_none();
    if root_from_standard {
        set.standard.insert(0, root_name);
    }
    Ok(set)
}

/// The complete `ros2msg` schema text of the [standard type](crate::standard_types) `name`
/// (`pkg/Type` or `pkg/msg/Type`): its own definition, then each type it uses under a `===`
/// line and `MSG: pkg/Type`, as rosbag2 and the MCAP ROS 2 profile write schemas; `None` when
/// it is not a standard type. For a recording that names its types without defining them
/// (rosbag2 SQLite before Iron), so that what is written from it carries definitions.
pub fn standard_definition(name: &str) -> Option<String> {
    let root = normalize(name);
    let mut text = standard_types::definition(&root)?.to_owned();
    let mut seen = vec![root.clone()];
    let mut queue = vec![root];
    while let Some(full) = queue.pop() {
        let Some(Ok(raw)) = standard_type(&full) else {
            continue;
        };
        for field in raw.fields {
            let RawBase::Named { name, package } = field.base else {
                continue;
            };
            let used = qualified(&name, &package);
            if seen.contains(&used) {
                continue;
            }
            let Some(own) = standard_types::definition(&used) else {
                continue;
            };
            text.push_str(&format!("\n{}\nMSG: {used}\n{own}", "=".repeat(80)));
            seen.push(used.clone());
            queue.push(used);
        }
    }
    text.push('\n');
    Some(text)
}

/// The built-in standard type `full` (normalized `pkg/Type`) as parsed text; `None` when it is
/// not one, `Some(Err)` when its text does not parse (a broken build).
fn standard_type(full: &str) -> Option<Result<RawType, String>> {
    let text = standard_types::definition(full)?;
    let package = package_of(full);
    let mut fields = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match parse_line(line, package, Dialect::Ros2) {
            Ok(Some(field)) => fields.push(field),
            Ok(None) => {}
            Err(e) => return Some(Err(format!("built-in {full}: {e}"))),
        }
    }
    Some(Ok(RawType {
        name: full.to_owned(),
        fields,
    }))
}

/// One `.msg` line: a field, or `None` for a constant.
fn parse_line(line: &str, package: &str, dialect: Dialect) -> Result<Option<RawField>, String> {
    let mut tokens = line.split_whitespace();
    let Some(ty) = tokens.next() else {
        return Ok(None);
    };
    let Some(name) = tokens.next() else {
        return Err(format!("a type without a field name ({ty:?})"));
    };
    if name.contains('=') || tokens.next().is_some_and(|t| t.starts_with('=')) {
        return Ok(None);
    }
    let name = name.split('#').next().unwrap_or(name);
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(format!("bad field name {name:?}"));
    }
    let (base, array) = parse_type(ty)?;
    Ok(Some(RawField {
        name: name.to_owned(),
        base: raw_base_in(base, package, dialect),
        array,
    }))
}

fn parse_type(ty: &str) -> Result<(&str, Array), String> {
    let (base, array) = match ty.split_once('[') {
        None => (ty, Array::One),
        Some((base, rest)) => {
            let inner = rest
                .strip_suffix(']')
                .ok_or_else(|| format!("bad array type {ty:?}"))?;
            let array = if inner.is_empty() || inner.starts_with("<=") {
                Array::Seq
            } else {
                let n: usize = inner
                    .parse()
                    .map_err(|_| format!("bad array size in {ty:?}"))?;
                if n > MAX_FIXED {
                    return Err(format!("fixed array larger than {MAX_FIXED}"));
                }
                Array::Fixed(n)
            };
            (base, array)
        }
    };
    // `string<=10`: the bound does not change the wire format.
    let base = base.split_once("<=").map_or(base, |(b, _)| b);
    if base.is_empty() {
        return Err(format!("empty type in {ty:?}"));
    }
    Ok((base, array))
}

pub(crate) fn raw_base(base: &str, package: &str) -> RawBase {
    raw_base_in(base, package, Dialect::Ros2)
}

fn raw_base_in(base: &str, package: &str, dialect: Dialect) -> RawBase {
    if dialect == Dialect::Ros1 {
        // Names no `pkg/Type` can take, so a recording's own types never collide with them.
        match base {
            "time" | "duration" => {
                return RawBase::Named {
                    name: base.to_owned(),
                    package: String::new(),
                };
            }
            "byte" => return RawBase::Prim(Prim::I8),
            "char" => return RawBase::Prim(Prim::U8),
            _ => {}
        }
    }
    match base {
        "string" => RawBase::Str { wide: false },
        "wstring" => RawBase::Str { wide: true },
        "time" => RawBase::Named {
            name: "builtin_interfaces/Time".into(),
            package: String::new(),
        },
        "duration" => RawBase::Named {
            name: "builtin_interfaces/Duration".into(),
            package: String::new(),
        },
        _ => match Prim::from_name(base) {
            Some(p) => RawBase::Prim(p),
            None => RawBase::Named {
                name: base.to_owned(),
                package: package.to_owned(),
            },
        },
    }
}

fn builtin(name: &str) -> Option<RawType> {
    let pair = |secs: Prim, nsecs: Prim| RawType {
        name: name.to_owned(),
        fields: vec![
            RawField {
                name: "secs".into(),
                base: RawBase::Prim(secs),
                array: Array::One,
            },
            RawField {
                name: "nsecs".into(),
                base: RawBase::Prim(nsecs),
                array: Array::One,
            },
        ],
    };
    match name {
        // ROS 1 builtins (only reached from `ros1msg` text; see `raw_base_in`).
        "time" => return Some(pair(Prim::U32, Prim::U32)),
        "duration" => return Some(pair(Prim::I32, Prim::I32)),
        _ => {}
    }
    matches!(
        name,
        "builtin_interfaces/Time" | "builtin_interfaces/Duration"
    )
    .then(|| RawType {
        name: name.to_owned(),
        fields: vec![
            RawField {
                name: "sec".into(),
                base: RawBase::Prim(Prim::I32),
                array: Array::One,
            },
            RawField {
                name: "nanosec".into(),
                base: RawBase::Prim(Prim::U32),
                array: Array::One,
            },
        ],
    })
}

/// Resolves type names, adds missing well-known builtins (and, with `standard`, the [built-in
/// standard types](crate::standard_types) the text lacks), rejects cycles and deep nesting.
pub(crate) fn link(
    schema_name: &str,
    mut raw: Vec<RawType>,
    root: usize,
    standard: bool,
) -> Result<MsgSet, DecodeError> {
    let bad = |reason: String| DecodeError::bad_schema(schema_name, reason);
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, t) in raw.iter().enumerate() {
        index.entry(t.name.clone()).or_insert(i);
    }
    let mut types: Vec<MsgType> = Vec::with_capacity(raw.len());
    let mut taken = Vec::new();
    let mut i = 0;
    while let Some(t) = raw.get(i).cloned() {
        let mut fields = Vec::with_capacity(t.fields.len());
        for f in &t.fields {
            let base = match &f.base {
                RawBase::Prim(p) => Base::Prim(*p),
                RawBase::Str { wide } => Base::Str { wide: *wide },
                RawBase::Named { name, package } => {
                    let mut target = resolve(name, package, &index).or_else(|| {
                        let full = normalize(name);
                        let b = builtin(&full)?;
                        let at = raw.len();
                        raw.push(b);
                        index.insert(full, at);
                        Some(at)
                    });
                    if target.is_none() && standard {
                        let full = qualified(name, package);
                        if let Some(b) = standard_type(&full) {
                            let b = b.map_err(&bad)?;
                            if raw.len() >= MAX_TYPES {
                                return Err(bad(format!("more than {MAX_TYPES} types")));
                            }
                            target = Some(raw.len());
                            raw.push(b);
                            index.insert(full.clone(), raw.len() - 1);
                            taken.push(full);
                        }
                    }
                    let Some(target) = target else {
                        return Err(bad(format!("{}.{}: unknown type {name:?}", t.name, f.name)));
                    };
                    Base::Msg(target)
                }
            };
            fields.push(MsgField {
                name: f.name.clone(),
                base,
                array: f.array,
            });
        }
        let shape = match fields.as_slice() {
            [
                MsgField {
                    base: Base::Prim(a),
                    array: Array::One,
                    ..
                },
                MsgField {
                    base: Base::Prim(b),
                    array: Array::One,
                    ..
                },
            ] => Some((*a, *b)),
            _ => None,
        };
        let ros2_shape = shape == Some((Prim::I32, Prim::U32));
        let time = match t.name.as_str() {
            "builtin_interfaces/Time" if ros2_shape => Some(LeafKind::TimeNs),
            "builtin_interfaces/Duration" if ros2_shape => Some(LeafKind::DurationNs),
            // A ROS 1 `time`; a ROS 1 `duration` yields only its parts.
            "time" if shape == Some((Prim::U32, Prim::U32)) => Some(LeafKind::TimeNs),
            _ => None,
        };
        types.push(MsgType {
            name: t.name.clone(),
            fields,
            time,
            min_size: 0,
        });
        i += 1;
    }
    // Depth-first from the root: cycles and deep nesting are schema errors.
    let mut state = vec![0u8; types.len()];
    check_depth(&types, root, 0, &mut state).map_err(bad)?;
    let mut sizes = vec![None; types.len()];
    for t in 0..types.len() {
        let size = min_size(&types, t, &mut sizes, 0);
        if let Some(ty) = types.get_mut(t) {
            ty.min_size = size;
        }
    }
    Ok(MsgSet {
        types,
        root,
        standard: taken,
        undefined: false,
    })
}

/// The full `pkg/Type` a field's type name means in `package`: `Header` is `std_msgs/Header`,
/// another bare name is the package's own.
fn qualified(name: &str, package: &str) -> String {
    if name.contains('/') {
        normalize(name)
    } else if name == "Header" {
        "std_msgs/Header".to_owned()
    } else {
        format!("{package}/{name}")
    }
}

fn resolve(name: &str, package: &str, index: &HashMap<String, usize>) -> Option<usize> {
    if name.contains('/') {
        return index.get(&normalize(name)).copied();
    }
    if name == "Header"
        && let Some(&i) = index.get("std_msgs/Header")
    {
        return Some(i);
    }
    if let Some(&i) = index.get(&format!("{package}/{name}")) {
        return Some(i);
    }
    // Bare name with no package context: accept a unique `*/Name`.
    let suffix = format!("/{name}");
    let mut hits = index
        .iter()
        .filter(|(k, _)| k.ends_with(&suffix) || k.as_str() == name);
    match (hits.next(), hits.next()) {
        (Some((_, &i)), None) => Some(i),
        _ => None,
    }
}

fn check_depth(types: &[MsgType], t: usize, depth: usize, state: &mut [u8]) -> Result<(), String> {
    let Some(ty) = types.get(t) else {
        return Ok(());
    };
    if depth > MAX_NESTING {
        return Err(format!(
            "message nesting deeper than {MAX_NESTING} at {}",
            ty.name
        ));
    }
    match state.get(t) {
        Some(1) => return Err(format!("type {} contains itself", ty.name)),
        Some(2) => return Ok(()),
        _ => {}
    }
    if let Some(s) = state.get_mut(t) {
        *s = 1;
    }
    for f in &ty.fields {
        if let Base::Msg(m) = f.base {
            check_depth(types, m, depth + 1, state)?;
        }
    }
    if let Some(s) = state.get_mut(t) {
        *s = 2;
    }
    Ok(())
}

fn min_size(types: &[MsgType], t: usize, memo: &mut [Option<usize>], depth: usize) -> usize {
    if let Some(Some(s)) = memo.get(t) {
        return *s;
    }
    let Some(ty) = types.get(t) else { return 1 };
    if depth > MAX_NESTING + 1 {
        return 1;
    }
    let mut total = 0usize;
    for f in &ty.fields {
        let one = match f.base {
            Base::Prim(p) => p.size(),
            Base::Str { .. } => 4,
            Base::Msg(m) => min_size(types, m, memo, depth + 1),
        };
        total = total.saturating_add(match f.array {
            Array::One => one,
            Array::Fixed(n) => one.saturating_mul(n),
            Array::Seq => 4,
        });
    }
    let size = total.max(1);
    if let Some(slot) = memo.get_mut(t) {
        *slot = Some(size);
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sections_constants_bounds_and_builtins() {
        let text = "\
# comment\n\
int8 A=1\n\
string FOO = \"x # y\"\n\
std_msgs/Header header # trailing\n\
string<=5[<=3] names\n\
float64[9] cov 0 0 0\n\
Inner[] inner\n\
time t\n\
================================================================================\n\
MSG: std_msgs/Header\n\
builtin_interfaces/Time stamp\n\
string frame_id\n\
================================================================================\n\
MSG: demo/Inner\n\
byte b\n";
        let set = parse("demo/msg/Outer", text).expect("parses");
        let root = set.types.get(set.root).expect("root");
        assert_eq!(root.name, "demo/Outer");
        let names: Vec<&str> = root.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["header", "names", "cov", "inner", "t"]);
        assert_eq!(root.fields[2].array, Array::Fixed(9));
        assert_eq!(root.fields[1].array, Array::Seq);
        let Base::Msg(t) = root.fields[4].base else {
            panic!("time is a message")
        };
        assert_eq!(set.types[t].time, Some(LeafKind::TimeNs));
    }

    #[test]
    fn srv_text_and_cycles_are_bad_schemas() {
        let srv = parse("pkg/srv/S", "int32 a\n---\nint32 b\n").unwrap_err();
        assert_eq!(srv.class(), crate::ErrorClass::BadSchema);
        let cyc = parse("p/A", "B b\n===\nMSG: p/B\nA a\n").unwrap_err();
        assert_eq!(cyc.class(), crate::ErrorClass::BadSchema);
        let unknown = parse("p/A", "Nope n\n").unwrap_err();
        assert_eq!(unknown.class(), crate::ErrorClass::BadSchema);
    }
}
