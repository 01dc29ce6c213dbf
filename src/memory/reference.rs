//! The store's reader as it was before it read shard records with one
//! reader (a second reader per override) and before `get` and `scan` left
//! overridden pairs pending: the equivalence tests compare the two.

#![allow(dead_code)]

use super::*;

/// The merged store, streamed: the base's pairs in their order, each with
/// its shard's record when one overrides it (a forgotten key is left out),
/// then the keys new since the base, in the order they were added. At
/// most two files open at a time.
pub struct Store {
    reader: Option<PairReader>,
    /// 0: the base; 1: the new keys; 2: done.
    phase: u8,
    /// The base's generation.
    generation: u32,
    /// The newest generation any file names (a fold goes past it: stale
    /// shards must not come back).
    newest: u32,
    /// The shards' records: fingerprint, `"n"`; shard `s` at
    /// `start[s]..start[s+1]`.
    sigs: [u16; ENTRIES],
    ns: [u8; ENTRIES],
    start: [u8; SHARDS + 1],
    /// Records that are `"del"` (bit per entry).
    dels: u64,
    /// Records that override a pair of the base.
    matched: u64,
    /// New keys already returned.
    emitted: u64,
    /// The largest `"n"`.
    max_n: u8,
    /// Pairs of the base read so far (overridden ones included).
    base_pairs: usize,
    /// Whether the base had a line that is not a record.
    skipped: bool,
    /// Whether the last pair holds a place of the base.
    from_base: bool,
}

fn bit64(j: usize) -> u64 {
    if j < 64 { 1 << j } else { 0 }
}

impl Store {
    /// Reads the base's generation and the shards' keys.
    #[inline(never)]
    pub fn open<P: Port>(port: &mut P) -> Result<Store, Errno> {
        let mut s = Store::new();
        s.load_with(port, &mut Pair::new())?;
        Ok(s)
    }

    /// A store not read yet.
    pub const fn new() -> Store {
        Store {
            reader: None,
            phase: 0,
            generation: 0,
            newest: 0,
            sigs: [0; ENTRIES],
            ns: [0; ENTRIES],
            start: [0; SHARDS + 1],
            dels: 0,
            matched: 0,
            emitted: 0,
            max_n: 0,
            base_pairs: 0,
            skipped: false,
            from_base: false,
        }
    }

    /// [`Store::open`] in place (no copy of the struct between frames).
    pub fn load<P: Port>(&mut self, port: &mut P) -> Result<(), Errno> {
        self.load_with(port, &mut Pair::new())
    }

    /// [`Store::load`] with the caller's pair buffer (clobbered). The files
    /// are read through the store's own reader slot, free until the first
    /// [`Store::next`]: the frames of a load hold no reader nor pair of
    /// their own.
    #[inline(never)]
    fn load_with<P: Port>(&mut self, port: &mut P, pair: &mut Pair) -> Result<(), Errno> {
        *self = Store::new();
        let generation = base_gen(port, &mut self.reader, pair)?.unwrap_or(0);
        self.generation = generation;
        self.newest = generation;
        let mut n = 0usize;
        for (i, path) in SHARD_PATHS.iter().enumerate() {
            if let Some(fd) = open_opt(port, path)? {
                let res = self.read_shard(port, fd, pair, n);
                self.reader = None;
                let _ = port.close(fd);
                if let Some(end) = res? {
                    n = end;
                }
            }
            if let Some(st) = self.start.get_mut(i + 1) {
                *st = n as u8;
            }
        }
        Ok(())
    }

    /// The records of one shard (open as `fd`, read through the reader
    /// slot) from entry `from`; `None` when it is stale or not one of ours.
    fn read_shard<P: Port>(
        &mut self,
        port: &mut P,
        fd: Fd,
        pair: &mut Pair,
        from: usize,
    ) -> Result<Option<usize>, Errno> {
        let r = self.reader.insert(PairReader::new(fd));
        let first = r.record(port, pair)?;
        if let Some(Rec::Header(g)) = first {
            self.newest = self.newest.max(g);
        }
        if first != Some(Rec::Header(self.generation)) || self.generation == 0 {
            return Ok(None);
        }
        let mut j = from;
        let mut max_n = self.max_n;
        let mut dels = self.dels;
        while let Some(rec) = self
            .reader
            .as_mut()
            .map_or(Ok(None), |r| r.record(port, pair))?
        {
            let n = match rec {
                Rec::Header(_) => continue,
                Rec::Pair(n) => n,
                Rec::Del => {
                    dels |= bit64(j);
                    0
                }
            };
            match (self.sigs.get_mut(j), self.ns.get_mut(j)) {
                (Some(sg), Some(nn)) if j - from < SHARD_RECORDS => {
                    *sg = sig(pair.key());
                    *nn = n;
                }
                _ => return Ok(None),
            }
            max_n = max_n.max(n);
            j += 1;
        }
        self.max_n = max_n;
        self.dels = dels;
        Ok(Some(j))
    }

