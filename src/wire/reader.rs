//! A bounds-checked protobuf wire reader that knows byte offsets.
//!
//! It never allocates from a claimed length: a length is checked against the bytes
//! actually left before anything is sliced, and slices of the input are `Bytes`
//! views, not copies.

use bytes::Bytes;

use crate::wire::error::{DecodeError, DecodeErrorKind};

/// How deep messages may nest (as protobuf C++).
pub const RECURSION_LIMIT: usize = 100;

/// One field value as it appears on the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum WireValue {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1.
    I64(u64),
    /// Wire type 2: the payload, a view into the input.
    Len(Bytes),
    /// Wire type 5.
    I32(u32),
    /// Wire types 3..4: a whole group, kept raw.
    Group(Bytes),
}

impl WireValue {
    /// The protobuf wire type number.
    pub fn wire_type(&self) -> u8 {
        match self {
            WireValue::Varint(_) => 0,
            WireValue::I64(_) => 1,
            WireValue::Len(_) => 2,
            WireValue::Group(_) => 3,
            WireValue::I32(_) => 5,
        }
    }
}

/// A field read from a message.
#[derive(Debug, Clone)]
pub struct WireField {
    /// Field number.
    pub number: u32,
    /// Absolute offset of the tag.
    pub offset: usize,
    /// Absolute offset of the value (after the tag, and after the length for LEN).
    pub value_offset: usize,
    /// The value.
    pub value: WireValue,
}

/// Reads fields from one message's bytes.
pub struct Reader {
    buf: Bytes,
    pos: usize,
    /// Absolute offset of `buf[0]` in the whole input.
    base: usize,
    depth: usize,
}

impl Reader {
    /// A reader over a whole input.
    pub fn new(buf: Bytes) -> Self {
        Reader {
            buf,
            pos: 0,
            base: 0,
            depth: 0,
        }
    }

    /// A reader over a message at absolute offset `base`, nested `depth` levels deep.
    pub fn at(buf: Bytes, base: usize, depth: usize) -> Result<Self, DecodeError> {
        if depth > RECURSION_LIMIT {
            return Err(DecodeError::new(
                DecodeErrorKind::TooDeep(RECURSION_LIMIT),
                base,
            ));
        }
        Ok(Reader {
            buf,
            pos: 0,
            base,
            depth,
        })
    }

    /// A reader over an embedded message at absolute offset `base`, one level deeper.
    pub fn nested(&self, buf: Bytes, base: usize) -> Result<Self, DecodeError> {
        Reader::at(buf, base, self.depth + 1)
    }

    /// Absolute offset of the next byte.
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    fn err(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(kind, self.offset())
    }

    /// Reads a varint.
    pub fn varint(&mut self) -> Result<u64, DecodeError> {
        let start = self.offset();
        read_varint(&self.buf, &mut self.pos).map_err(|fault| fault.at(start))
    }

    fn take(&mut self, n: u64, what: &'static str) -> Result<Bytes, DecodeError> {
        let left = (self.buf.len() - self.pos) as u64;
        if n > left {
            return Err(self.err(DecodeErrorKind::Truncated {
                what,
                needed: n,
                available: left,
            }));
        }
        // n <= left <= usize::MAX
        let n = n as usize;
        let b = self.buf.slice(self.pos..self.pos + n);
        self.pos += n;
        Ok(b)
    }

