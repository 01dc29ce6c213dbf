//! An edit of one key ([`set`](super::set), [`forget`](super::forget),
//! [`pin`](super::pin)): the scan of the store, then the key's shard
//! rewritten when the edit fits there, else the fold; and the check that a
//! failed commit did not land.

use super::fold::{Gone, fold, superseded};
use super::hash::{fnv, hash16, small_place};
use super::plan::{Check, Outcome, Scan};
use super::reader::{Loc, ValueAt, bit64, read_at};
use super::shard::shard_edit;
use super::{Edit, HASHED, MAX_ENTRIES, MemError, SHARD_PATHS, Store};
use crate::format::memory::{KeyRec, Pair};
use crate::kernel::packed::out_of_line;
use crate::port::{Errno, MEMORY_TMP_PATH, Port};

// The passes of an edit stay out of line: each has its own pair buffer, and
// inlined into one frame they would add up on a 1 KiB stack budget.
fn scan<P: Port>(port: &mut P, key: &[u8], s: &mut Scan) -> Result<(), Errno> {
    let mut store = Store::new();
    let mut k = KeyRec::new();
    let mut t = Tally {
        key,
        mine: small_place(fnv(key)),
        hashes: [0; HASHED],
        pairs: 0,
        collides: false,
        target: None,
        shard: (0, false, None),
    };
    store.load_into(port, &mut k.key, Some(&mut t))?;
    s.generation = store.generation;
    s.max_n = store.max_n;
    s.overflow = store.overflowed();
    // The base's lines; the keys new since the base were tallied from the
    // load (no shard read again).
    let res = loop {
        match store.next_base(port, &mut k) {
            Ok(Some(value)) => {
                let is_key = k.key() == key;
                // An entry's key was tallied once, with the load.
                if matches!(value, ValueAt::Line) || store.rematch {
                    // (The store hashed the key to find its entry.)
                    t.add(store.last_fnv, is_key);
                }
                if is_key {
                    s.in_base = true;
                    s.at = Some(match value {
                        ValueAt::Entry(j) => store.entry_at(j),
                        ValueAt::Line => store.last_at(),
                    });
                }
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    s.skipped = store.skipped;
    store.close(port);
    res?;
    // The key's entry, when no line of the base holds it: it is among the
    // new keys, after every line of the base.
    if let Some(j) = t.target.map(usize::from) {
        if store.matched & bit64(j) == 0 {
            s.in_base = false;
            s.at = Some(store.entry_at(j));
        }
    }
    s.pairs = t.pairs;
    s.collides = t.collides;
    s.maybe_dup = t.pairs > HASHED || repeats(t.hashes.get(..t.pairs.min(HASHED)).unwrap_or(&[]));
    Ok(())
}

/// Whether a key hash repeats among `seen`: maybe a duplicate (the
/// rewrite pass decides). Out of line: its bitmap is not on the scan's
/// frame.
#[inline(never)] // stack: see docs/STACK.md
fn repeats(seen: &[u16]) -> bool {
    // (A hash's low byte first: the lines before it are looked through
    // only when one of them has that byte.)
    let mut low = [0u32; 8];
    seen.iter().enumerate().any(|(i, &h)| {
        let b = usize::from(h as u8);
        let (w, m) = (b / 32, 1u32 << (b % 32));
        let maybe = low.get(w).is_some_and(|&x| x & m != 0);
        if let Some(x) = low.get_mut(w) {
            *x |= m;
        }
        maybe && seen.get(..i).is_some_and(|before| before.contains(&h))
    })
}

/// What the scan counts of the store's lines (in any order: each is
/// counted once, the entries of a shard when the shard counts).
pub(super) struct Tally<'a> {
    /// The key edited, and its shard and fingerprint.
    key: &'a [u8],
    mine: (u8, u16),
    /// Key hashes of the first HASHED lines counted.
    hashes: [u16; HASHED],
    pairs: usize,
    /// Another key has the key's shard and fingerprint.
    collides: bool,
    /// The entry holding the key (not a forgotten one).
    target: Option<u8>,
    /// The shard being loaded: its lines (at most [`SHARD_RECORDS`](super::SHARD_RECORDS)),
    /// whether one collides, its entry holding the key.
    shard: (u8, bool, Option<u8>),
}

impl Tally<'_> {
    /// A line counted at `pairs` (its hash kept among the first HASHED).
    fn hash_at(&mut self, at: usize, f: u32) -> bool {
        if let Some(slot) = self.hashes.get_mut(at) {
            *slot = hash16(f);
        }
        small_place(f) == self.mine
    }

    /// A line of the base.
    fn add(&mut self, f: u32, is_key: bool) {
        let collides = self.hash_at(self.pairs, f);
        self.pairs += 1;
        self.collides |= collides && !is_key;
    }
}

impl Tally<'_> {
    /// Entry `j` of the shard being loaded: its key, and whether it is a
    /// forgotten one.
    pub(super) fn entry(&mut self, j: usize, key: &[u8], del: bool) {
        if del {
            return;
        }
        let is_key = key == self.key;
        let collides = self.hash_at(self.pairs + usize::from(self.shard.0), fnv(key));
        self.shard.0 += 1;
        self.shard.1 |= collides && !is_key;
        if is_key {
            self.shard.2 = Some(j as u8);
        }
    }

    /// The shard's entries count (or not: it is stale or not one of ours).
    pub(super) fn shard_done(&mut self, counts: bool) {
        if counts {
            self.pairs += usize::from(self.shard.0);
            self.collides |= self.shard.1;
            if self.shard.2.is_some() {
                self.target = self.shard.2;
            }
        }
        self.shard = (0, false, None);
    }
}

