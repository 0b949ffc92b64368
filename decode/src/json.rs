//! JSON messages: numeric and boolean leaves by the crate's path spelling, learned from the
//! messages themselves (a JSON schema, if any, is not needed). Walks the text with serde's
//! visitor API so steady-state decoding does not build a document tree.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::error::DecodeError;
use crate::leaves::{Branch, LeafKind, Limits, Name, Sink};
use crate::value::{Scalar, Value};

/// Most values one tree decode may produce.
const MAX_TREE_VALUES: usize = 1 << 21;

pub(crate) fn decode(
    bytes: &[u8],
    root: &mut Branch,
    sink: &mut Sink<'_>,
    limits: &Limits,
) -> Result<(), DecodeError> {
    let mut failure = None;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let seed = Node {
        at: At::Root(root),
        sink,
        limits,
        depth: 0,
        failure: &mut failure,
    };
    let result = seed.deserialize(&mut de).and_then(|()| de.end());
    match (failure, result) {
        (Some(e), _) => Err(e),
        (None, Err(e)) => Err(classify(&e, bytes.len())),
        (None, Ok(())) => Ok(()),
    }
}

fn classify(e: &serde_json::Error, len: usize) -> DecodeError {
    match e.classify() {
        serde_json::error::Category::Eof => DecodeError::Truncated {
            offset: len,
            needed: 1,
            len,
        },
        _ => DecodeError::corrupt(format!(
            "invalid JSON at line {} column {}",
            e.line(),
            e.column()
        )),
    }
}

enum At<'b> {
    Root(&'b mut Branch),
    /// Child `idx` of `parent`: an object member when `keyed`, else an array element.
    Child {
        parent: &'b mut Branch,
        idx: usize,
        keyed: bool,
    },
}

struct Node<'b, 's, 'f> {
    at: At<'b>,
    sink: &'b mut Sink<'s>,
    limits: &'b Limits,
    depth: u32,
    failure: &'f mut Option<DecodeError>,
}

impl Node<'_, '_, '_> {
    fn fail<E: serde::de::Error>(&mut self, e: DecodeError) -> E {
        *self.failure = Some(e);
        E::custom("decode limit")
    }

    fn scalar<E: serde::de::Error>(mut self, kind: LeafKind, value: Scalar) -> Result<(), E> {
        let At::Child { parent, idx, keyed } = self.at else {
            return Ok(());
        };
        let r = if parent.has_leaf(idx) {
            parent.leaf(self.sink, idx, Name::Same, kind)
        } else {
            let key = if keyed {
                parent
                    .keys
                    .get(idx)
                    .map(|k| k.to_string())
                    .unwrap_or_default()
            } else {
                String::new()
            };
            let name = if keyed {
                Name::Field(&key)
            } else {
                Name::Index(idx)
            };
            parent.leaf(self.sink, idx, name, kind)
        };
        match r {
            Ok(slot) => {
                self.sink.put(slot, value);
                Ok(())
            }
            Err(e) => {
                self.at = At::Root(parent);
                Err(self.fail(e))
            }
        }
    }
}

fn child_branch(parent: &mut Branch, idx: usize, keyed: bool) -> Result<&mut Branch, DecodeError> {
    if parent.has_branch(idx) {
        return parent.branch(idx, Name::Same);
    }
    let key = if keyed {
        parent
            .keys
            .get(idx)
            .map(|k| k.to_string())
            .unwrap_or_default()
    } else {
        String::new()
    };
    let name = if keyed {
        Name::Field(&key)
    } else {
        Name::Index(idx)
    };
    parent.branch(idx, name)
}

