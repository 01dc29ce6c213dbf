//! The low-level tricks, kept apart from the domain code: the word-at-a-time
//! (SWAR) byte tests and the bit maps. Each has a property test against a
//! plain byte-by-byte version (`swar::tests`, `bits::tests`).

#[cfg(feature = "recall")]
pub(crate) mod bits;
pub(crate) mod swar;
