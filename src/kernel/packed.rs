//! Results packed in one `u64` word, so that they come back in two
//! registers (a `Result` of two words or more comes back through a slot of
//! the caller's frame, and the callers on the deepest paths of every load
//! are the ones that call the record reader): [`Packed`], the values it
//! holds ([`Packs`]), and [`out_of_line`], which runs a body in a frame of
//! its own and packs its result.
//!
//! Most packed values are a `Result` whose error is one word ([`Bad`], an
//! [`Errno`]): the high word 0 and the low one the error, or the high word
//! a tag (not 0) and the low one what [`Tagged`] makes of the value.

use core::marker::PhantomData;

use crate::port::Errno;

/// Why a line is not a record (internal): the port's error (its errno,
/// positive), or [`Bad::Syntax`]. One word, so that the parse's results
/// (`Result<Scalar, Bad>`) pack in a [`Packed`].
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

/// A value that packs in a `u64` (and back, unchanged).
pub(crate) trait Packs: Sized {
    fn pack(self) -> u64;
    fn unpack(word: u64) -> Self;
}

/// A `T` packed in a `u64` word: returned in registers, not in a slot of
/// the caller's frame.
#[repr(transparent)]
pub(crate) struct Packed<T>(u64, PhantomData<T>);

impl<T> Clone for Packed<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Packed<T> {}

impl<T: Packs> Packed<T> {
    #[inline(always)]
    pub(crate) fn new(v: T) -> Self {
        Packed(v.pack(), PhantomData)
    }

    #[inline(always)]
    pub(crate) fn get(self) -> T {
        T::unpack(self.0)
    }
}

/// Runs `body` in a frame of its own (never inlined into the caller: its
/// locals stay off the caller's frame) and returns its result packed (in
/// registers). One copy for each body. The body takes its arguments
/// (`()` for one not wanted; a pair of references is one): passed as a
/// plain call's are, in registers, where a closure's captures would be
/// stored in the caller's frame and read back through a pointer.
#[inline(never)]
pub(crate) fn out_of_line<A, B, C, D, T: Packs>(
    a: A,
    b: B,
    c: C,
    d: D,
    body: impl FnOnce(A, B, C, D) -> T,
) -> Packed<T> {
    Packed::new(body(a, b, c, d))
}

/// The `Ok` value of a packed `Result` whose error is one word
/// ([`OneWord`]): a tag (not 0, which is the error's) and a word.
pub(crate) trait Tagged: Sized {
    fn tag(self) -> (u32, u32);
    fn untag(tag: u32, low: u32) -> Self;
}

/// An error of one word.
pub(crate) trait OneWord {
    fn word(self) -> u32;
    fn of_word(word: u32) -> Self;
}

impl OneWord for Bad {
    #[inline(always)]
    fn word(self) -> u32 {
        self.0 as u32
    }
    #[inline(always)]
    fn of_word(word: u32) -> Self {
        Bad(word as i32)
    }
}

impl OneWord for Errno {
    #[inline(always)]
    fn word(self) -> u32 {
        self.0 as u32
    }
    #[inline(always)]
    fn of_word(word: u32) -> Self {
        Errno(word as i32)
    }
}

impl<T: Tagged, E: OneWord> Packs for Result<T, E> {
    #[inline(always)]
    fn pack(self) -> u64 {
        let (tag, low) = match self {
            Ok(v) => v.tag(),
            Err(e) => (0, e.word()),
        };
        u64::from(tag) << 32 | u64::from(low)
    }

    #[inline(always)]
    fn unpack(word: u64) -> Self {
        let (tag, low) = ((word >> 32) as u32, word as u32);
        if tag == 0 {
            return Err(E::of_word(low));
        }
        Ok(T::untag(tag, low))
    }
}

impl Tagged for () {
    #[inline(always)]
    fn tag(self) -> (u32, u32) {
        (1, 0)
    }
    #[inline(always)]
    fn untag(_: u32, _: u32) -> Self {}
}

impl Tagged for bool {
    #[inline(always)]
    fn tag(self) -> (u32, u32) {
        (1 + u32::from(self), 0)
    }
    #[inline(always)]
    fn untag(tag: u32, _: u32) -> Self {
        tag > 1
    }
}

/// What a packed value unpacks to is the value packed, for any value of
/// each [`Packs`] impl (those next to their types test themselves with
/// [`round_trip`]).
#[cfg(test)]
pub(crate) fn round_trip<T: Packs + Clone + PartialEq + core::fmt::Debug>(v: T) {
    assert_eq!(Packed::new(v.clone()).get(), v);
}

#[cfg(test)]
mod tests {
    use super::*;

    impl core::fmt::Debug for Bad {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            write!(f, "Bad({})", self.0)
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 256,
            ..crate::testing::regressions("tests/proptest-regressions/kernel.txt")
        })]
        /// Every error word, and every value of the small `Ok` types.
        #[test]
        fn results_round_trip(word in proptest::prelude::any::<i32>(), b in proptest::prelude::any::<bool>()) {
            round_trip::<Result<(), Bad>>(Err(Bad(word)));
            round_trip::<Result<bool, Errno>>(Err(Errno(word)));
            round_trip::<Result<bool, Bad>>(Ok(b));
        }
    }

    #[test]
    fn unit_and_syntax_round_trip() {
        round_trip::<Result<(), Bad>>(Ok(()));
        round_trip::<Result<(), Bad>>(Err(Bad::Syntax));
    }
}
