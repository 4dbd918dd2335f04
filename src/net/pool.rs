//! Many calls at once: a pool of workers, one thread each, each with its own
//! connection ([`super::Client`] or [`super::queue::Queue`]), taking the next item
//! until none is left. [`each`] hands every result back to the calling thread as it
//! comes (`tfreq send --concurrency`); a worker that keeps its own tally instead (the
//! open loop of [`super::Load`]) runs on the same threads through `on_threads`.
//!
//! One blocking client a thread keeps every call as [`super::Client::send`] makes it
//! (the same deadline, limits and decoding), and the threads only wait on sockets: on
//! loopback a call costs the same CPU at any concurrency (measured in docs/live.md).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, mpsc};

/// How far past the oldest unfinished item a worker may start one: [`AHEAD_PER_WORKER`]
/// times the workers. Results handed over in the items' order ([`InOrder`]) wait for
/// the oldest, so at most this many are held at once, however slow one call is.
pub const AHEAD_PER_WORKER: usize = 2;

/// Calls `call(worker, i, &items[i])` for every item, at most `workers.len()` at once
/// (one thread a worker, each worker kept for the next call), and hands each result to `done(i, result)` on the calling
/// thread as soon as it is ready (in the order they end, not the items' order).
/// When `stops(&result)` is true no further item is started: the calls under way end
/// and are handed over, the items never started are not.
///
/// No item is started [`AHEAD_PER_WORKER`] × `workers.len()` or more places past the
/// oldest item whose call has not ended: a caller that shows results in the items'
/// order holds fewer than that many.
///
/// With one worker the items are called in order, one after the other, and nothing is
/// sent after a result that stops.
pub fn each<W, T, R>(
    workers: &mut [W],
    items: &[T],
    call: impl Fn(&mut W, usize, &T) -> R + Sync,
    stops: impl Fn(&R) -> bool + Sync,
    mut done: impl FnMut(usize, R),
) where
    W: Send,
    T: Sync,
    R: Send,
{
    let ahead = AHEAD_PER_WORKER * workers.len().max(1);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // The items whose calls ended past the oldest unfinished one, and that one.
    let ended = Mutex::new((0usize, std::collections::BTreeSet::new()));
    let moved = Condvar::new();
    let (tx, rx) = mpsc::channel::<(usize, R)>();
    // Each worker takes its own sender and drops it when it ends, so the results stop
    // coming (and `done` is called no more) once every worker has ended.
    let mut slots: Vec<_> = workers.iter_mut().map(|w| (w, Some(tx.clone()))).collect();
    drop(tx);
    on_threads(
        &mut slots,
        |(w, tx)| {
            let Some(tx) = tx.take() else { return };
            loop {
                if stop.load(Ordering::Acquire) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::AcqRel);
                let Some(item) = items.get(i) else { break };
                // Wait for the oldest unfinished call to end (by its own deadline).
                let mut e = ended.lock().unwrap_or_else(|p| p.into_inner());
                while i >= e.0 + ahead {
                    e = moved.wait(e).unwrap_or_else(|p| p.into_inner());
                }
                drop(e);
                let r = call(w, i, item);
                if stops(&r) {
                    stop.store(true, Ordering::Release);
                }
                let mut e = ended.lock().unwrap_or_else(|p| p.into_inner());
                e.1.insert(i);
                while e.1.first() == Some(&e.0) {
                    e.1.pop_first();
                    e.0 += 1;
                }
                drop(e);
                moved.notify_all();
                if tx.send((i, r)).is_err() {
                    break;
                }
            }
        },
        || {
            for (i, r) in rx {
                done(i, r);
            }
        },
    );
}

