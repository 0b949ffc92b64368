//! XCDR1 (plain CDR, little or big endian) decoding of ROS 2 messages with a linked [`MsgSet`].
//!
//! Alignment is relative to the first byte after the 4-byte encapsulation header. Every read is
//! bounds-checked, and a length is checked against the bytes that remain before it is used.

use crate::error::DecodeError;
use crate::leaves::{Branch, Limits, Name, Sink};
use crate::ros2msg::{Array, Base, MsgField, MsgSet, MsgType, Prim};
use crate::value::{Scalar, Value};

/// Byte order and framing of one payload; monomorphized so the hot loop has no branch on it.
pub(crate) trait Order {
    /// CDR rules: values aligned to their size, strings NUL-terminated, an empty struct is one
    /// byte. Without them (ROS 1): packed, no terminator, an empty struct is nothing.
    const CDR: bool;
    fn u16(b: [u8; 2]) -> u16;
    fn u32(b: [u8; 4]) -> u32;
    fn u64(b: [u8; 8]) -> u64;
}

struct Le;
struct Be;

impl Order for Le {
    const CDR: bool = true;
    #[inline]
    fn u16(b: [u8; 2]) -> u16 {
        u16::from_le_bytes(b)
    }
    #[inline]
    fn u32(b: [u8; 4]) -> u32 {
        u32::from_le_bytes(b)
    }
    #[inline]
    fn u64(b: [u8; 8]) -> u64 {
        u64::from_le_bytes(b)
    }
}

impl Order for Be {
    const CDR: bool = true;
    #[inline]
    fn u16(b: [u8; 2]) -> u16 {
        u16::from_be_bytes(b)
    }
    #[inline]
    fn u32(b: [u8; 4]) -> u32 {
        u32::from_be_bytes(b)
    }
    #[inline]
    fn u64(b: [u8; 8]) -> u64 {
        u64::from_be_bytes(b)
    }
}

const HEADER: usize = 4;
/// Most values one tree decode may produce.
pub(crate) const MAX_TREE_VALUES: usize = 1 << 21;

pub(crate) struct Cur<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Bytes before `buf` in the payload (the CDR encapsulation header), for error offsets.
    base: usize,
}

impl<'a> Cur<'a> {
    /// A reader over `buf`, which starts `base` bytes into the payload.
    pub(crate) fn new(buf: &'a [u8], base: usize) -> Self {
        Self { buf, pos: 0, base }
    }

    #[inline]
    fn truncated(&self, needed: usize) -> DecodeError {
        DecodeError::Truncated {
            offset: self.pos.saturating_add(self.base),
            needed,
            len: self.buf.len() + self.base,
        }
    }

    #[inline(always)]
    fn align<O: Order>(&mut self, n: usize) {
        if !O::CDR {
            return;
        }
        let rem = self.pos % n;
        if rem != 0 {
            self.pos = self.pos.saturating_add(n - rem);
        }
    }

