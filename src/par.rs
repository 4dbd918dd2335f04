//! Big byte runs split over the cores: a gigabyte of packed varints is checked, and two
//! gigabyte tensors compared, by one scoped thread per core, because one core cannot
//! fault in and read the pages of a mapped file as fast as the kernel copies them
//! (`cat`). Runs under [`PARALLEL_MIN`] bytes stay on the calling thread.
//!
//! Long passes over a mapped input give its pages back behind them ([`Trail`],
//! [`steps`]), so reading a gigabyte file keeps a resident set of megabytes.

use std::sync::Mutex;

/// Runs from this many bytes up are split over more than one thread.
pub const PARALLEL_MIN: usize = 16 << 20;

/// At most this many threads work on one run.
const MAX_THREADS: usize = 8;

/// How many pieces a run of `len` bytes is cut into: one per core, each at least half
/// of [`PARALLEL_MIN`], at most eight; 1 below [`PARALLEL_MIN`].
pub fn pieces(len: usize) -> usize {
    if len < PARALLEL_MIN {
        return 1;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (len / (PARALLEL_MIN / 2)).clamp(1, cores.min(MAX_THREADS))
}

/// Whether two byte runs are equal, compared piece by piece on [`pieces`] threads.
pub fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && first_difference(a, b).is_none()
}

/// The offset of the first byte where `a` and `b` differ — the shorter one's length
/// when it is a prefix of the other — or `None` when they are equal; compared piece by
/// piece on [`pieces`] threads, the pages given back behind (see [`Trail`]).
pub fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    first_difference_in(a, b, pieces(a.len().min(b.len())))
}

fn first_difference_in(a: &[u8], b: &[u8], pieces: usize) -> Option<usize> {
    let n = a.len().min(b.len());
    let lengths_differ = a.len() != b.len();
    let (a, b) = (&a[..n], &b[..n]);
    let common = if pieces <= 1 {
        first_difference_releasing(a, b)
    } else {
        let step = n.div_ceil(pieces).max(1);
        std::thread::scope(|s| {
            let mut halves = a.chunks(step).zip(b.chunks(step));
            let first = halves.next();
            let others: Vec<_> = halves
                .map(|(x, y)| s.spawn(move || first_difference_releasing(x, y)))
                .collect();
            let mine = first.and_then(|(x, y)| first_difference_releasing(x, y));
            // Every thread is joined (a scope would join them anyway); the earliest
            // difference wins, and a piece whose thread failed counts as differing
            // at its start (a caller then looks closer from there).
            let later = others.into_iter().enumerate().find_map(|(k, h)| {
                let at = (k + 1) * step;
                h.join().map_or(Some(at), |d| d.map(|d| at + d))
            });
            mine.or(later)
        })
    };
    common.or(lengths_differ.then_some(n))
}

/// [`first_difference`] of two runs of one length on this thread, [`RELEASE_STEP`]
/// bytes at a time, the pages of both given back behind the comparison.
fn first_difference_releasing(a: &[u8], b: &[u8]) -> Option<usize> {
    let pairs = steps(a, RELEASE_STEP).zip(steps(b, RELEASE_STEP));
    for (k, (x, y)) in pairs.enumerate() {
        if x != y {
            let d = x.iter().zip(y).position(|(p, q)| p != q)?;
            return Some(k * RELEASE_STEP + d);
        }
    }
    None
}

/// Address ranges `[start, end)` of the read-only file mappings alive now (the inputs
/// `crate::io` maps): [`release`] touches memory only inside one of them.
static MAPPED: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

fn mapped() -> std::sync::MutexGuard<'static, Vec<(usize, usize)>> {
    MAPPED.lock().unwrap_or_else(|p| p.into_inner())
}

/// A read-only file mapping, listed for [`release`] while it lives.
pub(crate) struct Mapped(memmap2::Mmap);

