//! A small OMG IDL reader for `ros2idl` schemas: modules, structs, constants (skipped),
//! typedefs of arrays and sequences, `sequence<T[, N]>`, `string<N>`, fixed arrays and
//! annotations (skipped). Produces the same type set as the `.msg` parser.

use std::collections::HashMap;

use crate::error::DecodeError;
use crate::ros2msg::{self, Array, MsgSet, RawBase, RawField, RawType};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Num(String),
    Str,
    Punct(char),
}

fn lex(text: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
            }
            '"' => {
                let mut escaped = false;
                for c in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        break;
                    }
                }
                out.push(Tok::Str);
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut s = String::from(c);
                while let Some(&n) = chars.peek() {
                    if n.is_ascii_alphanumeric() || n == '_' {
                        s.push(n);
                        chars.next();
                    } else if n == ':' {
                        chars.next();
                        if chars.peek() == Some(&':') {
                            chars.next();
                            s.push('/');
                        } else {
                            out.push(Tok::Ident(std::mem::take(&mut s)));
                            out.push(Tok::Punct(':'));
                            break;
                        }
                    } else {
                        break;
                    }
                }
                if !s.is_empty() {
                    out.push(Tok::Ident(s));
                }
            }
            c if c.is_ascii_digit() || c == '-' || c == '.' => {
                let mut s = String::from(c);
                while let Some(&n) = chars.peek() {
                    if n.is_ascii_alphanumeric() || n == '.' {
                        s.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push(Tok::Num(s));
            }
            c if c.is_whitespace() => {}
            c => out.push(Tok::Punct(c)),
        }
    }
    out
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    modules: Vec<String>,
    types: Vec<RawType>,
    typedefs: HashMap<String, (RawBase, Array)>,
}