    /// The entry of the shards that holds `key`.
    fn entry(&self, key: &[u8]) -> Option<usize> {
        let (s, k) = place(fnv(key));
        let a = usize::from(self.start.get(s).copied().unwrap_or(0));
        let b = usize::from(self.start.get(s + 1).copied().unwrap_or(0));
        (a..b).find(|&j| self.sigs.get(j) == Some(&k))
    }

    /// Reads entry `j`'s record into `pair`; false when it is not there.
    #[inline(never)]
    fn read_entry<P: Port>(&self, port: &mut P, j: usize, pair: &mut Pair) -> Result<bool, Errno> {
        let Some(s) = (0..SHARDS).find(|&s| {
            let a = usize::from(self.start.get(s).copied().unwrap_or(0));
            let b = usize::from(self.start.get(s + 1).copied().unwrap_or(0));
            (a..b).contains(&j)
        }) else {
            return Ok(false);
        };
        let first = usize::from(self.start.get(s).copied().unwrap_or(0));
        let path = SHARD_PATHS.get(s).copied().unwrap_or(MEMORY_PATH);
        let Some(fd) = open_opt(port, path)? else {
            return Ok(false);
        };
        let mut r = PairReader::new(fd);
        let mut k = first;
        let res = loop {
            match r.record(port, pair) {
                Ok(Some(Rec::Header(_))) => {}
                Ok(Some(rec)) if k == j => break Ok(matches!(rec, Rec::Pair(_))),
                Ok(Some(_)) => k += 1,
                Ok(None) => break Ok(false),
                Err(e) => break Err(e),
            }
        };
        let _ = port.close(fd);
        res
    }

    /// The next pair of the merged store, or `None` at its end.
    pub fn next<P: Port>(&mut self, port: &mut P, pair: &mut Pair) -> Result<Option<()>, Errno> {
        while self.phase == 0 {
            let Some(r) = self.reader.as_mut() else {
                match open_opt(port, MEMORY_PATH)? {
                    Some(fd) => self.reader = Some(PairReader::new(fd)),
                    None => self.phase = 1,
                }
                continue;
            };
            match r.record(port, pair)? {
                None => {
                    self.skipped = r.skipped;
                    self.close(port);
                    self.phase = 1;
                }
                Some(Rec::Pair(_)) => {
                    self.base_pairs += 1;
                    self.from_base = true;
                    let Some(j) = self.entry(pair.key()) else {
                        return Ok(Some(()));
                    };
                    self.matched |= bit64(j);
                    if self.dels & bit64(j) == 0 && self.read_entry(port, j, pair)? {
                        return Ok(Some(()));
                    }
                }
                Some(_) => {}
            }
        }
        // The keys new since the base: by "n", then by place (at most
        // ENTRIES rounds: each takes one entry).
        let total = usize::from(self.start.get(SHARDS).copied().unwrap_or(0));
        loop {
            let used = self.dels | self.matched | self.emitted;
            let next = (0..total)
                .filter(|&j| used & bit64(j) == 0)
                .min_by_key(|&j| (self.ns.get(j).copied().unwrap_or(0), j));
            let Some(j) = next else {
                self.phase = 2;
                return Ok(None);
            };
            self.emitted |= bit64(j);
            self.from_base = false;
            if self.read_entry(port, j, pair)? {
                return Ok(Some(()));
            }
        }
    }

    /// Closes the file being read (after an error, or to stop early).
    pub fn close<P: Port>(&mut self, port: &mut P) {
        if let Some(r) = self.reader.take() {
            let _ = port.close(r.fd());
        }
    }
}

/// One frame holds the reader and the pair, whoever calls (`dyn`: the
/// callers' closures do not each get a copy of it inlined).
#[inline(never)]
pub fn for_each<P: Port>(port: &mut P, f: &mut dyn FnMut(&Pair)) -> Result<(), Errno> {
    let mut store = Store::new();
    let mut pair = Pair::new();
    store.load_with(port, &mut pair)?;
    let res = loop {
        match store.next(port, &mut pair) {
            Ok(Some(())) => f(&pair),
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    store.close(port);
    res
}

/// Copies the value of `key` into `out`; returns its length.
pub fn get<P: Port>(port: &mut P, key: &[u8], out: &mut [u8]) -> Result<usize, MemError> {
    validate(key, b"")?;
    let mut found: Option<usize> = None;
    let mut too_small = false;
    for_each(port, &mut |p| {
        if p.key() == key {
            // The last line wins: a later duplicate overwrites.
            match out.get_mut(..p.value().len()) {
                Some(dst) => {
                    crate::text::copy_prefix(dst, p.value());
                    found = Some(p.value().len());
                    too_small = false;
                }
                None => {
                    found = None;
                    too_small = true;
                }
            }
        }
    })?;
    match (found, too_small) {
        (Some(n), _) => Ok(n),
        (None, true) => Err(MemError::TooSmall),
        (None, false) => Err(MemError::NotFound),
    }
}
