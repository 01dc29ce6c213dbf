//! `claw_ext.h`, part 1: relevant recall (feature `recall`). The 22
//! functions of the vendor ABI are unchanged; these are additions.

use cty::c_char;

use super::{c_bytes, with_state};
use crate::memory::{self, KEY_MAX_BYTES, VAL_MAX_BYTES};

/// One memory pair, as `claw_memory_search` and `claw_memory_at` return it.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct claw_memory_hit_t {
    /// The key, NUL-terminated.
    pub key: [c_char; 32],
    /// The value, NUL-terminated.
    pub value: [c_char; 128],
    /// Relevance to the query, 0..=1000 (0 from `claw_memory_at`).
    pub score: u16,
    /// Pinned keys always reach the context first.
    pub pinned: bool,
}

// The arrays are literal for cbindgen; these keep them equal to the core's.
const _: () = assert!(KEY_MAX_BYTES + 1 == 32 && VAL_MAX_BYTES + 1 == 128);

/// Most hits one search fills (larger `max_hits` are clamped).
pub const CLAW_MEMORY_SEARCH_MAX: usize = 32;

fn fill(hit: &mut claw_memory_hit_t, key: &[u8], value: &[u8], score: u16, pinned: bool) {
    // Byte by byte (c_char may be signed), NUL-padded: the key and value
    // are at most 31 and 127 bytes, so the last byte is always a NUL.
    for (d, s) in hit
        .key
        .iter_mut()
        .zip(key.iter().chain(core::iter::repeat(&0)))
    {
        *d = *s as c_char;
    }
    for (d, s) in hit
        .value
        .iter_mut()
        .zip(value.iter().chain(core::iter::repeat(&0)))
    {
        *d = *s as c_char;
    }
    hit.score = score;
    hit.pinned = pinned;
}

/// Deletes `key` from the memory store. False when it is not stored, the
/// key is invalid, or the write failed (then the store is as before).
///
/// # Safety
/// `key` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_memory_forget(key: *const c_char) -> bool {
    // SAFETY: per this function's contract.
    let Some(key) = (unsafe { c_bytes(key) }) else {
        return false;
    };
    with_state(false, |_, p| {
        memory::apply(p, key, memory::Edit::Forget).is_ok()
    })
}

/// Pins (`true`) or unpins a stored key. Pinned keys always reach the
/// context first. False when the key is not stored or the write failed.
///
/// # Safety
/// `key` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_memory_pin(key: *const c_char, pinned: bool) -> bool {
    // SAFETY: per this function's contract.
    let Some(key) = (unsafe { c_bytes(key) }) else {
        return false;
    };
    with_state(false, |_, p| {
        memory::apply(p, key, memory::Edit::Pin(pinned)).is_ok()
    })
}

/// Ranks the memory store against `query` (lexical: character bigrams, for
/// Thai and English) and writes the best `max_hits` pairs with a score
/// above 0 to `hits`, best first. Returns how many were written (0 for
/// NULL arguments or an unreadable store).
///
/// # Safety
/// `query` is NULL or a NUL-terminated string; `hits` is NULL or valid for
/// writes of `max_hits` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_memory_search(
    query: *const c_char,
    hits: *mut claw_memory_hit_t,
    max_hits: usize,
) -> usize {
    // SAFETY: per this function's contract.
    let Some(query) = (unsafe { c_bytes(query) }) else {
        return 0;
    };
    if hits.is_null() || max_hits == 0 {
        return 0;
    }
    // SAFETY: non-NULL and valid for `max_hits` elements per the contract;
    // the length is clamped to a small constant.
    let hits =
        unsafe { core::slice::from_raw_parts_mut(hits, max_hits.min(CLAW_MEMORY_SEARCH_MAX)) };
    let mut q = crate::recall::Query::new();
    q.add(query);
    let mut n = 0usize;
    let ok = with_state(false, |_, p| {
        memory::for_each(p, &mut |pair| n = take_hit(&q, hits, n, pair)).is_ok()
    });
    if ok { n } else { 0 }
}

/// Scores a pair and keeps it among the `n` best hits so far when it
/// scores; returns the new count.
fn take_hit(
    q: &crate::recall::Query,
    hits: &mut [claw_memory_hit_t],
    n: usize,
    pair: &memory::Pair,
) -> usize {
    let score = q.score(pair.key(), pair.value());
    if score > 0 {
        insert_hit(hits, n, pair, score)
    } else {
        n
    }
}

/// Inserts a pair into the `n` best hits so far (sorted by score, newer
/// first among equals; a key appears once, its last line counting). Returns
/// the new count.
fn insert_hit(
    hits: &mut [claw_memory_hit_t],
    mut n: usize,
    pair: &memory::Pair,
    score: u16,
) -> usize {
    if let Some(dup) = (0..n).find(|&i| hits.get(i).is_some_and(|h| key_eq(h, pair.key()))) {
        for i in dup..n.saturating_sub(1) {
            if let Some(next) = hits.get(i + 1).copied() {
                if let Some(h) = hits.get_mut(i) {
                    *h = next;
                }
            }
        }
        n -= 1;
    }
    let pos = (0..n)
        .find(|&i| hits.get(i).is_some_and(|h| h.score <= score))
        .unwrap_or(n);
    if pos >= hits.len() {
        return n;
    }
    let end = (n + 1).min(hits.len());
    for i in (pos + 1..end).rev() {
        if let Some(prev) = hits.get(i - 1).copied() {
            if let Some(h) = hits.get_mut(i) {
                *h = prev;
            }
        }
    }
    if let Some(h) = hits.get_mut(pos) {
        fill(h, pair.key(), pair.value(), score, pair.pinned());
    }
    end
}

fn key_eq(h: &claw_memory_hit_t, key: &[u8]) -> bool {
    let len = h.key.iter().position(|&c| c == 0).unwrap_or(h.key.len());
    len == key.len() && h.key.iter().zip(key).all(|(&a, &b)| a as u8 == b)
}

/// The `index`-th pair of the store in store order (for exporting it).
/// False past the end, for NULL, or when the store cannot be read.
///
/// # Safety
/// `out` is NULL or valid for writes of one element.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_memory_at(index: usize, out: *mut claw_memory_hit_t) -> bool {
    if out.is_null() {
        return false;
    }
    with_state(false, |_, p| {
        memory::at(p, index, |pair| {
            // SAFETY: non-NULL and valid for writes of one element per the
            // contract; written only with the pair found, the whole store
            // read.
            let hit = unsafe { &mut *out };
            fill(hit, pair.key(), pair.value(), 0, pair.pinned());
        })
        .unwrap_or(false)
    })
}