/// Parses `ros2idl` text (sections separated by `===` lines with `IDL: pkg/msg/Type` headers).
pub(crate) fn parse(schema_name: &str, text: &str) -> Result<MsgSet, DecodeError> {
    let body: String = text
        .lines()
        .filter(|l| {
            let t = l.trim();
            !(t.starts_with("IDL:") || (t.len() >= 3 && t.bytes().all(|b| b == b'=')))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let mut p = Parser {
        toks: lex(&body),
        pos: 0,
        modules: Vec::new(),
        types: Vec::new(),
        typedefs: HashMap::new(),
    };
    p.definitions(0)
        .map_err(|e| DecodeError::bad_schema(schema_name, e))?;
    let wanted = ros2msg::normalize(schema_name);
    let root = p
        .types
        .iter()
        .position(|t| t.name == wanted)
        .or_else(|| (!p.types.is_empty()).then_some(0))
        .ok_or_else(|| DecodeError::bad_schema(schema_name, "no struct in the IDL"))?;
    ros2msg::link(schema_name, p.types, root, true)
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn ident(&mut self) -> Result<String, String> {
        match self.next() {
            Some(Tok::Ident(s)) => Ok(s),
            other => Err(format!("expected a name, found {}", show(other.as_ref()))),
        }
    }

    fn punct(&mut self, c: char) -> Result<(), String> {
        match self.next() {
            Some(Tok::Punct(p)) if p == c => Ok(()),
            other => Err(format!("expected {c:?}, found {}", show(other.as_ref()))),
        }
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Skips to just past the next `;` at this nesting level.
    fn skip_statement(&mut self) {
        let mut depth = 0i32;
        while let Some(t) = self.next() {
            match t {
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => depth -= 1,
                Tok::Punct(';') if depth <= 0 => return,
                _ => {}
            }
        }
    }

    fn annotations(&mut self) {
        while self.eat('@') {
            let _ = self.ident();
            if self.eat('(') {
                let mut depth = 1;
                while depth > 0 {
                    match self.next() {
                        Some(Tok::Punct('(')) => depth += 1,
                        Some(Tok::Punct(')')) => depth -= 1,
                        None => return,
                        _ => {}
                    }
                }
            }
        }
    }

    fn definitions(&mut self, depth: usize) -> Result<(), String> {
        if depth > 32 {
            return Err("modules nested too deeply".into());
        }
        loop {
            self.annotations();
            match self.peek() {
                None => return Ok(()),
                Some(Tok::Punct('}')) => return Ok(()),
                Some(Tok::Punct('#')) => {
                    // `#include "..."` and similar directives.
                    self.pos += 1;
                    let _ = self.ident();
                    if matches!(self.peek(), Some(Tok::Str) | Some(Tok::Punct('<'))) {
                        if self.eat('<') {
                            while !matches!(self.next(), Some(Tok::Punct('>')) | None) {}
                        } else {
                            self.pos += 1;
                        }
                    }
                }
                Some(Tok::Ident(k)) if k == "module" => {
                    self.pos += 1;
                    let name = self.ident()?;
                    self.punct('{')?;
                    self.modules.push(name);
                    self.definitions(depth + 1)?;
                    self.modules.pop();
                    self.punct('}')?;
                    self.eat(';');
                }
                Some(Tok::Ident(k)) if k == "struct" => {
                    self.pos += 1;
                    let name = self.ident()?;
                    if self.eat(';') {
                        continue; // forward declaration
                    }
                    self.punct('{')?;
                    let fields = self.members()?;
                    self.punct('}')?;
                    self.eat(';');
                    let full = self.scoped(&name);
                    self.types.push(RawType { name: full, fields });
                }
                Some(Tok::Ident(k)) if k == "typedef" => {
                    self.pos += 1;
                    let (base, array) = self.type_spec()?;
                    let name = self.ident()?;
                    let array = self.declarator_array(array)?;
                    self.punct(';')?;
                    let full = self.scoped(&name);
                    self.typedefs.insert(full.clone(), (base.clone(), array));
                    self.typedefs.insert(name, (base, array));
                }
                Some(_) => self.skip_statement(), // const, enum, union, ...
            }
        }
    }

    fn scoped(&self, name: &str) -> String {
        let mut parts = self.modules.clone();
        parts.push(name.to_owned());
        ros2msg::normalize(&parts.join("/"))
    }

    fn package(&self) -> String {
        ros2msg::normalize(&self.modules.join("/"))
            .split('/')
            .next()
            .unwrap_or("")
            .to_owned()
    }

    fn members(&mut self) -> Result<Vec<RawField>, String> {
        let mut fields = Vec::new();
        loop {
            self.annotations();
            if matches!(self.peek(), Some(Tok::Punct('}')) | None) {
                return Ok(fields);
            }
            let (base, array) = self.type_spec()?;
            loop {
                let name = self.ident()?;
                let array = self.declarator_array(array)?;
                fields.push(RawField {
                    name,
                    base: base.clone(),
                    array,
                });
                if !self.eat(',') {
                    break;
                }
            }
            self.punct(';')?;
        }
    }

    fn declarator_array(&mut self, array: Array) -> Result<Array, String> {
        if self.eat('[') {
            let n = self.number()?;
            self.punct(']')?;
            if array != Array::One {
                return Err("arrays of sequences are not supported".into());
            }
            return Ok(Array::Fixed(n));
        }
        Ok(array)
    }

    fn number(&mut self) -> Result<usize, String> {
        match self.next() {
            Some(Tok::Num(n)) => n.parse().map_err(|_| format!("bad size {n:?}")),
            other => Err(format!("expected a size, found {}", show(other.as_ref()))),
        }
    }

    fn type_spec(&mut self) -> Result<(RawBase, Array), String> {
        let first = self.ident()?;
        let name = match first.as_str() {
            "unsigned" => {
                let second = self.ident()?;
                if second == "long" && matches!(self.peek(), Some(Tok::Ident(s)) if s == "long") {
                    self.pos += 1;
                    "unsigned long long".to_owned()
                } else {
                    format!("unsigned {second}")
                }
            }
            "long" if matches!(self.peek(), Some(Tok::Ident(s)) if s == "long") => {
                self.pos += 1;
                "long long".to_owned()
            }
            _ => first,
        };
        if name == "sequence" {
            self.punct('<')?;
            let (inner, inner_array) = self.type_spec()?;
            if inner_array != Array::One {
                return Err("sequences of arrays are not supported".into());
            }
            if self.eat(',') {
                self.number()?;
            }
            self.punct('>')?;
            return Ok((inner, Array::Seq));
        }
        if (name == "string" || name == "wstring") && self.eat('<') {
            self.number()?;
            self.punct('>')?;
        }
        if let Some((base, array)) = self.typedefs.get(&name).cloned() {
            return Ok((base, array));
        }
        let package = self.package();
        Ok((ros2msg::raw_base(&name, &package), Array::One))
    }
}

fn show(t: Option<&Tok>) -> String {
    match t {
        None => "end of text".into(),
        Some(Tok::Ident(s)) => format!("{s:?}"),
        Some(Tok::Num(_)) => "a number".into(),
        Some(Tok::Str) => "a string".into(),
        Some(Tok::Punct(c)) => format!("{c:?}"),
    }
}