    #[inline(always)]
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    #[inline(always)]
    fn take<O: Order, const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        self.align::<O>(N);
        let end = self.pos.saturating_add(N);
        match self.buf.get(self.pos..end) {
            Some(b) => {
                self.pos = end;
                b.try_into().map_err(|_| self.truncated(N))
            }
            None => Err(self.truncated(N)),
        }
    }

    #[inline(always)]
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(n).ok_or_else(|| self.truncated(n))?;
        let b = self
            .buf
            .get(self.pos..end)
            .ok_or_else(|| self.truncated(n))?;
        self.pos = end;
        Ok(b)
    }

    #[inline(always)]
    fn u32<O: Order>(&mut self) -> Result<u32, DecodeError> {
        Ok(O::u32(self.take::<O, 4>()?))
    }

    /// A sequence length, checked against what remains for elements of at least `min_size` bytes.
    #[inline]
    fn count<O: Order>(&mut self, min_size: usize) -> Result<usize, DecodeError> {
        let n = self.u32::<O>()? as usize;
        if n.saturating_mul(min_size.max(1)) > self.remaining() {
            return Err(DecodeError::corrupt(format!(
                "sequence of {n} elements at offset {} exceeds the payload",
                (self.pos + self.base).saturating_sub(4)
            )));
        }
        Ok(n)
    }

    #[inline(always)]
    fn prim<O: Order>(&mut self, p: Prim) -> Result<Scalar, DecodeError> {
        Ok(match p {
            Prim::Bool => Scalar::UInt(u64::from(self.take::<O, 1>()?[0] != 0)),
            Prim::U8 => Scalar::UInt(u64::from(self.take::<O, 1>()?[0])),
            Prim::I8 => Scalar::Int(i64::from(self.take::<O, 1>()?[0] as i8)),
            Prim::U16 => Scalar::UInt(u64::from(O::u16(self.take::<O, 2>()?))),
            Prim::I16 => Scalar::Int(i64::from(O::u16(self.take::<O, 2>()?) as i16)),
            Prim::U32 => Scalar::UInt(u64::from(O::u32(self.take::<O, 4>()?))),
            Prim::I32 => Scalar::Int(i64::from(O::u32(self.take::<O, 4>()?) as i32)),
            Prim::U64 => Scalar::UInt(O::u64(self.take::<O, 8>()?)),
            Prim::I64 => Scalar::Int(O::u64(self.take::<O, 8>()?) as i64),
            Prim::F32 => Scalar::Float(f64::from(f32::from_bits(O::u32(self.take::<O, 4>()?)))),
            Prim::F64 => Scalar::Float(f64::from_bits(O::u64(self.take::<O, 8>()?))),
        })
    }

    /// Skips `n` primitives of size `size` (contiguous once the first is aligned).
    #[inline]
    fn skip_prims<O: Order>(&mut self, size: usize, n: usize) -> Result<(), DecodeError> {
        if n == 0 {
            return Ok(());
        }
        self.align::<O>(size);
        self.bytes(size.saturating_mul(n)).map(|_| ())
    }

    /// A string's bytes without the trailing NUL(s); `wide` strings are UTF-16 units.
    fn string<O: Order>(&mut self, wide: bool) -> Result<&'a [u8], DecodeError> {
        let n = self.u32::<O>()? as usize;
        if wide {
            self.align::<O>(2);
            let b = self.bytes(n.checked_mul(2).ok_or_else(|| self.truncated(n))?)?;
            Ok(b)
        } else {
            let b = self.bytes(n)?;
            if O::CDR {
                Ok(b.strip_suffix(&[0]).unwrap_or(b))
            } else {
                Ok(b)
            }
        }
    }
}

/// Splits off the encapsulation header: `Ok(true)` for little endian.
fn encapsulation(bytes: &[u8]) -> Result<(bool, &[u8]), DecodeError> {
    let Some((header, body)) = bytes.split_first_chunk::<HEADER>() else {
        return Err(DecodeError::Truncated {
            offset: 0,
            needed: HEADER,
            len: bytes.len(),
        });
    };
    match (header[0], header[1]) {
        (0, 1) => Ok((true, body)),
        (0, 0) => Ok((false, body)),
        (0, 2 | 3) => Err(DecodeError::corrupt(
            "parameter-list CDR (PL_CDR) is not supported",
        )),
        (0, 6..=11) => Err(DecodeError::corrupt(
            "XCDR2 encapsulation is not supported (XCDR1 only)",
        )),
        (a, b) => Err(DecodeError::corrupt(format!(
            "unknown CDR encapsulation {:#06x}",
            u16::from_be_bytes([a, b])
        ))),
    }
}

fn too_deep(limits: &Limits, depth: u32) -> Result<(), DecodeError> {
    if depth > limits.max_depth {
        return Err(DecodeError::limit(
            "nesting depth",
            u64::from(limits.max_depth),
        ));
    }
    Ok(())
}

impl MsgSet {
    fn ty(&self, t: usize) -> Result<&MsgType, DecodeError> {
        self.types
            .get(t)
            .ok_or_else(|| DecodeError::corrupt("type index out of range"))
    }