/// The key's last line, where the scan found it: (its value equals
/// `value`, pinned); `None` without one. A forget needs only to know
/// there is one.
fn found<P: Port>(
    port: &mut P,
    e: Edit<'_>,
    s: &Scan,
    value: &[u8],
) -> Result<Option<(bool, bool)>, Errno> {
    match (s.at, e) {
        (None, _) => Ok(None),
        (Some(_), Edit::Forget) => Ok(Some((false, false))),
        (Some(at), _) => check_at(port, at, value),
    }
}

/// [`found`]'s read.
fn check_at<P: Port>(port: &mut P, at: Loc, value: &[u8]) -> Result<Option<(bool, bool)>, Errno> {
    let mut pair = Pair::new();
    Ok(read_at(port, at, &mut pair)?.then(|| (pair.value() == value, pair.pinned)))
}

/// Applies `e` to `key`: in its shard when it fits there, else by a fold
/// (see the module docs). A change that changes nothing writes nothing;
/// a failure leaves the store as it was.
// A small frame: the scan's findings live in `scan_and_commit`'s, which
// returns before the fold (the deepest path) runs from here.
#[inline(always)] // stack: see docs/STACK.md
pub fn edit<P: Port>(port: &mut P, key: &[u8], e: Edit<'_>) -> Result<(), MemError> {
    // The base's pairs a fold leaves out (a store that may hold a key twice).
    let mut gone = Gone([0; 4]);
    let res = match scan_and_commit(port, key, e, &mut gone).get() {
        Ok(false) => return Ok(()),
        Ok(true) => fold(port, key, e, &gone).get(),
        Err(failed) => Err(failed),
    };
    let (err, check) = match res {
        Ok(_) => return Ok(()),
        Err((err, Check::No)) => return Err(err),
        Err(failed) => failed,
    };
    // A commit that landed but reported an error (littlefs reads it back):
    // the store must then hold the edit.
    if landed(port, key, e) {
        return Ok(());
    }
    if let Check::LandedElseRemove = check {
        let _ = port.remove(MEMORY_TMP_PATH);
    }
    Err(err)
}

impl Scan {
    const fn new() -> Scan {
        Scan {
            maybe_dup: false,
            skipped: false,
            overflow: false,
            pairs: 0,
            at: None,
            collides: false,
            generation: 0,
            in_base: false,
            max_n: 0,
        }
    }
}

/// [`edit`] up to the fold: the passes before the write and the shard
/// write, out of line. Whether the store must fold (with the pairs it
/// leaves out in `gone`).
fn scan_and_commit<P: Port>(port: &mut P, key: &[u8], e: Edit<'_>, gone: &mut Gone) -> Outcome {
    // (`e` by reference: a copy of it by value would take the body's frame.)
    out_of_line(port, key, &e, gone, |port, key, e, gone| {
        scan_then_commit(port, key, *e, gone)
    })
}