impl Mapped {
    /// Lists `map` (it must be a read-only mapping of a file, as `memmap2::Mmap::map`
    /// makes).
    pub(crate) fn new(map: memmap2::Mmap) -> Mapped {
        let start = map.as_ptr() as usize;
        mapped().push((start, start + map.len()));
        Mapped(map)
    }
}

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        let start = self.0.as_ptr() as usize;
        let mut m = mapped();
        if let Some(i) = m.iter().position(|&(s, _)| s == start) {
            m.swap_remove(i);
        }
    }
}

/// Bytes a [`Trail`] reads between two give-backs.
pub(crate) const RELEASE_STEP: usize = 8 << 20;

/// The largest run of pages one fault of a file mapping maps at once: a PMD-sized
/// page-cache folio (2 MiB with 4 KiB pages on x86-64 and arm64). On Linux 6.18 with
/// ext4, a file read with `read(2)` (e.g. by `cat`) or written in large writes sits in
/// the page cache in folios this large, the kernel maps such a folio with one
/// page-table entry, and `MADV_DONTNEED` on a range that ends inside it leaves it mapped
/// (`a_trail_leaves_no_page_of_its_run_mapped` below): give-backs are therefore
/// whole-folio aligned. Where folios are smaller, aligned ranges release them the same.
pub(crate) const FOLIO: usize = 2 << 20;

/// A forward pass over a run in a mapped input that gives the pages back behind it, so a
/// pass over a gigabyte keeps a resident set of megabytes.
///
/// Each give-back covers whole folios (see [`FOLIO`]): from where the last one ended
/// (the first rounded down, out of the run) to the folio boundary at or below the point
/// read; the give-back that reaches the run's end, or dropping the trail, gives back
/// the rest of what was read, rounded up (out of the run) to a folio boundary.
/// Successive give-backs tile the folios read, each once. Rounding out of the run is
/// harmless: a given-back page of a read-only file mapping reads back the same bytes
/// (see [`release`]); a reader beside the run only maps it in again.
pub(crate) struct Trail<'a> {
    run: &'a [u8],
    /// Offset in `run` up to which (rounded down to a folio) pages were given back.
    released: usize,
    /// How far the pass has read.
    read: usize,
}

impl<'a> Trail<'a> {
    /// A pass over `run` from its start, nothing read yet.
    pub(crate) fn new(run: &'a [u8]) -> Trail<'a> {
        Trail {
            run,
            released: 0,
            read: 0,
        }
    }

    /// The pass has read `run[..to]`: once it is [`RELEASE_STEP`] past the last
    /// give-back, gives back the folios behind it.
    pub(crate) fn read_to(&mut self, to: usize) {
        self.read = self.read.max(to);
        if to.saturating_sub(self.released) >= RELEASE_STEP {
            give_back(self.run, self.released, to, to >= self.run.len());
            self.released = to;
        }
    }
}

impl Drop for Trail<'_> {
    fn drop(&mut self) {
        if self.read > self.released {
            give_back(self.run, self.released, self.read, true);
        }
    }
}

/// `run` in pieces of `step` bytes, read in order: a piece's pages are given back (by a
/// [`Trail`]) once the next is asked for, and the last one's when the pieces are
/// dropped — also after a pass that stops early.
pub(crate) fn steps(run: &[u8], step: usize) -> Steps<'_> {
    Steps {
        trail: Trail::new(run),
        run,
        at: 0,
        step: step.max(1),
    }
}

/// The pieces of [`steps`].
pub(crate) struct Steps<'a> {
    trail: Trail<'a>,
    run: &'a [u8],
    /// Where the next piece starts: everything before has been handed out.
    at: usize,
    step: usize,
}

impl<'a> Iterator for Steps<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        self.trail.read_to(self.at);
        let piece = self.run.get(self.at..)?;
        let piece = piece.get(..self.step).unwrap_or(piece);
        if piece.is_empty() {
            return None;
        }
        self.at += piece.len();
        Some(piece)
    }
}

impl Drop for Steps<'_> {
    fn drop(&mut self) {
        // The piece handed out last has been read too; the trail then gives back the
        // rest, rounded up.
        self.trail.read_to(self.at);
    }
}

