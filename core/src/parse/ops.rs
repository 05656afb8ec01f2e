//! Operation counting for the linear-time tests: in test builds, the scanner, the
//! unescaper and the params accessors add one tick per loop iteration (SIMD steps
//! count one per 16 bytes) to a per-thread counter, so tests can assert that the
//! work grows linearly with the input, deterministically, without timing anything.
//! In other builds [`tick`] is an empty inline function.

pub(crate) use imp::*;

#[cfg(not(test))]
mod imp {
    /// Counts nothing outside test builds.
    #[inline(always)]
    pub(crate) fn tick(_n: usize) {}
}

#[cfg(test)]
mod imp {
    use std::cell::Cell;

    thread_local! {
        static OPS: Cell<u64> = const { Cell::new(0) };
    }

    /// Adds `n` operations to this thread's counter.
    #[inline]
    pub(crate) fn tick(n: usize) {
        OPS.with(|c| c.set(c.get() + n as u64));
    }

    /// This thread's count since the last call, resetting it.
    pub(crate) fn take() -> u64 {
        OPS.with(|c| c.replace(0))
    }
}