    /// The next `N` bytes as an array (a fixed64 / fixed32 value): the length is in
    /// the type, so no short slice is ever padded.
    fn take_array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], DecodeError> {
        // pos <= buf.len(): every advance goes through `take`, `take_array` or the
        // varint reader, each of which checks what is left first.
        let left = &self.buf[self.pos..];
        match left.first_chunk::<N>() {
            Some(a) => {
                let a = *a;
                self.pos += N;
                Ok(a)
            }
            None => Err(self.err(DecodeErrorKind::Truncated {
                what,
                needed: N as u64,
                available: left.len() as u64,
            })),
        }
    }

    /// Whether the message has no more bytes.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Reads the next field; an error in its value names the field (from `names`, by
    /// number, or `field N`) in the error's path.
    pub fn next_field_named(
        &mut self,
        names: &[(u32, &'static str)],
    ) -> Result<Option<WireField>, DecodeError> {
        let start = self.pos;
        match self.next_field() {
            Err(e) if self.pos > start || e.offset() > self.base + start => {
                // Re-read the tag to learn the number (the tag itself parsed).
                let mut r = Reader {
                    buf: self.buf.clone(),
                    pos: start,
                    base: self.base,
                    depth: self.depth,
                };
                match r.varint() {
                    Ok(tag) if e.offset() > self.base + start => {
                        let n = (tag >> 3) as u32;
                        let name = names
                            .iter()
                            .find(|(k, _)| *k == n)
                            .map(|(_, v)| v.to_string());
                        Err(e.within(name.unwrap_or_else(|| format!("field {n}"))))
                    }
                    _ => Err(e),
                }
            }
            other => other,
        }
    }

    /// Reads the length-delimited fields that follow, as long as each has the one-byte
    /// tag `tag` (a field number below 16, wire type 2: a repeated `bytes` field such as
    /// `string_val`) and reads whole, pushing their payloads onto `out`: what
    /// [`Reader::next_field`] would read, one field at a time, without the field's
    /// bookkeeping. It stops before any other field, or one that does not read (the next
    /// `next_field` reports it).
    pub(crate) fn len_run(&mut self, tag: u8, out: &mut Vec<Bytes>) {
        while self.buf.get(self.pos) == Some(&tag) {
            let mut at = self.pos + 1;
            let Ok(len) = read_varint(&self.buf, &mut at) else {
                return;
            };
            let Some(end) = usize::try_from(len)
                .ok()
                .and_then(|n| at.checked_add(n))
                .filter(|&e| e <= self.buf.len())
            else {
                return;
            };
            out.push(self.buf.slice(at..end));
            self.pos = end;
        }
    }

    /// Reads the next field, or `None` at the end of the message.
    pub fn next_field(&mut self) -> Result<Option<WireField>, DecodeError> {
        if self.is_empty() {
            return Ok(None);
        }
        let offset = self.offset();
        let tag = self.varint()?;
        let number = tag >> 3;
        if number == 0 || number > (1 << 29) - 1 {
            return Err(DecodeError::new(
                DecodeErrorKind::BadFieldNumber(number),
                offset,
            ));
        }
        let number = number as u32;
        let wt = (tag & 7) as u8;
        let value = match wt {
            0 => WireValue::Varint(self.varint()?),
            1 => WireValue::I64(u64::from_le_bytes(self.take_array("fixed64 value")?)),
            2 => {
                let len = self.varint()?;
                WireValue::Len(self.take(len, "length-delimited field")?)
            }
            3 => WireValue::Group(self.group(number, offset)?),
            5 => WireValue::I32(u32::from_le_bytes(self.take_array("fixed32 value")?)),
            w => return Err(DecodeError::new(DecodeErrorKind::BadWireType(w), offset)),
        };
        let value_offset = match &value {
            WireValue::Len(b) => self.offset() - b.len(),
            _ => offset,
        };
        Ok(Some(WireField {
            number,
            offset,
            value_offset,
            value,
        }))
    }

    /// Skips a group body up to its end tag; returns the raw body.
    fn group(&mut self, number: u32, start: usize) -> Result<Bytes, DecodeError> {
        let body_start = self.pos;
        let mut depth = 1usize;
        loop {
            if self.is_empty() {
                return Err(DecodeError::new(
                    DecodeErrorKind::Other(format!("group (field {number}) is never closed")),
                    start,
                ));
            }
            let at = self.offset();
            let tag = self.varint()?;
            match tag & 7 {
                0 => {
                    self.varint()?;
                }
                1 => {
                    self.take(8, "fixed64 value")?;
                }
                2 => {
                    let len = self.varint()?;
                    self.take(len, "length-delimited field")?;
                }
                3 => {
                    depth += 1;
                    if depth > RECURSION_LIMIT {
                        return Err(DecodeError::new(
                            DecodeErrorKind::TooDeep(RECURSION_LIMIT),
                            at,
                        ));
                    }
                }
                4 => {
                    depth -= 1;
                    if depth == 0 {
                        let end = self.pos;
                        // body excludes the end tag
                        let tag_len = end - (at - self.base);
                        return Ok(self.buf.slice(body_start..end - tag_len));
                    }
                }
                5 => {
                    self.take(4, "fixed32 value")?;
                }
                w => {
                    return Err(DecodeError::new(DecodeErrorKind::BadWireType(w as u8), at));
                }
            }
        }
    }
}

/// Why [`read_varint`] could not read a varint.
pub(crate) enum VarintFault {
    /// The bytes ended after this many of its bytes.
    Truncated(usize),
    /// An eleventh byte, or a tenth above 1: more than 64 bits.
    Overlong,
}

impl VarintFault {
    /// The decoder's error for a varint that starts at byte `offset`.
    fn at(self, offset: usize) -> DecodeError {
        match self {
            VarintFault::Truncated(read) => DecodeError::new(
                DecodeErrorKind::Truncated {
                    what: "varint",
                    needed: read as u64 + 1,
                    available: read as u64,
                },
                offset,
            ),
            VarintFault::Overlong => DecodeError::new(DecodeErrorKind::BadVarint, offset),
        }
    }
}

/// The varint at `*pos` in `b` (at most ten bytes, the tenth 0 or 1), stepping `*pos`
/// past it: what [`Reader::varint`] reads, for readers of borrowed bytes too.
#[inline]
pub(crate) fn read_varint(b: &[u8], pos: &mut usize) -> Result<u64, VarintFault> {
    let mut v: u64 = 0;
    for i in 0..10 {
        let Some(&x) = b.get(*pos) else {
            return Err(VarintFault::Truncated(i));
        };
        *pos += 1;
        if i == 9 && x > 1 {
            return Err(VarintFault::Overlong);
        }
        v |= u64::from(x & 0x7f) << (7 * i);
        if x < 0x80 {
            return Ok(v);
        }
    }
    Err(VarintFault::Overlong)
}

/// Decodes a packed (or single unpacked) run of varints, checking every byte.
///
/// One pass counts the elements (every varint ends in exactly one byte below 0x80) so
/// `out` grows once, by exactly what the bytes hold; a tight loop over the slice then
/// decodes, one-byte varints on a fast path. Errors are the ones [`Reader::varint`]
/// gives, at the offset of the varint's first byte.
pub fn packed_varints(buf: &Bytes, base: usize, out: &mut Vec<u64>) -> Result<(), DecodeError> {
    out.reserve(buf.iter().filter(|&&x| x < 0x80).count());
    for_each_varint(buf, base, |v| out.push(v))
}

/// The decoding loop of [`packed_varints`], handing each value to `f`; the pages of a
/// mapped run are given back behind it.
pub(crate) fn for_each_varint(
    b: &[u8],
    base: usize,
    mut f: impl FnMut(u64),
) -> Result<(), DecodeError> {
    // A step at a time, the pages given back behind the pass (a mapped input).
    let mut trail = crate::par::Trail::new(b);
    let mut pos = 0usize;
    while pos < b.len() {
        let stop = pos.saturating_add(crate::par::RELEASE_STEP).min(b.len());
        while pos < stop {
            let Some(&first) = b.get(pos) else { break };
            // One-byte values (most of a typical run) without the general loop.
            if first < 0x80 {
                pos += 1;
                f(u64::from(first));
                continue;
            }
            let start = pos;
            f(read_varint(b, &mut pos).map_err(|fault| fault.at(base + start))?);
        }
        trail.read_to(pos);
    }
    Ok(())
}

/// Checks a packed run of varints without decoding it and returns how many it holds;
/// the error, if any, is exactly the one [`packed_varints`] gives.
///
/// Eight bytes at a time: the terminator bytes (high bit clear) are counted in one
/// counter per byte lane, and only a block where some aligned group of four bytes has no
/// terminator (a varint of five bytes or more) is looked at word by word. Big runs are
/// cut into [`crate::par::pieces`] pieces, each checked on its own thread.
pub fn count_varints(b: &[u8], base: usize) -> Result<usize, DecodeError> {
    match count_pieces(b, crate::par::pieces(b.len())) {
        Some(n) => Ok(n),
        // Something is wrong: let the decoding loop find it and say where.
        None => {
            for_each_varint(b, base, |_| {})?;
            Err(DecodeError::new(DecodeErrorKind::BadVarint, base))
        }
    }
}

/// Whether `b` is a packed run of varints [`packed_varints`] reads without error,
/// checked on this thread without decoding it.
pub(crate) fn valid_varints(b: &[u8]) -> bool {
    count_fast(b).is_some()
}

/// The count over `pieces` pieces, each on its own (scoped) thread, or `None` when the
/// bytes are not a valid packed run.
///
/// Each cut is placed just after a terminator byte, so every piece is a whole packed run
/// of its own and the counts add up. A valid run has a terminator in every ten bytes, so
/// the cut is found within ten bytes of where it was aimed, or the run is invalid.
fn count_pieces(b: &[u8], pieces: usize) -> Option<usize> {
    if pieces <= 1 {
        return count_fast(b);
    }
    let mut cuts = vec![0usize];
    for k in 1..pieces {
        let aim = b.len() / pieces * k;
        // Near the end, the last piece simply runs on.
        let Some(window) = b.get(aim..aim + 10) else {
            break;
        };
        let after = aim + window.iter().position(|&x| x < 0x80)? + 1;
        if after > cuts.last().copied().unwrap_or(0) {
            cuts.push(after);
        }
    }
    cuts.push(b.len());
    let parts: Vec<&[u8]> = cuts.windows(2).filter_map(|w| b.get(w[0]..w[1])).collect();
    let (first, rest) = parts.split_first()?;
    std::thread::scope(|s| {
        let others: Vec<_> = rest.iter().map(|p| s.spawn(|| count_fast(p))).collect();
        let mut total = count_fast(first)?;
        for h in others {
            total += h.join().ok()??;
        }
        Some(total)
    })
}

const HIGH: u64 = 0x8080_8080_8080_8080;

/// Terminator bytes in a word's terminator mask (bits 7, 15, ... only): a multiply
/// sums the eight 0/1 bytes into the top one (no popcount instruction needed).
#[inline(always)]
fn terminators(term: u64) -> usize {
    lane_sum(term >> 7)
}

/// The sum of a word's eight byte counters, when it is at most 255.
#[inline(always)]
fn lane_sum(lanes: u64) -> usize {
    (lanes.wrapping_mul(0x0101_0101_0101_0101) >> 56) as usize
}

/// The count, or `None` when the bytes are not a valid packed run.
fn count_fast(b: &[u8]) -> Option<usize> {
    let mut count = 0usize;
    // Continuation bytes since the last terminator.
    let mut run = 0u32;
    let whole = b.len() / BLOCK * BLOCK;
    let (blocks, rest) = b.split_at(whole);
    // Whole blocks a step, the pages given back behind the pass (a mapped input).
    for step in crate::par::steps(blocks, crate::par::RELEASE_STEP.div_ceil(BLOCK) * BLOCK) {
        for block in step.chunks_exact(BLOCK) {
            match dense_block(block) {
                // At most five carried in and three before the block's first terminator:
                // no varint over nine bytes crosses into it.
                Some((n, last)) if run <= 5 => {
                    count += n;
                    run = last.leading_zeros() / 8;
                }
                _ => count += count_words(block, &mut run)?,
            }
        }
    }
    let mut words = rest.chunks_exact(8);
    count += count_words_iter(&mut words, &mut run)?;
    for &x in words.remainder() {
        if x >= 0x80 {
            run += 1;
            if run > 9 {
                return None;
            }
        } else {
            if run == 9 && x > 1 {
                return None;
            }
            count += 1;
            run = 0;
        }
    }
    (run == 0).then_some(count)
}

/// Bytes per block of the fast path: 31 words, so the eight byte counters of a block
/// sum to at most 248 and [`lane_sum`] cannot overflow.
const BLOCK: usize = 31 * 8;

/// A block in which every aligned group of four bytes holds a terminator, so no run of
/// continuation bytes inside it is longer than six: its terminator count and its last
/// word's terminator mask. `None` when some group has none (a closer look is needed).
#[inline(always)]
fn dense_block(block: &[u8]) -> Option<(usize, u64)> {
    // Bit 7 of bytes 0 and 4, after the or-ing below: one bit per aligned group of four.
    const GROUPS: u64 = 0x0000_0080_0000_0080;
    let mut lanes = 0u64;
    let mut missing = 0u64;
    let mut last = 0u64;
    for w in block.chunks_exact(8) {
        let mut a = [0u8; 8];
        a.copy_from_slice(w);
        let term = !u64::from_le_bytes(a) & HIGH;
        lanes += term >> 7;
        let pairs = term | (term >> 8);
        missing |= !(pairs | (pairs >> 16)) & GROUPS;
        last = term;
    }
    (missing == 0).then(|| (lane_sum(lanes), last))
}

fn count_words(b: &[u8], run: &mut u32) -> Option<usize> {
    count_words_iter(&mut b.chunks_exact(8), run)
}

/// Word by word, following runs of continuation bytes across words exactly.
fn count_words_iter(words: &mut std::slice::ChunksExact<'_, u8>, run: &mut u32) -> Option<usize> {
    let mut count = 0usize;
    for w in words {
        let mut a = [0u8; 8];
        a.copy_from_slice(w);
        let term = !u64::from_le_bytes(a) & HIGH;
        if term == 0 {
            *run += 8;
            if *run > 9 {
                return None;
            }
            continue;
        }
        count += terminators(term);
        // Continuation bytes before this word's first terminator.
        let lead = (term.trailing_zeros() - 7) / 8;
        if *run + lead >= 9 {
            // A ten-byte varint (or longer): its last byte must be 0 or 1.
            let last = w.get(lead as usize).copied().unwrap_or(0xff);
            if *run + lead > 9 || last > 1 {
                return None;
            }
        }
        *run = term.leading_zeros() / 8;
    }
    Some(count)
}

/// A checked run of packed varints, kept as a view of the input and decoded on access
/// (what a gigabyte `int_val` costs: nothing until it is read).
///
/// Sequential reads ([`PackedVarints::iter`], or `get` element after element) decode
/// as they go; random access ([`PackedVarints::get`]) builds, on first use past the
/// start, an index of every 256th element's offset (1/256 of the elements, 8 bytes each).
#[derive(Clone)]
pub struct PackedVarints {
    bytes: Bytes,
    len: usize,
    index: std::sync::Arc<std::sync::OnceLock<Vec<usize>>>,
    /// Where the last `get` stopped: (next element, its byte offset), so reading
    /// element after element costs one varint each.
    cursor: std::sync::Arc<std::sync::Mutex<(usize, usize)>>,
}

const INDEX_STRIDE: usize = 256;

impl PackedVarints {
    /// Checks `bytes` (at absolute offset `base`, for errors) and keeps it as a view.
    pub fn new(bytes: Bytes, base: usize) -> Result<Self, DecodeError> {
        let len = count_varints(&bytes, base)?;
        Ok(PackedVarints {
            bytes,
            len,
            index: Default::default(),
            cursor: Default::default(),
        })
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The raw bytes (a view of the input).
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The values in order.
    pub fn iter(&self) -> VarintIter<'_> {
        self.iter_from(0, 0)
    }

    /// The values from the one whose first byte is at `pos`, which is value `index`.
    pub(crate) fn iter_from(&self, pos: usize, index: usize) -> VarintIter<'_> {
        VarintIter {
            b: &self.bytes,
            pos,
            left: self.len.saturating_sub(index),
        }
    }

    /// Value `i`.
    pub fn get(&self, i: usize) -> Option<u64> {
        if i >= self.len {
            return None;
        }
        // Just after the last read (the common pattern: element after element).
        if let Ok(mut c) = self.cursor.try_lock() {
            let (next, pos) = *c;
            if next <= i && i - next < INDEX_STRIDE {
                let mut it = VarintIter {
                    b: &self.bytes,
                    pos,
                    left: self.len - next,
                };
                let v = it.nth(i - next);
                *c = (i + 1, it.pos);
                return v;
            }
        }
        if i < INDEX_STRIDE {
            return self.iter().nth(i);
        }
        let index = self.index.get_or_init(|| {
            let mut idx = Vec::with_capacity(self.len / INDEX_STRIDE + 1);
            let mut it = self.iter();
            for k in 0..self.len {
                if k % INDEX_STRIDE == 0 {
                    idx.push(it.pos);
                }
                if it.next().is_none() {
                    break;
                }
            }
            idx
        });
        let pos = *index.get(i / INDEX_STRIDE)?;
        let mut it = VarintIter {
            b: &self.bytes,
            pos,
            left: self.len - (i - i % INDEX_STRIDE),
        };
        let v = it.nth(i % INDEX_STRIDE);
        if let Ok(mut c) = self.cursor.try_lock() {
            *c = (i + 1, it.pos);
        }
        v
    }
}