/// Runs `work` on every worker, each on a thread of its own, while `meanwhile` runs on
/// the calling thread; returns what each worker's `work` returned, in the workers'
/// order, once all have ended. A worker's panic is raised again here.
pub(crate) fn on_threads<W: Send, T: Send>(
    workers: &mut [W],
    work: impl Fn(&mut W) -> T + Sync,
    meanwhile: impl FnOnce(),
) -> Vec<T> {
    std::thread::scope(|s| {
        let work = &work;
        let running: Vec<_> = workers
            .iter_mut()
            .map(|w| s.spawn(move || work(w)))
            .collect();
        meanwhile();
        running
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// Hands results that come in any order to `f` in the order of their index, each as
/// soon as every one before it has come.
#[derive(Debug)]
pub struct InOrder<R> {
    next: usize,
    waiting: std::collections::BTreeMap<usize, R>,
}

impl<R> Default for InOrder<R> {
    fn default() -> Self {
        InOrder {
            next: 0,
            waiting: std::collections::BTreeMap::new(),
        }
    }
}

impl<R> InOrder<R> {
    /// Takes result `i` and passes on, in order, every result now ready; returns
    /// `false` as soon as `f` does (the rest stay).
    pub fn push(&mut self, i: usize, r: R, mut f: impl FnMut(usize, R) -> bool) -> bool {
        self.waiting.insert(i, r);
        while let Some(r) = self.waiting.remove(&self.next) {
            let i = self.next;
            self.next += 1;
            if !f(i, r) {
                return false;
            }
        }
        true
    }

    /// The index of the next result to pass on.
    pub fn next(&self) -> usize {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn calls_run_at_once_and_every_result_comes_back() {
        let items: Vec<u64> = (0..8).collect();
        let start = Instant::now();
        let mut got = Vec::new();
        each(
            &mut [(); 4],
            &items,
            |_, _, &x| {
                std::thread::sleep(Duration::from_millis(100));
                x * 2
            },
            |_| false,
            |i, r| got.push((i, r)),
        );
        let took = start.elapsed();
        got.sort();
        assert_eq!(got, (0..8).map(|i| (i, i as u64 * 2)).collect::<Vec<_>>());
        // 8 calls of 100 ms, 4 at once: 2 rounds, not 8.
        assert!(took < Duration::from_millis(600), "{took:?}");
    }

    /// A first call far slower than the rest: the others go no further than the
    /// look-ahead past it, so results waiting to be shown in order stay bounded.
    #[test]
    fn no_call_starts_too_far_past_a_slow_one() {
        let items: Vec<u32> = (0..40).collect();
        let started = Mutex::new(Vec::new());
        each(
            &mut [(); 3],
            &items,
            |_, i, _| {
                if i == 0 {
                    std::thread::sleep(Duration::from_millis(300));
                    // Everything started while the first call ran.
                    let n = started.lock().unwrap().len();
                    assert!(n <= 3 * AHEAD_PER_WORKER, "{n} started");
                }
                started.lock().unwrap().push(i);
            },
            |_| false,
            |_, _| {},
        );
        assert_eq!(started.lock().unwrap().len(), 40);
    }

    #[test]
    fn stopping_starts_nothing_more() {
        let items: Vec<u32> = (0..100).collect();
        let mut seen = 0;
        each(
            &mut [()],
            &items,
            |_, i, _| i,
            |&i| i >= 2,
            |_, _| seen += 1,
        );
        assert_eq!(seen, 3);
    }

    #[test]
    fn on_threads_runs_every_worker_at_once() {
        let mut workers = [1u64, 2, 3];
        let start = Instant::now();
        let mut meanwhile = false;
        let got = on_threads(
            &mut workers,
            |w| {
                std::thread::sleep(Duration::from_millis(100));
                *w *= 10;
                *w + 1
            },
            || meanwhile = true,
        );
        assert!(
            start.elapsed() < Duration::from_millis(280),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(got, [11, 21, 31]);
        assert_eq!(workers, [10, 20, 30]);
        assert!(meanwhile);
    }

    #[test]
    fn in_order_releases_each_when_its_predecessors_came() {
        let mut o = InOrder::default();
        let mut out = Vec::new();
        for i in [2usize, 0, 3, 1, 4] {
            o.push(i, i * 10, |j, r| {
                out.push((j, r));
                true
            });
        }
        assert_eq!(out, vec![(0, 0), (1, 10), (2, 20), (3, 30), (4, 40)]);
        assert_eq!(o.next(), 5);
    }
}