/// Whether `data` lies in a mapped input (a file `crate::io` mapped).
pub(crate) fn is_mapped(data: &[u8]) -> bool {
    let (lo, hi) = (data.as_ptr() as usize, data.as_ptr() as usize + data.len());
    mapped().iter().any(|&(s, e)| s <= lo && hi <= e)
}

/// Once `data` has been read, lets this process's mapping of its pages go (in whole
/// folios, rounded out of `data`; see [`Trail`]), if it lies in a mapped input: on a
/// read-only file mapping the kernel drops only the page table entries (the pages stay
/// in the page cache), and a later read maps the same file bytes in again, so this
/// changes the resident set, never what is read. Anything else (bytes in memory: small
/// files, pipes) is left alone.
pub(crate) fn release(data: &[u8]) {
    give_back(data, 0, data.len(), true);
}

/// Gives back the folios of `run[from..to]` (both rounded down to a folio boundary) if
/// `run` lies in a mapped input: for a forward walk that gives back what it has passed
/// (see [`release`]).
pub(crate) fn release_between(run: &[u8], from: usize, to: usize) {
    give_back(run, from, to, false);
}

/// Gives back the folios from `run[from]` rounded down to `run[to]` rounded down (`up`:
/// rounded up), within the mapped input that holds `run`. Runs under 64 KiB are left
/// alone: what they keep resident does not matter.
fn give_back(run: &[u8], from: usize, to: usize, up: bool) {
    if run.len() < 1 << 16 {
        return;
    }
    let base = run.as_ptr() as usize;
    let lo = (base + from) / FOLIO * FOLIO;
    let hi = if up {
        (base + to).next_multiple_of(FOLIO)
    } else {
        (base + to) / FOLIO * FOLIO
    };
    #[cfg(unix)]
    if lo < hi {
        advise(base..base + run.len(), lo..hi, libc::MADV_DONTNEED);
    }
    #[cfg(not(unix))]
    let _ = (lo, hi);
}