impl PartialEq for PackedVarints {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl std::fmt::Debug for PackedVarints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PackedVarints({} values, {} bytes)",
            self.len,
            self.bytes.len()
        )
    }
}

/// Iterator over checked packed varints (see [`PackedVarints::iter`]).
#[derive(Debug)]
pub struct VarintIter<'a> {
    b: &'a [u8],
    pos: usize,
    /// Values left (exact: the run was counted when checked).
    left: usize,
}

impl VarintIter<'_> {
    /// The byte offset of the next value in the run.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }
}

impl Iterator for VarintIter<'_> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        let first = *self.b.get(self.pos)?;
        self.pos += 1;
        self.left = self.left.saturating_sub(1);
        if first < 0x80 {
            return Some(u64::from(first));
        }
        let mut v = u64::from(first & 0x7f);
        let mut shift = 7u32;
        // The bytes were checked: at most ten, and they end.
        while let Some(&x) = self.b.get(self.pos) {
            self.pos += 1;
            v |= u64::from(x & 0x7f).checked_shl(shift).unwrap_or(0);
            if x < 0x80 {
                break;
            }
            shift += 7;
        }
        Some(v)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for VarintIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fields_and_offsets() {
        let mut r = Reader::new(Bytes::from_static(&[
            0x08, 0x96, 0x01, 0x12, 0x02, b'h', b'i',
        ]));
        let f = r.next_field().unwrap().unwrap();
        assert_eq!(f.number, 1);
        assert!(matches!(f.value, WireValue::Varint(150)));
        let f = r.next_field().unwrap().unwrap();
        assert_eq!((f.number, f.offset, f.value_offset), (2, 3, 5));
        assert!(r.next_field().unwrap().is_none());
    }

    #[test]
    fn claimed_length_beyond_input_is_an_error_not_an_allocation() {
        // field 2, LEN, length 2^60
        let mut buf = vec![0x12];
        let mut n: u64 = 1 << 60;
        while n >= 0x80 {
            buf.push((n as u8) | 0x80);
            n >>= 7;
        }
        buf.push(n as u8);
        let err = Reader::new(Bytes::from(buf)).next_field().unwrap_err();
        assert!(
            matches!(err.kind(), DecodeErrorKind::Truncated { .. }),
            "{err}"
        );
    }

    #[test]
    fn overlong_varint() {
        let buf = Bytes::from(vec![
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
        ]);
        let err = Reader::new(buf).next_field().unwrap_err();
        assert_eq!(err.kind(), &DecodeErrorKind::BadVarint);
        assert_eq!(err.offset(), 1);
    }

    #[test]
    fn packed_varints_agree_with_the_reader() {
        let mut cases: Vec<Vec<u8>> = vec![
            vec![],
            vec![0x00, 0x7f, 0x80, 0x01, 0xff, 0xff, 0x03],
            vec![0xff; 9].into_iter().chain([0x01]).collect(), // u64::MAX
            vec![0xff; 9].into_iter().chain([0x02]).collect(), // overlong
            vec![0x05, 0x80],                                  // truncated
            vec![0xff; 12],
        ];
        let mut all = Vec::new();
        for v in [0u64, 1, 127, 128, 300, 1 << 35, u64::MAX] {
            crate::wire::writer::put_varint(&mut all, v);
        }
        cases.push(all);
        for case in cases {
            let bytes = Bytes::from(case.clone());
            let mut fast = Vec::new();
            let fast = packed_varints(&bytes, 7, &mut fast).map(|_| fast);
            let mut r = Reader {
                buf: bytes,
                pos: 0,
                base: 7,
                depth: 0,
            };
            let mut slow = Vec::new();
            let slow = loop {
                if r.is_empty() {
                    break Ok(slow);
                }
                match r.varint() {
                    Ok(v) => slow.push(v),
                    Err(e) => break Err(e),
                }
            };
            assert_eq!(fast, slow, "{case:02x?}");
        }
    }

    #[test]
    fn a_run_big_enough_for_threads_counts_and_fails_as_one_thread_does() {
        // 2-byte varints (300) past the size where the run is cut into pieces.
        let n = crate::par::PARALLEL_MIN / 2 + 12_345;
        let mut b = Vec::with_capacity(2 * n);
        for _ in 0..n {
            crate::wire::writer::put_varint(&mut b, 300);
        }
        assert_eq!(count_varints(&b, 0), Ok(n));
        for pieces in [2, 5] {
            assert_eq!(count_pieces(&b, pieces), Some(n));
        }
        // Eleven continuation bytes three quarters in: the error of the decoding loop.
        let at = b.len() / 4 * 3;
        b[at..at + 11].fill(0xff);
        let one = for_each_varint(&b, 9, |_| {});
        let err = count_varints(&b, 9).unwrap_err();
        assert_eq!(Err(err.clone()), one);
        assert!(err.offset() >= 9 + at - 1, "{err}");
    }

    proptest::proptest! {
        #[test]
        fn count_and_view_agree_with_the_decoder(
            vals in proptest::collection::vec(proptest::num::u64::ANY, 0..120),
            shift in 0u32..64,
            junk in proptest::collection::vec(proptest::num::u8::ANY, 0..24),
            cut in 0usize..400,
        ) {
            let mut b = Vec::new();
            for v in &vals {
                crate::wire::writer::put_varint(&mut b, v >> shift);
            }
            // Valid runs, cut or followed by junk (often malformed).
            let mut cases = vec![b.clone()];
            let mut c = b.clone();
            c.truncate(cut.min(b.len()));
            cases.push(c);
            let mut j = b.clone();
            j.extend_from_slice(&junk);
            cases.push(j);
            cases.push(junk.clone());
            for case in cases {
                let bytes = Bytes::from(case.clone());
                let mut out = Vec::new();
                let slow = packed_varints(&bytes, 3, &mut out).map(|_| out.clone());
                let counted = count_varints(&bytes, 3);
                // Cut into pieces (as a gigabyte is), the count and the verdict agree.
                for pieces in [2, 3, 7] {
                    proptest::prop_assert_eq!(count_pieces(&bytes, pieces), counted.clone().ok());
                }
                match &slow {
                    Ok(v) => {
                        proptest::prop_assert_eq!(counted.clone().ok(), Some(v.len()));
                        let p = PackedVarints::new(bytes.clone(), 3).unwrap();
                        proptest::prop_assert_eq!(&p.iter().collect::<Vec<_>>(), v);
                        for (i, x) in v.iter().enumerate() {
                            proptest::prop_assert_eq!(p.get(i), Some(*x));
                        }
                        proptest::prop_assert_eq!(p.get(v.len()), None);
                    }
                    Err(e) => proptest::prop_assert_eq!(counted.err(), Some(e.clone())),
                }
            }
        }
    }

    #[test]
    fn random_access_past_the_index_stride() {
        let mut b = Vec::new();
        for v in 0..5000u64 {
            crate::wire::writer::put_varint(&mut b, v * v);
        }
        let p = PackedVarints::new(Bytes::from(b), 0).unwrap();
        assert_eq!(p.len(), 5000);
        for i in [0, 255, 256, 257, 1023, 1024, 4999, 10, 300, 301, 4000, 4001] {
            assert_eq!(p.get(i), Some((i * i) as u64));
        }
        assert_eq!(p.get(5000), None);
    }

    #[test]
    fn unclosed_group() {
        let err = Reader::new(Bytes::from_static(b"\x73\x08\x01"))
            .next_field()
            .unwrap_err();
        assert!(err.to_string().contains("never closed"), "{err}");
    }
}
