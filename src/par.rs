//! Big byte runs split over the cores: a gigabyte of packed varints is checked, and two
//! gigabyte tensors compared, by one scoped thread per core, because one core cannot
//! fault in and read the pages of a mapped file as fast as the kernel copies them
//! (`cat`). Runs under [`PARALLEL_MIN`] bytes stay on the calling thread.
//!
//! Long passes over a mapped input give its pages back as they go (`release`), so
//! reading a gigabyte file keeps a resident set of megabytes.

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
    bytes_eq_in(a, b, pieces(a.len()))
}

fn bytes_eq_in(a: &[u8], b: &[u8], pieces: usize) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if pieces <= 1 {
        return eq_releasing(a, b);
    }
    let step = a.len().div_ceil(pieces).max(1);
    std::thread::scope(|s| {
        let mut halves = a.chunks(step).zip(b.chunks(step));
        let first = halves.next();
        let others: Vec<_> = halves
            .map(|(x, y)| s.spawn(move || eq_releasing(x, y)))
            .collect();
        let mine = first.is_none_or(|(x, y)| eq_releasing(x, y));
        // Every thread is joined (a scope would join them anyway); any difference wins.
        others
            .into_iter()
            .fold(mine, |eq, h| h.join().unwrap_or(false) && eq)
    })
}

/// `a == b`, compared [`RELEASE_STEP`] bytes at a time, each step's pages given back
/// once compared (see [`release`]).
fn eq_releasing(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len()
        && a.chunks(RELEASE_STEP)
            .zip(b.chunks(RELEASE_STEP))
            .all(|(x, y)| {
                let eq = x == y;
                release(x);
                release(y);
                eq
            })
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

/// Bytes read between two calls of [`release`] in a long pass over a run.
pub(crate) const RELEASE_STEP: usize = 8 << 20;

/// Once `data` has been read, lets this process's copy of the pages wholly inside it go,
/// if it lies in a mapped input: on a read-only file mapping the kernel drops only the
/// page table entries (the pages stay in the page cache), and a later read maps the same
/// file bytes in again, so this changes the resident set, never what is read. Anything
/// else (bytes in memory: small files, pipes) is left alone.
pub(crate) fn release(data: &[u8]) {
    #[cfg(unix)]
    advise(data, libc::MADV_DONTNEED);
    #[cfg(not(unix))]
    let _ = data;
}

/// `madvise(advice)` on the pages wholly inside `data`, if it lies in a mapped input.
#[cfg(unix)]
fn advise(data: &[u8], advice: libc::c_int) {
    // Below this, what stays resident does not matter: skip even the lock.
    if data.len() < 1 << 16 {
        return;
    }
    // SAFETY: sysconf has no preconditions.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let from = (data.as_ptr() as usize).next_multiple_of(page);
    let to = (data.as_ptr() as usize + data.len()) / page * page;
    if to <= from || !mapped().iter().any(|&(s, e)| s <= from && to <= e) {
        return;
    }
    // SAFETY: [from, to) is page-aligned, inside `data` (so it stays mapped while this
    // runs: `data` borrows from the mapping's owner) and inside a read-only shared file
    // mapping (checked above). MADV_DONTNEED on such a mapping only unmaps the pages:
    // reading them again faults in the file's same bytes (madvise(2)).
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
            assert!(bytes_eq_in(&a, &a.clone(), n));
            for at in [0, 1, 499, 500, 998, 999] {
                let mut b = a.clone();
                b[at] ^= 1;
                assert!(!bytes_eq_in(&a, &b, n), "{n} pieces, change at {at}");
            }
            assert!(!bytes_eq_in(&a, &a[1..], n));
        }
        assert!(bytes_eq_in(&[], &[], 4));
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
        assert!(eq_releasing(data, &want));
        release(&data[1000..]);
        assert!(data == &want[..]);
        assert!(bytes_eq_in(data, &want, 3));
        let at = data.as_ptr() as usize;
        drop(m);
        assert!(!mapped().iter().any(|&(s, _)| s == at));
    }
}
