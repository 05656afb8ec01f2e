//! The C ABI of switchboard (work in progress).
