//! The key hashes: FNV-1a, a key's shard and its fingerprint there, and
//! the 16-bit hash of the duplicate pre-checks.

use super::SHARDS;

pub(super) fn fnv(key: &[u8]) -> u32 {
    let step = |h: u32, b: &u8| (h ^ u32::from(*b)).wrapping_mul(0x0100_0193);
    // Two bytes a step (one loop test for two).
    let (mut h, mut s) = (0x811c_9dc5, key);
    while let [a, b, rest @ ..] = s {
        h = step(step(h, a), b);
        s = rest;
    }
    s.iter().fold(h, step)
}

/// The shard of `key`.
pub fn shard_of(key: &[u8]) -> usize {
    (fnv(key) % SHARDS as u32) as usize
}

/// The fingerprint of `key` within its shard.
pub(super) fn sig(key: &[u8]) -> u16 {
    (fnv(key) >> 16) as u16
}

/// The shard and the fingerprint of a key from its FNV-1a hash `h` (one
/// hash of the key serves both, and [`hash16`]).
pub(super) fn place(h: u32) -> (usize, u16) {
    ((h % SHARDS as u32) as usize, (h >> 16) as u16)
}

/// [`place`] in 3 bytes (the scan's tally keeps it).
pub(super) fn small_place(h: u32) -> (u8, u16) {
    let (s, f) = place(h);
    (s as u8, f)
}

pub(super) fn hash(key: &[u8]) -> u16 {
    hash16(fnv(key))
}

/// FNV-1a folded to 16 bits: a pre-check only; equal hashes are confirmed
/// byte by byte.
pub(super) fn hash16(h: u32) -> u16 {
    (h ^ (h >> 16)) as u16
}
