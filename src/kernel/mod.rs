//! The low-level tricks, kept apart from the domain code: the word-at-a-time
//! (SWAR) byte tests. Each has a property test against a plain byte-by-byte
//! version (`swar::tests`).

pub(crate) mod swar;
