//! The test binary's global allocator: it counts, per thread, the live heap bytes and their
//! peak (`measure`, for the memory bounds of `bounded`) and the largest single allocation
//! (`largest_allocation`, for `adversarial`). Counting per thread keeps the tests that run
//! in parallel apart; one binary has one global allocator, so both live here.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    // Net bytes this thread has allocated, and the peak since `measure` reset it.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
    // The largest single allocation or reallocation since `largest_allocation` reset it.
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn add(n: isize) {
    // `try_with`: the thread-locals may already be gone while a thread exits.
    let _ = LIVE.try_with(|l| {
        let now = l.get() + n;
        l.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

fn one(size: usize) {
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
            one(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        add(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new) };
        if !p.is_null() {
            add(new as isize - layout.size() as isize);
            one(new);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Peak heap bytes this thread allocated (above what it had live before) while `f`
/// ran, and its result.
pub fn measure<R>(f: impl FnOnce() -> R) -> (usize, R) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let r = f();
    let peak = PEAK.with(Cell::get);
    ((peak - base).max(0) as usize, r)
}

/// Runs `f` and returns the largest single allocation this thread made in it.
pub fn largest_allocation(f: impl FnOnce()) -> usize {
    LARGEST.with(|l| l.set(0));
    f();
    LARGEST.with(Cell::get)
}
