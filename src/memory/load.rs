//! The load: the base's generation and the index of the shards' records
//! (each record's fingerprint and place), read before a pass.

use super::edit::Tally;
use super::hash::{fnv, place, sig};
use super::reader::{Slot, bit64, open_opt, put_reader};
use super::{OVERFLOW, PART_BASE, SHARD_PATHS, SHARDS, Store};
use crate::format::memory::{Got, KEY_MAX_BYTES, Rec};
use crate::kernel::packed::Packed;
use crate::port::{Errno, MEMORY_PATH, Port};

impl Store {
    /// [`Store::load`] with the caller's pair buffer (clobbered). The files
    /// are read through the store's own reader slot, free until the first
    /// [`Store::next`]: the frames of a load hold no reader nor pair of
    /// their own, and the record reader is called from this small frame.
    pub(crate) fn load_with<P: Port, S: Slot>(
        &mut self,
        port: &mut P,
        pair: &mut S,
    ) -> Result<(), Errno> {
        self.load_into(port, pair.key_buf(), None)
    }

    /// [`Store::load_with`], telling `sink` the shard records (an edit's
    /// scan: the keys new since the base without reading the shards again).
    pub(super) fn load_into<P: Port>(
        &mut self,
        port: &mut P,
        key: &mut [u8; KEY_MAX_BYTES],
        mut sink: Option<&mut Tally<'_>>,
    ) -> Result<(), Errno> {
        self.reset(port);
        loop {
            let Some(r) = self.reader.as_mut() else {
                if !self.load_open(port)? {
                    return Ok(());
                }
                continue;
            };
            // Keys only (the values checked, not kept): one copy of the
            // load for every slot.
            // (The record packed, passed in registers: no copy of it on
            // this frame.)
            let got = r.rec_word(port, key, &mut []);
            if let Err(e) = got.get() {
                self.close(port);
                return Err(e);
            }
            self.load_rec(port, got, key, sink.as_deref_mut());
        }
    }

    /// The next file of a load opened in the reader slot: the base, then
    /// each shard there is; false when all are read.
    #[inline(never)] // stack: see docs/STACK.md
    fn load_open<P: Port>(&mut self, port: &mut P) -> Result<bool, Errno> {
        loop {
            let f = usize::from(self.ld.file);
            let path = match f {
                0 => MEMORY_PATH,
                _ => match SHARD_PATHS.get(f - 1) {
                    Some(p) => p,
                    None => return Ok(false),
                },
            };
            if let Some(fd) = open_opt(port, path)? {
                put_reader(&mut self.reader, fd);
                self.ld.first = true;
                self.ld.j = self.ld.from;
                self.ld.max_n = self.max_n;
                return Ok(true);
            }
            // No base: generation 0. No shard: no entries.
            self.ld_next_file();
        }
    }

    /// Past the file being loaded: its shard's entries end at `ld.from`.
    fn ld_next_file(&mut self) {
        if let Some(st) = self.start.get_mut(usize::from(self.ld.file)) {
            if self.ld.file > 0 {
                *st = self.ld.from;
            }
        }
        self.ld.file = self.ld.file.saturating_add(1);
    }

