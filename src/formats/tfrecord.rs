//! TFRecord framing (<https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/lib/io/record_writer.cc>), as `tf.io.TFRecordWriter` writes it.
//!
//! Each record is `u64 LE length`, `masked CRC-32C of those 8 bytes`, the data, and
//! `masked CRC-32C of the data`; records are concatenated with no header or trailer.
//! Reading checks both checksums and never allocates from a claimed length: the length
//! is compared with the bytes actually left first. Records are handed out lazily as
//! [`Bytes`] slices of the input, so a memory-mapped multi-gigabyte log is walked in
//! bounded memory.
//!
//! ```
//! use tfreq::formats::{frame, Records};
//! let file = frame([&b"hello"[..], b"", b"world"]);
//! let data: Vec<_> = Records::new(file.into()).map(|r| r.map(|r| r.data)).collect::<Result<_, _>>()?;
//! assert_eq!(data, vec![&b"hello"[..], b"", b"world"]);
//! # Ok::<(), tfreq::formats::TfRecordError>(())
//! ```

use bytes::Bytes;

pub use crate::error::TfRecordError;

/// Bytes of a record header: length (8) + its masked CRC (4).
pub const HEADER_LEN: usize = 12;
/// Bytes of a record footer: the data's masked CRC.
pub const FOOTER_LEN: usize = 4;

const MASK_DELTA: u32 = 0xa282_ead8;

/// TensorFlow's CRC mask: rotate right by 15, add a constant.
///
/// ```
/// use tfreq::formats::{mask, unmask};
/// assert_eq!(unmask(mask(0xE306_9283)), 0xE306_9283);
/// ```
pub fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverse of [`mask`].
pub fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

/// The masked CRC-32C of `data`, as stored in a TFRecord.
pub fn masked_crc(data: &[u8]) -> u32 {
    mask(crc32c(data))
}

/// The CRC-32C (Castagnoli, "iSCSI") of `data`, unmasked.
pub(crate) fn crc32c(data: &[u8]) -> u32 {
    crate::crc32c::checksum(data)
}

/// One record read from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRecord {
    /// Record number, from 0.
    pub index: usize,
    /// Byte offset of the record's header in the file.
    pub offset: usize,
    /// The data: a view into the input, not a copy.
    pub data: Bytes,
    /// The masked CRC of the data stored in the file.
    pub stored_crc: u32,
}

impl RawRecord {
    /// Byte offset of the data in the file.
    pub fn data_offset(&self) -> usize {
        self.offset + HEADER_LEN
    }

    /// Checks the data against its stored CRC (for records read with
    /// [`Records::defer_data_check`]).
    pub fn verify(&self) -> Result<(), TfRecordError> {
        check_data(self.index, self.offset, self.stored_crc, &self.data)
    }
}

/// Checks a record's data against the CRC stored after it.
///
/// Data larger than [`crate::par::RELEASE_STEP`] is checked a step at a time, each
/// step's pages given back once read when it lies in a mapped input (so checking a
/// gigabyte record keeps a resident set of megabytes).
fn check_data(record: usize, offset: usize, stored: u32, data: &[u8]) -> Result<(), TfRecordError> {
    let computed = if data.len() <= crate::par::RELEASE_STEP {
        masked_crc(data)
    } else {
        let mut crc = crate::crc32c::Digest::new();
        for step in crate::par::steps(data, crate::par::RELEASE_STEP) {
            crc.update(step);
        }
        mask(crc.finalize())
    };
    if computed == stored {
        Ok(())
    } else {
        Err(TfRecordError::DataCrc {
            record,
            offset,
            stored,
            computed,
        })
    }
}

fn le_u32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(b);
    u32::from_le_bytes(a)
}

fn le_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    u64::from_le_bytes(a)
}

/// Reads TFRecord records one at a time from a stream (a pipe, standard input, an
/// inflating reader), in memory bounded by the longest record: the framing and both
/// checksums are checked as [`Records`] checks them, and a record longer than
/// `max_record` bytes is refused before its data is read. Offsets are those of the
/// stream.
///
/// ```
/// use tfreq::formats::{frame, RecordReader};
/// let file = frame([&b"hello"[..], b"", b"world"]);
/// let data: Vec<_> = RecordReader::new(&file[..], 1 << 20)
///     .map(|r| r.map(|r| r.data))
///     .collect::<Result<_, _>>()?;
/// assert_eq!(data, vec![&b"hello"[..], b"", b"world"]);
/// // A stream cut short is an error naming the record.
/// let err = RecordReader::new(&file[..file.len() - 2], 1 << 20).last().unwrap().unwrap_err();
/// assert!(err.to_string().contains("record 2"), "{err}");
/// # Ok::<(), tfreq::Error>(())
/// ```
#[derive(Debug)]
pub struct RecordReader<R> {
    r: R,
    index: usize,
    offset: u64,
    max_record: u64,
    done: bool,
}

