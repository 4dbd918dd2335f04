//! Big byte runs split over the cores: a gigabyte of packed varints is checked, and two
//! gigabyte tensors compared, by one scoped thread per core, because one core cannot
//! fault in and read the pages of a mapped file as fast as the kernel copies them
//! (`cat`). Runs under [`PARALLEL_MIN`] bytes stay on the calling thread.

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
        return a == b;
    }
    let step = a.len().div_ceil(pieces).max(1);
    std::thread::scope(|s| {
        let mut halves = a.chunks(step).zip(b.chunks(step));
        let first = halves.next();
        let others: Vec<_> = halves.map(|(x, y)| s.spawn(move || x == y)).collect();
        let mine = first.is_none_or(|(x, y)| x == y);
        // Every thread is joined (a scope would join them anyway); any difference wins.
        others
            .into_iter()
            .fold(mine, |eq, h| h.join().unwrap_or(false) && eq)
    })
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
}
