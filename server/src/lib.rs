//! Transports for switchboard and the pieces of the `switchboard` binary.
//!
//! For now: [`inspect`], which describes what the parser sees in a message.

pub mod inspect;