impl<R: std::io::Read> RecordReader<R> {
    /// Reads records from `r`, refusing one longer than `max_record` bytes.
    pub fn new(r: R, max_record: u64) -> Self {
        RecordReader {
            r,
            index: 0,
            offset: 0,
            max_record,
            done: false,
        }
    }

    /// Bytes of the stream read so far (the end of the last record read).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads the next record's data into `data` (reused, so a long walk allocates once
    /// per size), returning its number and the offset of its header; `None` at the end
    /// of the stream.
    pub fn next_into(
        &mut self,
        data: &mut Vec<u8>,
    ) -> Result<Option<(usize, usize)>, crate::error::Error> {
        if self.done {
            return Ok(None);
        }
        let (index, at) = (self.index, self.offset as usize);
        let fail = |s: &mut Self, e: crate::error::Error| {
            s.done = true;
            Err(e)
        };
        let mut header = [0u8; HEADER_LEN];
        let got = match fill(&mut self.r, &mut header) {
            Ok(n) => n,
            Err(e) => return fail(self, e),
        };
        if got == 0 {
            self.done = true;
            return Ok(None);
        }
        if got < HEADER_LEN {
            let e = TfRecordError::TruncatedHeader {
                record: index,
                offset: at,
                available: got,
            };
            return fail(self, e.into());
        }
        let stored = le_u32(&header[8..12]);
        let computed = masked_crc(&header[..8]);
        if stored != computed {
            let e = TfRecordError::LengthCrc {
                record: index,
                offset: at,
                stored,
                computed,
            };
            return fail(self, e.into());
        }
        let length = le_u64(&header[..8]);
        if length > self.max_record {
            let e = TfRecordError::TooLong {
                record: index,
                offset: at,
                length,
                limit: self.max_record,
            };
            return fail(self, e.into());
        }
        data.resize(length as usize, 0);
        let mut footer = [0u8; FOOTER_LEN];
        let n = match fill(&mut self.r, data) {
            Ok(n) => n,
            Err(e) => return fail(self, e),
        };
        let m = if n == data.len() {
            match fill(&mut self.r, &mut footer) {
                Ok(m) => m,
                Err(e) => return fail(self, e),
            }
        } else {
            0
        };
        if n < data.len() || m < FOOTER_LEN {
            let e = TfRecordError::Truncated {
                record: index,
                offset: at,
                length,
                needed: length + FOOTER_LEN as u64,
                available: n + m,
            };
            return fail(self, e.into());
        }
        let stored = u32::from_le_bytes(footer);
        let computed = masked_crc(data);
        if stored != computed {
            let e = TfRecordError::DataCrc {
                record: index,
                offset: at,
                stored,
                computed,
            };
            return fail(self, e.into());
        }
        self.index += 1;
        self.offset += (HEADER_LEN + FOOTER_LEN) as u64 + length;
        Ok(Some((index, at)))
    }
}

impl<R: std::io::Read> Iterator for RecordReader<R> {
    type Item = Result<RawRecord, crate::error::Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut data = Vec::new();
        match self.next_into(&mut data) {
            Ok(Some((index, offset))) => {
                let stored_crc = masked_crc(&data);
                Some(Ok(RawRecord {
                    index,
                    offset,
                    data: Bytes::from(data),
                    stored_crc,
                }))
            }
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// Fills `buf` from `r`, or as much as the stream has left; a read error is an error
/// naming how far the stream got.
fn fill(r: &mut impl std::io::Read, buf: &mut [u8]) -> Result<usize, crate::error::Error> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(crate::error::ErrorDetail::Format(e.to_string()).into());
            }
        }
    }
    Ok(n)
}

/// Whether `bytes` starts with a TFRecord header whose length checksum is right (the
/// first record's length CRC: a 1 in 2^32 chance for other data).
///
/// ```
/// use tfreq::formats::{frame, is_tfrecord};
/// assert!(is_tfrecord(&frame([&b"x"[..]])));
/// assert!(!is_tfrecord(b"\x0a\x01x"));
/// ```
pub fn is_tfrecord(bytes: &[u8]) -> bool {
    match (bytes.get(0..8), bytes.get(8..12)) {
        (Some(len), Some(crc)) => masked_crc(len) == le_u32(crc),
        _ => false,
    }
}

