//! Buffers for the alignment's matrices, kept per thread from one merge to the next.
//!
//! A matrix of a few hundred kilobytes allocated afresh for every merge comes from the system
//! and goes back to it, and touching its pages again costs more page faults than the merge
//! has work; a buffer given back to this thread's pool keeps its pages for the next merge.

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};

/// At most this many buffers of each element type wait in a thread's pool.
const POOL_BUFFERS: usize = 4;
/// Buffers larger than this (in bytes) go back to the allocator rather than the pool.
const POOL_MAX_BYTES: usize = 8 << 20;

thread_local! {
    static F32_POOL: RefCell<Vec<Vec<f32>>> = const { RefCell::new(Vec::new()) };
    static U8_POOL: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// An element type with a pool of buffers per thread.
pub trait Pooled: Copy + 'static {
    /// Run `f` on this thread's pool; `None` while the thread is being torn down.
    fn with_pool<R>(f: impl FnOnce(&mut Vec<Vec<Self>>) -> R) -> Option<R>;
}

impl Pooled for f32 {
    fn with_pool<R>(f: impl FnOnce(&mut Vec<Vec<f32>>) -> R) -> Option<R> {
        F32_POOL.try_with(|p| f(&mut p.borrow_mut())).ok()
    }
}

impl Pooled for u8 {
    fn with_pool<R>(f: impl FnOnce(&mut Vec<Vec<u8>>) -> R) -> Option<R> {
        U8_POOL.try_with(|p| f(&mut p.borrow_mut())).ok()
    }
}

/// A buffer taken from this thread's pool, given back when dropped.
pub struct Buf<T: Pooled>(Vec<T>);

impl<T: Pooled> Buf<T> {
    /// An empty buffer, with the capacity of one the pool had.
    pub fn take() -> Buf<T> {
        let mut v = T::with_pool(|p| p.pop()).flatten().unwrap_or_default();
        v.clear();
        Buf(v)
    }

    /// A buffer of `len` copies of `value`.
    pub fn filled(len: usize, value: T) -> Buf<T> {
        let mut b = Buf::take();
        b.0.resize(len, value);
        b
    }
}

impl<T: Pooled> Deref for Buf<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T: Pooled> DerefMut for Buf<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

impl<T: Pooled> Drop for Buf<T> {
    fn drop(&mut self) {
        let bytes = self.0.capacity() * std::mem::size_of::<T>();
        if bytes == 0 || bytes > POOL_MAX_BYTES {
            return;
        }
        let v = std::mem::take(&mut self.0);
        T::with_pool(|p| {
            if p.len() < POOL_BUFFERS {
                p.push(v);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_buffer_is_taken_again_empty_with_its_capacity() {
        let b = Buf::filled(10_000, 1.5f32);
        assert!(b.iter().all(|&x| x == 1.5));
        let ptr = b.as_ptr();
        drop(b);
        let again = Buf::<f32>::take();
        assert!(again.is_empty());
        assert!(again.capacity() >= 10_000);
        assert_eq!(again.as_ptr(), ptr);
        let refilled = {
            drop(again);
            Buf::filled(3, 7u8)
        };
        assert_eq!(&refilled[..], &[7, 7, 7]);
    }

    #[test]
    fn the_pool_keeps_a_few_buffers_only() {
        let bufs: Vec<Buf<u8>> = (0..POOL_BUFFERS + 3).map(|_| Buf::filled(64, 0)).collect();
        drop(bufs);
        assert_eq!(u8::with_pool(|p| p.len()), Some(POOL_BUFFERS));
    }

    #[test]
    fn a_huge_buffer_goes_back_to_the_allocator() {
        drop(Buf::filled(POOL_MAX_BYTES + 1, 0u8));
        assert_eq!(u8::with_pool(|p| p.len()), Some(0));
    }
}