/// `madvise(advice)` on `range` cut to the mapped input that holds `run` (addresses),
/// if one does.
#[cfg(unix)]
fn advise(run: std::ops::Range<usize>, range: std::ops::Range<usize>, advice: libc::c_int) {
    let Some(&(start, end)) = mapped()
        .iter()
        .find(|&&(s, e)| s <= run.start && run.end <= e)
    else {
        return;
    };
    // SAFETY: sysconf has no preconditions.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    // A mapping starts on a page boundary; its last page may be partly past the file.
    let from = range.start.max(start);
    let to = range.end.min(end.next_multiple_of(page));
    if to <= from {
        return;
    }
    // SAFETY: [from, to) is page-aligned (FOLIO is a multiple of the page size, and a
    // mapping starts on a page) and inside a read-only shared file mapping that is alive
    // while this runs: it holds `run`, which the caller borrows from the mapping's owner
    // (the registry lists a mapping until its owner drops it). MADV_DONTNEED on such a
    // mapping only unmaps the pages: reading them again, here or on another thread,
    // faults in the file's same bytes (madvise(2)).
    unsafe {
        libc::madvise(from as *mut libc::c_void, to - from, advice);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn small_runs_stay_whole_and_compare_by_content() {
        assert_eq!(super::pieces(1000), 1);
        assert!(super::pieces(1 << 30) >= 1);
        assert!(super::bytes_eq(b"abc", b"abc"));
        assert!(!super::bytes_eq(b"abc", b"abd"));
    }

    use super::*;

    #[test]
    fn pieces_agree_with_one_comparison() {
        let a: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
        for n in [1, 2, 3, 8] {
            assert_eq!(first_difference_in(&a, &a.clone(), n), None);
            for at in [0, 1, 332, 333, 334, 499, 500, 998, 999] {
                let mut b = a.clone();
                b[at] ^= 1;
                assert_eq!(first_difference_in(&a, &b, n), Some(at), "{n} pieces");
                // The earliest of two differences, whichever pieces they fall in.
                b[999 - at / 2] ^= 2;
                assert_eq!(first_difference_in(&a, &b, n), Some(at.min(999 - at / 2)));
            }
            assert_eq!(first_difference_in(&a, &a[..600], n), Some(600));
            assert_eq!(first_difference_in(&a[..1], &a, n), Some(1));
            assert_eq!(first_difference_in(&a[1..], &a, n), Some(0));
        }
        assert_eq!(first_difference_in(&[], &[], 4), None);
        assert!(bytes_eq(&a, &a.clone()) && !bytes_eq(&a, &a[..999]));
    }

    /// The resident size of the mapping that starts at `start`, from /proc/self/smaps.
    #[cfg(target_os = "linux")]
    fn resident_kib(start: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let head = format!("{start:x}-");
        let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&head));
        assert!(lines.next().is_some(), "no mapping at {head}");
        let rss = lines.find(|l| l.starts_with("Rss:")).unwrap();
        rss.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// A pass that starts and steps off folio boundaries still gives every page back:
    /// written in one go, the file sits in the page cache in large folios, which the
    /// kernel maps whole (one entry per 2 MiB where it can), and a give-back that ends
    /// inside such a mapping leaves it mapped. Giving back the pages wholly inside each
    /// step (the previous rule) left a folio mapped at every step boundary: 200 MB of a
    /// 1 GB pass.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_trail_leaves_no_page_of_its_run_mapped() {
        use std::io::Write;
        let len = 5 * RELEASE_STEP + 3 * FOLIO + 12_345;
        let want: Vec<u8> = (0..len).map(|i| (i * 7 + i / 4096) as u8).collect();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&want).unwrap();
        // SAFETY: a private temporary file nobody else writes.
        let m = Mapped::new(unsafe { memmap2::Mmap::map(&f) }.unwrap());
        let data: &[u8] = m.as_ref();
        let start = data.as_ptr() as usize;
        // (where the run starts, the reader's step): steps a little short of the
        // give-back step (as a checker's whole blocks are), or off every boundary.
        for (from, step) in [
            (30, RELEASE_STEP - 8),
            (4220, FOLIO + 4109),
            (0, RELEASE_STEP),
        ] {
            let run = &data[from..len - 999];
            let mut trail = Trail::new(run);
            let mut sum = 0u64;
            let mut most = 0;
            for (k, part) in run.chunks(step).enumerate() {
                sum += part.iter().map(|&x| u64::from(x)).sum::<u64>();
                trail.read_to(k * step + part.len());
                most = most.max(resident_kib(start));
            }
            drop(trail);
            let want_sum = want[from..len - 999].iter().map(|&x| u64::from(x));
            assert_eq!(sum, want_sum.sum::<u64>());
            // Behind the pass: at most a step, the folio it started in and the one it
            // is in.
            let bound = (RELEASE_STEP.max(step) + 3 * FOLIO) as u64 / 1024;
            assert!(
                most <= bound,
                "{most} KiB resident during the pass, at most {bound}"
            );
            let left = resident_kib(start);
            assert_eq!(
                left, 0,
                "{left} KiB left mapped after the pass ({from}, {step})"
            );
        }
        assert!(data == &want[..]);
        assert_eq!(first_difference_releasing(data, &want), None);
        assert_eq!(
            resident_kib(start),
            0,
            "pages left mapped after a comparison"
        );
    }

    #[test]
    fn released_pages_read_back_the_same_and_memory_is_left_alone() {
        use std::io::Write;
        let want: Vec<u8> = (0..3u32 << 20).map(|i| (i * 31 + i / 4096) as u8).collect();
        // Not a mapping: release must not touch it (MADV_DONTNEED would zero it).
        let heap = want.clone();
        release(&heap);
        assert!(heap == want);
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&want).unwrap();
        // SAFETY: a private temporary file nobody else writes.
        let m = Mapped::new(unsafe { memmap2::Mmap::map(&f) }.unwrap());
        let data: &[u8] = m.as_ref();
        assert_eq!(first_difference_releasing(data, &want), None);
        release(&data[1000..]);
        assert!(data == &want[..]);
        assert_eq!(first_difference_in(data, &want, 3), None);
        let at = data.as_ptr() as usize;
        drop(m);
        assert!(!mapped().iter().any(|&(s, _)| s == at));
    }
}
