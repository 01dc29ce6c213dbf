//! The low-level tricks, kept apart from the domain code: the word-at-a-time
//! (SWAR) byte tests and copies, the bit maps, and the parse results packed
//! in a word (`packed`). Each SWAR test, copy and bit map has a property
//! test against a plain byte-by-byte version (`swar::tests`, `copy::tests`,
//! `bits::tests`), and each packed value one that it unpacks as it was.

#[cfg(feature = "recall")]
pub(crate) mod bits;
pub(crate) mod copy;
pub(crate) mod packed;
pub(crate) mod swar;