    /// One record of a load (`None`: the end of the file): the base's first
    /// gives its generation; a shard's, its entries (a stale shard, or one
    /// with more than [`SHARD_RECORDS`](super::SHARD_RECORDS) records, gives none).
    #[inline(never)] // stack: see docs/STACK.md
    fn load_rec<P: Port>(
        &mut self,
        port: &mut P,
        got: Packed<Result<Got, Errno>>,
        key: &[u8; KEY_MAX_BYTES],
        mut sink: Option<&mut Tally<'_>>,
    ) {
        let (rec, key) = match got.get().ok().flatten() {
            Some((rec, kl, _, _)) => (Some(rec), key.get(..usize::from(kl)).unwrap_or(&[])),
            None => (None, &[][..]),
        };
        if self.ld.file == 0 {
            let generation = match rec {
                Some(Rec::Header(g)) => g,
                _ => 0,
            };
            self.generation = generation;
            self.newest = generation;
            self.close(port);
            self.ld_next_file();
            return;
        }
        if self.ld.first {
            self.ld.first = false;
            if let Some(Rec::Header(g)) = rec {
                self.newest = self.newest.max(g);
            }
            if rec != Some(Rec::Header(self.generation)) || self.generation == 0 {
                self.ld_reject(port);
                if let Some(t) = sink.as_deref_mut() {
                    t.shard_done(false);
                }
            }
            return;
        }
        let j = usize::from(self.ld.j);
        let mut del = false;
        let n = match rec {
            None => {
                // The shard counts.
                self.ld.from = self.ld.j;
                self.max_n = self.ld.max_n;
                self.close(port);
                self.ld_next_file();
                if let Some(t) = sink.as_deref_mut() {
                    t.shard_done(true);
                }
                return;
            }
            Some(Rec::Header(_)) => return,
            Some(Rec::Pair(n)) => n,
            Some(Rec::Del) => {
                self.dels |= bit64(j);
                del = true;
                0
            }
        };
        match (self.sigs.get_mut(j), self.ns.get_mut(j)) {
            (Some(sg), Some(nn)) => {
                *sg = sig(key);
                *nn = n;
            }
            _ => {
                // The index is full: the shard is streamed (`OVERFLOW`).
                self.dels |= bit64(OVERFLOW + usize::from(self.ld.file) - 1);
                self.ld_reject(port);
                if let Some(t) = sink.as_deref_mut() {
                    t.shard_done(false);
                }
                return;
            }
        }
        if let Some(t) = sink {
            t.entry(j, key, del);
        }
        self.ld.max_n = self.ld.max_n.max(n);
        self.ld.j = self.ld.j.saturating_add(1);
    }

    /// The shard being loaded is not one of ours: none of its records
    /// count.
    fn ld_reject<P: Port>(&mut self, port: &mut P) {
        for j in usize::from(self.ld.from)..=usize::from(self.ld.j) {
            self.dels &= !bit64(j);
        }
        self.close(port);
        self.ld_next_file();
    }

    /// [`Store::new`] in place (`*self = Store::new()` would build one on
    /// the stack and copy it).
    fn reset<P: Port>(&mut self, port: &mut P) {
        self.close(port);
        self.phase = PART_BASE;
        self.generation = 0;
        self.newest = 0;
        // (The fingerprints and "n"s are read only within `start`'s
        // ranges; the load writes every one of those but the first, 0.)
        self.dels = 0;
        self.matched = 0;
        self.emitted = 0;
        self.max_n = 0;
        self.base_pairs = 0;
        self.skipped = false;
        self.from_base = false;
        self.rematch = false;
        self.base_off = 0;
        self.base_skipped = false;
        self.rec_off = 0;
        self.seek.k = 0;
        self.seek.j = 0;
        self.ld.file = 0;
        self.ld.first = false;
        self.ld.from = 0;
        self.ld.j = 0;
        self.ld.max_n = 0;
    }

    /// The entry of the shards that holds `key`.
    pub(super) fn entry(&mut self, key: &[u8]) -> Option<usize> {
        self.last_fnv = fnv(key);
        let (s, k) = place(self.last_fnv);
        let a = usize::from(self.start.get(s).copied().unwrap_or(0));
        let b = usize::from(self.start.get(s + 1).copied().unwrap_or(0));
        (a..b).find(|&j| self.sigs.get(j) == Some(&k))
    }

    /// The shard of entry `j` and its first entry.
    pub(super) fn entry_shard(&self, j: usize) -> Option<(usize, usize)> {
        (0..SHARDS).find_map(|s| {
            let a = usize::from(self.start.get(s).copied().unwrap_or(0));
            let b = usize::from(self.start.get(s + 1).copied().unwrap_or(0));
            (a..b).contains(&j).then_some((s, a))
        })
    }
}