/// Where a record whose header passes its check, and whose successor's header does too
/// (or which ends the buffer), starts: the first such offset in `from..to`, looked for
/// byte by byte. A place to start walking a file from its middle: two length checksums
/// that hold by chance inside data are a 1 in 2^64 event, and a caller still checks that
/// the walk from the start of the file lands on it ([`Records::starting_at`]).
pub(crate) fn sync_at(buf: &[u8], from: usize, to: usize) -> Option<usize> {
    let header_ok = |p: usize| -> Option<usize> {
        let len = le_u64(buf.get(p..p.checked_add(8)?)?);
        // The record's end, if the buffer holds it: checked before the checksum, as it
        // rules out nearly every offset inside data (the eight bytes read as a length
        // past the buffer's end) for a comparison instead of a CRC.
        let end = usize::try_from(len)
            .ok()?
            .checked_add(p + HEADER_LEN + FOOTER_LEN)?;
        if end > buf.len() {
            return None;
        }
        let crc = le_u32(buf.get(p + 8..p + HEADER_LEN)?);
        (masked_crc(buf.get(p..p + 8)?) == crc).then_some(end)
    };
    (from..to.min(buf.len()))
        .find(|&p| header_ok(p).is_some_and(|next| next == buf.len() || header_ok(next).is_some()))
}

/// Iterates the records of a TFRecord file lazily, checking each as it goes. After the
/// first error it yields nothing more.
#[derive(Debug, Clone)]
pub struct Records {
    buf: Bytes,
    pos: usize,
    index: usize,
    failed: bool,
    check_data: bool,
    /// `Some(offset)`: the pages of a mapped input before the next record are given
    /// back as the walk goes (up to `offset` they have been); see
    /// [`Records::release_behind`].
    released: Option<usize>,
}

impl Records {
    /// Records of a whole file.
    pub fn new(buf: Bytes) -> Self {
        Records {
            buf,
            pos: 0,
            index: 0,
            failed: false,
            check_data: true,
            released: None,
        }
    }

    /// Gives back the pages of a mapped input behind the walk (every 8 MiB, in whole
    /// folios: `crate::par::Trail`), so a walk whose caller drops each record before
    /// asking for the next keeps a resident set of megabytes whatever the file's size.
    /// A record still held reads the same bytes (a given-back page of a read-only file
    /// mapping maps in again); bytes in memory are left alone.
    pub fn release_behind(mut self) -> Self {
        self.released = Some(self.pos);
        self
    }

    /// Records from byte `offset` of `buf` on, numbered from 0 there: a walk of part of
    /// a file from a record boundary (see [`sync_at`]).
    pub(crate) fn starting_at(buf: Bytes, offset: usize) -> Self {
        Records {
            pos: offset,
            ..Records::new(buf)
        }
    }

    /// Checks only the framing (length CRC, bounds) while iterating; the caller checks
    /// each record's data with [`RawRecord::verify`] (so that work can be spread over
    /// threads).
    pub fn defer_data_check(mut self) -> Self {
        self.check_data = false;
        self
    }

    /// Byte offset of the next record.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Checks the next record's framing (and, unless deferred, its data) and steps
    /// past it, giving where its data lies: no view of the buffer is made, so walking
    /// a shared buffer touches no reference count.
    pub(crate) fn next_frame(&mut self) -> Option<Result<Frame, TfRecordError>> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let r = self.read_frame();
        self.failed = r.is_err();
        Some(r)
    }

    fn read_frame(&mut self) -> Result<Frame, TfRecordError> {
        let record = self.index;
        let offset = self.pos;
        let rest = self.buf.get(offset..).unwrap_or_default();
        let (Some(len_bytes), Some(crc_bytes)) = (rest.get(0..8), rest.get(8..12)) else {
            return Err(TfRecordError::TruncatedHeader {
                record,
                offset,
                available: rest.len(),
            });
        };
        let stored = le_u32(crc_bytes);
        let computed = masked_crc(len_bytes);
        if stored != computed {
            return Err(TfRecordError::LengthCrc {
                record,
                offset,
                stored,
                computed,
            });
        }
        let length = le_u64(len_bytes);
        let available = rest.len() - HEADER_LEN;
        let needed = length.saturating_add(FOOTER_LEN as u64);
        if needed > available as u64 {
            return Err(TfRecordError::Truncated {
                record,
                offset,
                length,
                needed,
                available,
            });
        }
        // length + 4 <= available <= usize::MAX
        let length = length as usize;
        let footer = rest.get(HEADER_LEN + length..HEADER_LEN + length + FOOTER_LEN);
        let Some(footer) = footer else {
            // Unreachable: `needed <= available` was checked above.
            return Err(TfRecordError::Truncated {
                record,
                offset,
                length: length as u64,
                needed,
                available,
            });
        };
        let frame = Frame {
            index: record,
            offset,
            length,
            stored_crc: le_u32(footer),
        };
        if self.check_data {
            frame.verify(&self.buf)?;
        }
        self.pos = frame.end();
        self.index += 1;
        Ok(frame)
    }
}

