//! The low-level tricks, kept apart from the domain code: the word-at-a-time
//! (SWAR) byte tests, the bit maps, and the parse results packed in a word
//! (`packed`). Each SWAR test and bit map has a property test against a
//! plain byte-by-byte version (`swar::tests`, `bits::tests`).

#[cfg(feature = "recall")]
pub(crate) mod bits;
pub(crate) mod packed;
pub(crate) mod swar;
