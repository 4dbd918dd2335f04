//! A byte budget shared by every connection of `tfreq record`'s proxy
//! (src/net/record/, src/net/tap.rs): the request bytes it holds at once, across all
//! connections, whatever each body's own limit.
//!
//! A reader takes bytes from the budget before it keeps them ([`Held::grow`]); when the
//! budget is spent it keeps no more (the body passes through unrecorded), and the bytes
//! come back when the [`Held`] is dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The budget: at most `limit` bytes held at once.
#[derive(Debug)]
pub(crate) struct Budget {
    held: AtomicU64,
    limit: u64,
}

impl Budget {
    /// A budget of `limit` bytes, none held.
    pub(crate) fn new(limit: u64) -> Arc<Budget> {
        Arc::new(Budget {
            held: AtomicU64::new(0),
            limit,
        })
    }

    /// An empty hold on this budget.
    pub(crate) fn hold(self: &Arc<Self>) -> Held {
        Held {
            budget: self.clone(),
            n: 0,
        }
    }

    /// The bytes held now.
    #[cfg(test)]
    pub(crate) fn held(&self) -> u64 {
        self.held.load(Ordering::SeqCst)
    }

    fn take(&self, n: u64) -> bool {
        self.held
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |h| {
                h.checked_add(n).filter(|&t| t <= self.limit)
            })
            .is_ok()
    }

    fn give(&self, n: u64) {
        self.held.fetch_sub(n, Ordering::SeqCst);
    }
}

/// Bytes held against a [`Budget`], given back when dropped.
#[derive(Debug)]
pub(crate) struct Held {
    budget: Arc<Budget>,
    n: u64,
}

impl Held {
    /// Takes `n` more bytes; false (nothing taken) when the budget has not that many left.
    pub(crate) fn grow(&mut self, n: u64) -> bool {
        let ok = self.budget.take(n);
        if ok {
            self.n += n;
        }
        ok
    }

    /// Gives `n` of the bytes held back (all of them, when fewer are held).
    pub(crate) fn shrink(&mut self, n: u64) {
        let n = n.min(self.n);
        self.n -= n;
        self.budget.give(n);
    }

    /// Gives every byte held back.
    pub(crate) fn release(&mut self) {
        self.shrink(self.n);
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_never_pass_the_limit_and_come_back_on_drop() {
        let b = Budget::new(100);
        let mut a = b.hold();
        let mut c = b.hold();
        assert!(a.grow(60));
        assert!(!c.grow(41));
        assert!(c.grow(40));
        assert!(!a.grow(1));
        assert_eq!(b.held(), 100);
        a.shrink(10);
        assert!(c.grow(10));
        drop(a);
        assert_eq!(b.held(), 50);
        c.shrink(1000);
        assert_eq!(b.held(), 0);
        assert!(!b.hold().grow(u64::MAX));
    }
}