/// Where one record's data lies in its file: a [`RawRecord`] without the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Frame {
    /// Record number, from 0.
    pub index: usize,
    /// Byte offset of the record's header in the file.
    pub offset: usize,
    /// Bytes of data.
    pub length: usize,
    /// The masked CRC of the data stored in the file.
    pub stored_crc: u32,
}

impl Frame {
    fn data_offset(&self) -> usize {
        self.offset + HEADER_LEN
    }

    /// Byte offset just past the record (its footer included).
    pub fn end(&self) -> usize {
        self.data_offset() + self.length + FOOTER_LEN
    }

    /// The record's data in `file`, the buffer it was read from (or another over the
    /// same file).
    pub fn data<'a>(&self, file: &'a [u8]) -> &'a [u8] {
        let start = self.data_offset();
        file.get(start..start + self.length).unwrap_or_default()
    }

    /// Checks the record's data in `file` (see [`Frame::data`]) against its stored CRC.
    pub fn verify(&self, file: &[u8]) -> Result<(), TfRecordError> {
        check_data(self.index, self.offset, self.stored_crc, self.data(file))
    }

    /// The record, its data a view of `file` (the buffer it was read from, or any
    /// `Bytes` over the same file).
    pub fn record_in(&self, file: &Bytes) -> RawRecord {
        let start = self.data_offset();
        RawRecord {
            index: self.index,
            offset: self.offset,
            data: file.slice(start..start + self.length),
            stored_crc: self.stored_crc,
        }
    }
}

impl Iterator for Records {
    type Item = Result<RawRecord, TfRecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(from) = self.released {
            // The records before `pos` have been handed out and dropped.
            if self.pos.saturating_sub(from) >= crate::par::RELEASE_STEP {
                crate::par::release_between(&self.buf, from, self.pos);
                self.released = Some(self.pos);
            }
        }
        let frame = self.next_frame()?;
        Some(frame.map(|f| f.record_in(&self.buf)))
    }
}

/// Appends one framed record to `out`.
pub fn write_record(out: &mut Vec<u8>, data: &[u8]) {
    let len = (data.len() as u64).to_le_bytes();
    out.reserve(HEADER_LEN + data.len() + FOOTER_LEN);
    out.extend_from_slice(&len);
    out.extend_from_slice(&masked_crc(&len).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&masked_crc(data).to_le_bytes());
}

/// Frames every item as a record, in order: a whole TFRecord file.
pub fn frame<'a>(records: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for r in records {
        write_record(&mut out, r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn crc32c_check_value() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    }

    #[test]
    fn spec_vector_10_2() {
        let req = hex(
            "0a180a016d120208031a0f73657276696e675f64656661756c74121b0a017812160801120812020801120208022a080000803f000000401a0179",
        );
        let mut log = hex("323c0a3a");
        log.extend_from_slice(&req);
        assert_eq!(log.len(), 62);
        let file = frame([&log[..]]);
        assert_eq!(&file[..12], &hex("3e00000000000000 d9d240e7")[..]);
        assert_eq!(&file[12 + 62..], &hex("8cdf4969")[..]);
        let recs: Vec<_> = Records::new(Bytes::from(file)).collect();
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].as_ref().unwrap().data, log);
    }

    #[test]
    fn absurd_length_is_an_error_not_an_allocation() {
        let len = u64::MAX.to_le_bytes();
        let mut file = len.to_vec();
        file.extend_from_slice(&masked_crc(&len).to_le_bytes());
        file.extend_from_slice(b"abcd");
        let err = Records::new(Bytes::from(file)).next().unwrap().unwrap_err();
        assert!(
            matches!(err, TfRecordError::Truncated { record: 0, .. }),
            "{err}"
        );
    }

    #[test]
    fn errors_name_record_and_offset() {
        let mut file = frame([&b"one"[..], b"two", b"three"]);
        // Flip a data byte of record 1 (offset 19; its data starts at 31).
        file[31] ^= 1;
        let r: Vec<_> = Records::new(Bytes::from(file.clone())).collect();
        assert_eq!(r.len(), 2);
        let err = r[1].clone().unwrap_err();
        assert_eq!((err.record(), err.offset()), (1, 19));
        assert!(matches!(err, TfRecordError::DataCrc { .. }));
        file[31] ^= 1;
        // Truncate inside record 2.
        let cut = file.len() - 3;
        let err = Records::new(Bytes::from(file[..cut].to_vec()))
            .nth(2)
            .unwrap()
            .unwrap_err();
        assert_eq!((err.record(), err.offset()), (2, 38));
        assert!(err.to_string().contains("record 2"), "{err}");
        // A length byte flipped.
        file[38] ^= 0x40;
        let err = Records::new(Bytes::from(file)).nth(2).unwrap().unwrap_err();
        assert!(matches!(err, TfRecordError::LengthCrc { record: 2, .. }));
    }
}
