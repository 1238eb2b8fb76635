//! The benches' counting allocator: the system allocator, counting the bytes live and their
//! peak. A bench that measures memory declares it global:
//! `#[global_allocator] static ALLOC: counting::Counting = counting::Counting;`.

// Each bench reads the counts it needs (some only what is live, some the peak).
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting.
pub(crate) struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call goes to the system allocator unchanged; only the counts are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged to the system allocator.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

/// The bytes live now.
pub(crate) fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Start measuring a peak: returns the bytes live now, the base of [`peak_since`].
pub(crate) fn start_peak() -> usize {
    let base = live();
    PEAK.store(base, Ordering::Relaxed);
    base
}

/// The highest the live bytes rose above `base` since [`start_peak`].
pub(crate) fn peak_since(base: usize) -> usize {
    PEAK.load(Ordering::Relaxed).saturating_sub(base)
}
