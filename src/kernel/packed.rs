//! Results packed in one `u64` word, so that they come back in registers:
//! a parse step's [`Word`] and the [`Bad`] it may hold.

use crate::port::Errno;

/// Why a line is not a record (internal): the port's error (its errno,
/// positive), or [`Bad::Syntax`]. One word, so that the parse's results
/// (`Result<Scalar, Bad>`, `Result<Option<u8>, Bad>`) are two words and
/// come back in registers: a word each on the deepest frames of every load.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bad(pub(crate) i32);

#[allow(non_upper_case_globals)]
impl Bad {
    /// Not JSON, or not a flat record (an errno is never negative).
    pub(crate) const Syntax: Bad = Bad(i32::MIN);
}

impl From<Errno> for Bad {
    fn from(e: Errno) -> Self {
        Bad(e.0)
    }
}

/// A parse step's result packed in a `u64` (the high word 0 and the low
/// one the [`Bad`], or the high word what [`Packs`] makes of the value):
/// it comes back in registers, where a `Result` of two words would take a
/// slot of `format::lines::parser::fields`' frame, which is on the deepest
/// path of every load.
#[derive(Clone, Copy)]
pub(crate) struct Word(pub(crate) u64);

/// A value [`Word`] holds: (a tag, not 0; a word).
pub(crate) trait Packs: Sized {
    fn pack(self) -> (u32, u32);
    fn unpack(tag: u32, low: u32) -> Self;
}

impl Packs for () {
    #[inline(always)]
    fn pack(self) -> (u32, u32) {
        (1, 0)
    }
    #[inline(always)]
    fn unpack(_: u32, _: u32) -> Self {}
}

impl Packs for Option<u8> {
    #[inline(always)]
    fn pack(self) -> (u32, u32) {
        match self {
            None => (1, 0),
            Some(b) => (2, u32::from(b)),
        }
    }
    #[inline(always)]
    fn unpack(tag: u32, low: u32) -> Self {
        (tag > 1).then_some(low as u8)
    }
}

impl Word {
    #[inline(always)]
    pub(crate) fn of<T: Packs>(got: Result<T, Bad>) -> Self {
        let (tag, low) = match got {
            Ok(v) => v.pack(),
            Err(b) => (0, b.0 as u32),
        };
        Word(u64::from(tag) << 32 | u64::from(low))
    }

    #[inline(always)]
    pub(crate) fn get<T: Packs>(self) -> Result<T, Bad> {
        let (tag, low) = ((self.0 >> 32) as u32, self.0 as u32);
        if tag == 0 {
            return Err(Bad(low as i32));
        }
        Ok(T::unpack(tag, low))
    }
}
