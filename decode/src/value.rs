//! Decoded values: one numeric [`Scalar`] per leaf, and the full [`Value`] tree for inspectors.

/// One numeric leaf value, kept in its natural width so 64-bit integers stay exact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// Signed integers, and times in nanoseconds.
    Int(i64),
    /// Unsigned integers, bools (0 or 1), enums and union discriminants.
    UInt(u64),
    /// Floating point values.
    Float(f64),
}

impl Scalar {
    /// The value as `f64` (integers above 2^53 round).
    #[inline]
    pub fn as_f64(self) -> f64 {
        match self {
            Self::Int(v) => v as f64,
            Self::UInt(v) => v as f64,
            Self::Float(v) => v,
        }
    }
}

impl Default for Scalar {
    fn default() -> Self {
        Self::UInt(0)
    }
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Int(v) => write!(f, "{v}"),
            Self::UInt(v) => write!(f, "{v}"),
            Self::Float(v) => write!(f, "{v}"),
        }
    }
}

/// One message decoded as a tree, for an inspector view.
///
/// Struct fields keep schema order and names. A struct with a union carries a `$which` field
/// holding the discriminant as [`Value::Enum`] (number and arm name) and only the active arm.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A null pointer (Cap'n Proto struct, list, text or data not set) or JSON `null`.
    Null,
    /// Cap'n Proto `Void`.
    Void,
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A float (float32 values are widened exactly).
    Float(f64),
    /// Text (invalid UTF-8 is replaced, never an error).
    Text(String),
    /// Raw bytes (Cap'n Proto `Data`).
    Data(Vec<u8>),
    /// An enum value (or union discriminant) with its name when the schema has one.
    Enum {
        /// The numeric value.
        value: u16,
        /// The enumerant's name, `None` if the value is unknown to the schema.
        name: Option<String>,
    },
    /// A struct: fields in schema order.
    Struct(Vec<(String, Value)>),
    /// A list or array.
    List(Vec<Value>),
    /// Something with no inspectable content (a capability, an untyped pointer).
    Opaque(&'static str),
}

impl Value {
    /// The field `name` of a struct value.
    pub fn field(&self, name: &str) -> Option<&Value> {
        match self {
            Self::Struct(fields) => fields.iter().find(|(n, _)| n == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Follows a path in the crate's spelling (`a.b[2].c`, `u.$which`).
    pub fn at(&self, path: &str) -> Option<&Value> {
        let mut cur = self;
        for part in path.split('.') {
            let (name, indices) = match part.find('[') {
                Some(i) => part.split_at(i),
                None => (part, ""),
            };
            if !name.is_empty() {
                cur = cur.field(name)?;
            }
            for idx in indices.split('[').filter(|s| !s.is_empty()) {
                let i: usize = idx.strip_suffix(']')?.parse().ok()?;
                cur = match cur {
                    Self::List(items) => items.get(i)?,
                    // A byte array's element is not a separate value in the tree.
                    Self::Data(bytes) if bytes.len() > i => return Some(cur),
                    _ => return None,
                };
            }
        }
        Some(cur)
    }
}
