//! The `switchboard` binary.
fn main() {}
