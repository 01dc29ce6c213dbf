//! What an edit of the store carries between its steps: the scan's
//! findings ([`Scan`]), and the result of a commit or a fold packed for
//! the return ([`Outcome`], with its [`Check`]). A leaf of the edit, the
//! shard rewrite and the fold, which all use them.

use super::MemError;
use super::reader::Loc;
use crate::kernel::packed::{Packed, Packs};
use crate::port::Errno;

/// What the first pass over the store found.
pub(super) struct Scan {
    pub(super) maybe_dup: bool,
    pub(super) skipped: bool,
    /// A shard the index could not hold: its keys are not counted (see
    /// [`OVERFLOW`](super::OVERFLOW)); the edit folds, and the fold knows them.
    pub(super) overflow: bool,
    pub(super) pairs: usize,
    /// Where the key's last line is (its value is read there: the scan
    /// keeps no value buffer).
    pub(super) at: Option<Loc>,
    /// Another key has the key's shard and fingerprint.
    pub(super) collides: bool,
    /// The base's generation.
    pub(super) generation: u32,
    /// The key holds a place of the base.
    pub(super) in_base: bool,
    /// The largest `"n"` of the shards.
    pub(super) max_n: u8,
}

/// Whether a failed commit may have landed (then `edit` reads the store
/// again, from its own frame: not under the commit's buffers).
#[derive(Clone, Copy)]
pub(super) enum Check {
    No,
    /// A shard write failed.
    Landed,
    /// A fold's rename failed and its temporary file is gone (when it did
    /// not land, the temporary file is removed once more, as it was).
    LandedElseRemove,
}

/// A step of `edit`'s result, packed ([`Packed`]) so that it comes back
/// in registers (no result slot on its frame): the error's kind and the
/// check in the high word, an `Errno` in the low.
pub(super) type Outcome = Packed<Result<bool, (MemError, Check)>>;

impl Packs for Result<bool, (MemError, Check)> {
    #[inline(always)] // stack: see docs/STACK.md
    fn pack(self) -> u64 {
        let (err, check) = match self {
            Ok(b) => return u64::from(b),
            Err(failed) => failed,
        };
        let (kind, errno) = match err {
            MemError::Invalid => (1, 0),
            MemError::Full => (2, 0),
            MemError::NotFound => (3, 0),
            MemError::TooSmall => (4, 0),
            MemError::Io(e) => (5, e.0 as u32),
        };
        let check: u64 = match check {
            Check::No => 0,
            Check::Landed => 1,
            Check::LandedElseRemove => 2,
        };
        (kind << 32) | (check << 40) | u64::from(errno)
    }

    #[inline(always)] // stack: see docs/STACK.md
    fn unpack(word: u64) -> Self {
        let errno = Errno(word as u32 as i32);
        let err = match (word >> 32) as u8 {
            0 => return Ok(word != 0),
            1 => MemError::Invalid,
            2 => MemError::Full,
            3 => MemError::NotFound,
            4 => MemError::TooSmall,
            _ => MemError::Io(errno),
        };
        let check = match (word >> 40) as u8 {
            0 => Check::No,
            1 => Check::Landed,
            _ => Check::LandedElseRemove,
        };
        Err((err, check))
    }
}