    pub(crate) fn decode(
        &self,
        bytes: &[u8],
        root: &mut Branch,
        sink: &mut Sink<'_>,
        limits: &Limits,
    ) -> Result<(), DecodeError> {
        let (le, body) = encapsulation(bytes)?;
        self.check_defined(body)?;
        let mut cur = Cur::new(body, HEADER);
        if le {
            self.walk::<Le>(self.root, &mut cur, root, sink, limits, 0, true)
        } else {
            self.walk::<Be>(self.root, &mut cur, root, sink, limits, 0, true)
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn walk<O: Order>(
        &self,
        t: usize,
        cur: &mut Cur<'_>,
        br: &mut Branch,
        sink: &mut Sink<'_>,
        limits: &Limits,
        depth: u32,
        top: bool,
    ) -> Result<(), DecodeError> {
        too_deep(limits, depth)?;
        let ty = self.ty(t)?;
        if ty.fields.is_empty() {
            // An empty CDR struct is one dummy byte; tolerate its absence at the very end.
            if O::CDR && !(top && cur.remaining() == 0) {
                cur.bytes(1)?;
            }
            return Ok(());
        }
        if let Some(kind) = ty.time
            && let [
                MsgField {
                    name: sec_name,
                    base: Base::Prim(sp),
                    ..
                },
                MsgField {
                    name: ns_name,
                    base: Base::Prim(np),
                    ..
                },
            ] = ty.fields.as_slice()
        {
            // Seconds and nanoseconds, then the time in nanoseconds (ROS 2: int32 sec; ROS 1:
            // uint32 secs).
            let sec = cur.prim::<O>(*sp)?;
            let nanosec = cur.prim::<O>(*np)?;
            br.put(sink, 0, Name::Field(sec_name), sp.kind(), sec)?;
            br.put(sink, 1, Name::Field(ns_name), np.kind(), nanosec)?;
            let total = time_ns(sec, nanosec);
            br.put(sink, 2, Name::Same, kind, Scalar::Int(total))?;
            return Ok(());
        }
        let max = sink.max_list_elements();
        for (i, f) in ty.fields.iter().enumerate() {
            let name = Name::Field(&f.name);
            let n = match f.array {
                Array::One => {
                    match f.base {
                        Base::Prim(p) => br.put(sink, i, name, p.kind(), cur.prim::<O>(p)?)?,
                        Base::Str { wide } => {
                            cur.string::<O>(wide)?;
                        }
                        Base::Msg(m) => {
                            let b = br.branch(i, name)?;
                            self.walk::<O>(m, cur, b, sink, limits, depth + 1, false)?;
                        }
                    }
                    continue;
                }
                Array::Fixed(n) => n,
                Array::Seq => cur.count::<O>(self.elem_min_size(&f.base))?,
            };
            match f.base {
                Base::Prim(p) => {
                    if n.saturating_mul(p.size()) > cur.remaining() {
                        return Err(cur.truncated(n.saturating_mul(p.size())));
                    }
                    let shown = n.min(max);
                    let b = br.branch(i, name)?;
                    for j in 0..shown {
                        b.put(sink, j, Name::Index(j), p.kind(), cur.prim::<O>(p)?)?;
                    }
                    if n > shown {
                        sink.clipped = true;
                        cur.skip_prims::<O>(p.size(), n - shown)?;
                    }
                }
                Base::Str { wide } => {
                    for _ in 0..n {
                        cur.string::<O>(wide)?;
                    }
                }
                Base::Msg(m) => {
                    let b = br.branch(i, name)?;
                    for j in 0..n {
                        if j < max {
                            let e = b.branch(j, Name::Index(j))?;
                            self.walk::<O>(m, cur, e, sink, limits, depth + 1, false)?;
                        } else {
                            sink.clipped = true;
                            self.skip::<O>(m, cur, limits, depth + 1)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn elem_min_size(&self, base: &Base) -> usize {
        match base {
            Base::Prim(p) => p.size(),
            Base::Str { .. } => 4,
            Base::Msg(m) => self.types.get(*m).map_or(1, |t| t.min_size),
        }
    }

    /// Steps over one value of type `t` without recording it.
    fn skip<O: Order>(
        &self,
        t: usize,
        cur: &mut Cur<'_>,
        limits: &Limits,
        depth: u32,
    ) -> Result<(), DecodeError> {
        too_deep(limits, depth)?;
        let ty = self.ty(t)?;
        if ty.fields.is_empty() {
            if O::CDR {
                cur.bytes(1)?;
            }
            return Ok(());
        }
        for f in &ty.fields {
            let n = match f.array {
                Array::One => 1,
                Array::Fixed(n) => n,
                Array::Seq => cur.count::<O>(self.elem_min_size(&f.base))?,
            };
            match f.base {
                Base::Prim(p) => cur.skip_prims::<O>(p.size(), n)?,
                Base::Str { wide } => {
                    for _ in 0..n {
                        cur.string::<O>(wide)?;
                    }
                }
                Base::Msg(m) => {
                    for _ in 0..n {
                        self.skip::<O>(m, cur, limits, depth + 1)?;
                    }
                }
            }
        }
        Ok(())
    }

    pub(crate) fn tree(&self, bytes: &[u8], limits: &Limits) -> Result<Value, DecodeError> {
        let (le, body) = encapsulation(bytes)?;
        self.check_defined(body)?;
        let mut cur = Cur::new(body, HEADER);
        let mut budget = MAX_TREE_VALUES;
        if le {
            self.tree_struct::<Le>(self.root, &mut cur, limits, 0, &mut budget, true)
        } else {
            self.tree_struct::<Be>(self.root, &mut cur, limits, 0, &mut budget, true)
        }
    }

    pub(crate) fn tree_struct<O: Order>(
        &self,
        t: usize,
        cur: &mut Cur<'_>,
        limits: &Limits,
        depth: u32,
        budget: &mut usize,
        top: bool,
    ) -> Result<Value, DecodeError> {
        too_deep(limits, depth)?;
        let ty = self.ty(t)?;
        spend(budget, ty.fields.len() + 1)?;
        if ty.fields.is_empty() {
            if O::CDR && !(top && cur.remaining() == 0) {
                cur.bytes(1)?;
            }
            return Ok(Value::Struct(Vec::new()));
        }
        let mut out = Vec::with_capacity(ty.fields.len());
        for f in &ty.fields {
            let n = match f.array {
                Array::One => {
                    let v = self.tree_one::<O>(&f.base, cur, limits, depth, budget)?;
                    out.push((f.name.clone(), v));
                    continue;
                }
                Array::Fixed(n) => n,
                Array::Seq => cur.count::<O>(self.elem_min_size(&f.base))?,
            };
            if n.saturating_mul(self.elem_min_size(&f.base)) > cur.remaining() {
                return Err(cur.truncated(n));
            }
            let v = if f.base == Base::Prim(Prim::U8) {
                Value::Data(cur.bytes(n)?.to_vec())
            } else {
                spend(budget, n)?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.tree_one::<O>(&f.base, cur, limits, depth, budget)?);
                }
                Value::List(items)
            };
            out.push((f.name.clone(), v));
        }
        Ok(Value::Struct(out))
    }

    fn tree_one<O: Order>(
        &self,
        base: &Base,
        cur: &mut Cur<'_>,
        limits: &Limits,
        depth: u32,
        budget: &mut usize,
    ) -> Result<Value, DecodeError> {
        Ok(match base {
            Base::Prim(Prim::Bool) => Value::Bool(cur.take::<O, 1>()?[0] != 0),
            Base::Prim(p) => match cur.prim::<O>(*p)? {
                Scalar::Int(v) => Value::Int(v),
                Scalar::UInt(v) => Value::UInt(v),
                Scalar::Float(v) => Value::Float(v),
            },
            Base::Str { wide: false } => {
                Value::Text(String::from_utf8_lossy(cur.string::<O>(false)?).into_owned())
            }
            Base::Str { wide: true } => {
                let b = cur.string::<O>(true)?;
                let mut units: Vec<u16> = b.chunks_exact(2).map(|c| O::u16([c[0], c[1]])).collect();
                if units.last() == Some(&0) {
                    units.pop();
                }
                Value::Text(String::from_utf16_lossy(&units))
            }
            Base::Msg(m) => self.tree_struct::<O>(*m, cur, limits, depth + 1, budget, false)?,
        })
    }
}

/// A time's seconds and nanoseconds as nanoseconds (saturating).
#[inline]
pub(crate) fn time_ns(sec: Scalar, nanosec: Scalar) -> i64 {
    let whole = |v: Scalar| match v {
        Scalar::Int(v) => v,
        Scalar::UInt(v) => i64::try_from(v).unwrap_or(i64::MAX),
        Scalar::Float(v) => v as i64,
    };
    whole(sec)
        .saturating_mul(1_000_000_000)
        .saturating_add(whole(nanosec))
}

fn spend(budget: &mut usize, n: usize) -> Result<(), DecodeError> {
    *budget = budget
        .checked_sub(n)
        .ok_or_else(|| DecodeError::limit("values in one tree", MAX_TREE_VALUES as u64))?;
    Ok(())
}