impl<'de> DeserializeSeed<'de> for Node<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<(), E> {
        self.scalar(LeafKind::Bool, Scalar::UInt(u64::from(v)))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        self.scalar(LeafKind::Int, Scalar::Int(v))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        self.scalar(LeafKind::UInt, Scalar::UInt(v))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        self.scalar(LeafKind::Float, Scalar::Float(v))
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        if self.depth >= self.limits.max_depth {
            let max = self.limits.max_depth;
            return Err(self.fail(DecodeError::limit("nesting depth", u64::from(max))));
        }
        let depth = self.depth + 1;
        let branch = match self.at {
            At::Root(b) => b,
            At::Child { parent, idx, keyed } => match child_branch(parent, idx, keyed) {
                Ok(b) => b,
                Err(e) => {
                    *self.failure = Some(e);
                    return Err(serde::de::Error::custom("decode limit"));
                }
            },
        };
        let mut ordinal = 0usize;
        while let Some(idx) = map.next_key_seed(Key {
            branch: &mut *branch,
            hint: ordinal,
        })? {
            ordinal += 1;
            map.next_value_seed(Node {
                at: At::Child {
                    parent: &mut *branch,
                    idx,
                    keyed: true,
                },
                sink: &mut *self.sink,
                limits: self.limits,
                depth,
                failure: &mut *self.failure,
            })?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        if self.depth >= self.limits.max_depth {
            let max = self.limits.max_depth;
            return Err(self.fail(DecodeError::limit("nesting depth", u64::from(max))));
        }
        let depth = self.depth + 1;
        let branch = match self.at {
            At::Root(b) => b,
            At::Child { parent, idx, keyed } => match child_branch(parent, idx, keyed) {
                Ok(b) => b,
                Err(e) => {
                    *self.failure = Some(e);
                    return Err(serde::de::Error::custom("decode limit"));
                }
            },
        };
        let max = self.sink.max_list_elements();
        let mut idx = 0usize;
        loop {
            if idx >= max {
                if seq.next_element::<IgnoredAny>()?.is_none() {
                    break;
                }
                self.sink.clipped = true;
                continue;
            }
            let node = Node {
                at: At::Child {
                    parent: &mut *branch,
                    idx,
                    keyed: false,
                },
                sink: &mut *self.sink,
                limits: self.limits,
                depth,
                failure: &mut *self.failure,
            };
            if seq.next_element_seed(node)?.is_none() {
                break;
            }
            idx += 1;
        }
        Ok(())
    }
}

/// Finds (or adds) an object key among a branch's children; `hint` is the key's position in
/// the object, which usually matches the previous message's.
struct Key<'b> {
    branch: &'b mut Branch,
    hint: usize,
}

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<usize, E> {
        let keys = &mut self.branch.keys;
        if keys.get(self.hint).is_some_and(|k| &**k == key) {
            return Ok(self.hint);
        }
        if let Some(i) = keys.iter().position(|k| &**k == key) {
            return Ok(i);
        }
        keys.push(key.into());
        Ok(keys.len() - 1)
    }
}

/// Decodes one JSON message into a [`Value`] tree, keeping object key order.
pub(crate) fn tree(bytes: &[u8], limits: &Limits) -> Result<Value, DecodeError> {
    let mut budget = MAX_TREE_VALUES;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let v = TreeSeed {
        budget: &mut budget,
        depth: 0,
        max_depth: limits.max_depth,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v))
    .map_err(|e| classify(&e, bytes.len()))?;
    Ok(v)
}

struct TreeSeed<'b> {
    budget: &'b mut usize,
    depth: u32,
    max_depth: u32,
}

impl TreeSeed<'_> {
    fn spend<E: serde::de::Error>(&mut self) -> Result<(), E> {
        *self.budget = self
            .budget
            .checked_sub(1)
            .ok_or_else(|| E::custom("too many values"))?;
        Ok(())
    }

    fn child(&mut self) -> TreeSeed<'_> {
        TreeSeed {
            budget: &mut *self.budget,
            depth: self.depth + 1,
            max_depth: self.max_depth,
        }
    }
}

impl<'de> DeserializeSeed<'de> for TreeSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TreeSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::UInt(v))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Text(v.to_owned()))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Value, A::Error> {
        if self.depth >= self.max_depth {
            return Err(serde::de::Error::custom("nested too deeply"));
        }
        let mut fields = Vec::new();
        while let Some(k) = map.next_key::<String>()? {
            self.spend()?;
            let v = map.next_value_seed(self.child())?;
            fields.push((k, v));
        }
        Ok(Value::Struct(fields))
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Value, A::Error> {
        if self.depth >= self.max_depth {
            return Err(serde::de::Error::custom("nested too deeply"));
        }
        let mut items = Vec::new();
        loop {
            self.spend()?;
            match seq.next_element_seed(self.child())? {
                Some(v) => items.push(v),
                None => break,
            }
        }
        Ok(Value::List(items))
    }
}