/// [`scan_and_commit`]'s body.
fn scan_then_commit<P: Port>(
    port: &mut P,
    key: &[u8],
    e: Edit<'_>,
    gone: &mut Gone,
) -> Result<bool, (MemError, Check)> {
    // Filled in place: a returned `Scan` would sit in both frames.
    let mut s = Scan::new();
    let pinned = match begin(port, key, e, &mut s, gone) {
        Ok(Some(pinned)) => pinned,
        Ok(None) => return Ok(false),
        Err(err) => return Err((err, Check::No)),
    };
    commit(port, key, e, &s, pinned).get()
}

/// [`edit`]'s passes before it writes: the scan, the key's line read where
/// the scan found it, and (for a store that may hold a key twice) the pairs
/// a fold leaves out, into `gone`. `None` when the edit is done without
/// a write (or is refused: `Err`); else whether the key is pinned.
fn begin<P: Port>(
    port: &mut P,
    key: &[u8],
    e: Edit<'_>,
    s: &mut Scan,
    gone: &mut Gone,
) -> Result<Option<bool>, MemError> {
    let new_value = match e {
        Edit::Set(v) => v,
        _ => b"",
    };
    scan(port, key, s)?;
    let found = found(port, e, s, new_value)?;
    let clean = !s.maybe_dup && !s.skipped && !s.overflow;
    match (e, found) {
        (Edit::Set(_), Some((true, _))) if clean => return Ok(None),
        // Full, and known without writing a byte (with possible duplicates
        // only the rewrite can count distinct keys; with a shard the index
        // could not hold, only the fold sees every key).
        (Edit::Set(_), None) if !s.maybe_dup && !s.overflow && s.pairs >= MAX_ENTRIES => {
            return Err(MemError::Full);
        }
        (Edit::Forget, None) if !s.overflow => return Err(MemError::NotFound),
        #[cfg(feature = "recall")]
        (Edit::Pin(_), None) if !s.overflow => return Err(MemError::NotFound),
        #[cfg(feature = "recall")]
        (Edit::Pin(on), Some((_, pinned))) if clean && on == pinned => return Ok(None),
        _ => {}
    }
    // A store that is not clean folds (`commit` writes no shard for it):
    // the passes that find its superseded lines run here, before the
    // commit, as they did right before the fold, and not under its store.
    if !clean {
        superseded(port, gone)?;
    }
    Ok(Some(found.is_some_and(|(_, p)| p)))
}

/// The edit written in the key's shard when it fits there (packed:
/// `Ok(false)`); `Ok(true)` when the store must fold instead.
#[inline(never)] // stack: see docs/STACK.md
fn commit<P: Port>(port: &mut P, key: &[u8], e: Edit<'_>, s: &Scan, pinned: bool) -> Outcome {
    // Shards count only beside a base of ours (generation >= 1): the first
    // change to a seed-form store, or to none, writes the base.
    let clean = !s.maybe_dup && !s.skipped && !s.overflow;
    if s.generation == 0 {
        // No shard applies: every one there is stale (a wipe that could
        // not remove them, or the fold past generation 4294967295 that
        // wrote generation 0) and goes before the base that numbers them.
        for path in SHARD_PATHS.iter() {
            let _ = port.remove(path);
        }
    }
    if clean && !s.collides && s.generation > 0 {
        // Its place among the new keys (kept when it is one already).
        let n = if s.in_base {
            Some(0)
        } else {
            s.max_n.checked_add(1)
        };
        if let Some(n) = n {
            match shard_edit(port, key, e, n, s, pinned) {
                Ok(true) => return Outcome::new(Ok(false)),
                Ok(false) => {}
                Err(err) => return Outcome::new(Err((err, Check::Landed))),
            }
        }
    }
    Outcome::new(Ok(true))
}

/// Whether the store holds `e` applied to `key` (the last line counts):
/// the first pass again.
fn landed<P: Port>(port: &mut P, key: &[u8], e: Edit<'_>) -> bool {
    let value = match e {
        Edit::Set(v) => v,
        _ => b"",
    };
    let s = &mut Scan::new();
    if scan(port, key, s).is_err() {
        return false;
    }
    let Ok(found) = found(port, e, s, value) else {
        return false;
    };
    match (e, found) {
        (Edit::Set(_), Some((same, _))) => same,
        (Edit::Forget, None) => true,
        #[cfg(feature = "recall")]
        (Edit::Pin(on), Some((_, pinned))) => pinned == on,
        _ => false,
    }
}
