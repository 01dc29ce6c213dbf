//! An edit written in its key's shard: the shard's records of other keys
//! kept as they are, the key's record written after them, the file
//! replaced whole.

use core::ffi::CStr;

use super::hash::sig;
use super::plan::Scan;
#[cfg(feature = "recall")]
use super::reader::read_at;
use super::reader::{open_opt, put_reader};
use super::{Edit, MemError, SHARD_MAX, SHARD_PATHS, SHARD_RECORDS, shard_of};
use crate::format::lines::{LineWriter, NO_FD};
#[cfg(feature = "recall")]
use crate::format::memory::Pair;
use crate::format::memory::{KEY_MAX_BYTES, PairReader, Rec, write_del, write_header, write_pair};
use crate::port::{Errno, Fd, MEMORY_TMP_PATH, Mode, Port};

/// A pin written to the key's shard: its value read again where the scan
/// found it (a pin is rare), after the shard's records were read (not
/// under it). Inlined into `commit`: its pair is then on the stack of
/// every edit's commit, but a frame less sits above the shard's write.
#[cfg(feature = "recall")]
fn shard_pin<P: Port>(port: &mut P, at: &Shard<'_>, on: bool, s: &Scan) -> Result<bool, MemError> {
    let mut pair = Pair::new();
    match s.at {
        Some(loc) if read_at(port, loc, &mut pair)? => {}
        _ => return Ok(false),
    }
    shard_write(port, at, Change::Pair(pair.value(), on, at.place))
}

/// The record a shard gets for its key.
#[derive(Clone, Copy)]
enum Change<'a> {
    /// The key's value, pin and place among the new keys (0: none).
    Pair(&'a [u8], bool, u8),
    /// The key is forgotten.
    Del,
}

/// Rewrites the key's shard with the edit `e` (`n`: the key's place
/// among the new keys when it is not one yet); false (nothing written)
/// when the shard would pass [`SHARD_MAX`] or holds another key with the
/// same fingerprint: then the caller folds.
pub(super) fn shard_edit<P: Port>(
    port: &mut P,
    key: &[u8],
    e: Edit<'_>,
    n: u8,
    s: &Scan,
    pinned: bool,
) -> Result<bool, MemError> {
    let path = SHARD_PATHS
        .get(shard_of(key))
        .copied()
        .unwrap_or(MEMORY_TMP_PATH);
    let mut at = Shard {
        path,
        key,
        generation: s.generation,
        keep: [(0, 0); SHARD_RECORDS],
        kept: 0,
        place: n,
    };
    if !shard_keep(port, &mut at)? {
        return Ok(false);
    }
    let change = match e {
        Edit::Set(v) => Change::Pair(v, pinned, at.place),
        Edit::Forget => Change::Del,
        #[cfg(feature = "recall")]
        Edit::Pin(on) => return shard_pin(port, &at, on, s),
    };
    shard_write(port, &at, change)
}

/// The key's shard, as an edit rewrites it.
struct Shard<'a> {
    path: &'static CStr,
    key: &'a [u8],
    /// The base's generation (a shard of another is stale).
    generation: u32,
    /// Its records of other keys, as byte ranges (none when it is stale).
    keep: [(u8, u8); SHARD_RECORDS],
    kept: usize,
    /// The key's place among the new keys: its old one, else the one a
    /// new key gets.
    place: u8,
}

impl Shard<'_> {
    fn kept(&self) -> &[(u8, u8)] {
        self.keep.get(..self.kept).unwrap_or(&[])
    }
}

/// Reads the records of the shard that an edit keeps into `at`; false when
/// the store must fold instead (another key with the key's fingerprint, or
/// no room for the key's record). Read from the file, not from the bytes
/// [`shard_write`] copies: those are not held on the stack of the record
/// reader.
#[inline(never)] // stack: see docs/STACK.md
fn shard_keep<P: Port>(port: &mut P, at: &mut Shard<'_>) -> Result<bool, Errno> {
    let Some(fd) = open_opt(port, at.path)? else {
        return Ok(true);
    };
    let mut slot = None;
    let res = shard_records(port, put_reader(&mut slot, fd), at);
    let _ = port.close(fd);
    res
}

/// [`shard_keep`]'s parse, up to the end of the shard or past
/// [`SHARD_MAX`] (then the shard is not rewritten: no need to read on).
fn shard_records<P: Port>(
    port: &mut P,
    r: &mut PairReader,
    at: &mut Shard<'_>,
) -> Result<bool, Errno> {
    let mine = sig(at.key);
    let mut other = [0u8; KEY_MAX_BYTES];
    let mut header = false;
    let mut from = 0u32;
    while let Some((rec, kl, _, _)) = r.rec(port, &mut other, &mut [])? {
        let to = r.offset();
        if to as usize > SHARD_MAX {
            return Ok(false);
        }
        match rec {
            Rec::Header(g) if from == 0 => header = g == at.generation,
            _ if !header => break,
            Rec::Header(_) => {}
            Rec::Pair(_) | Rec::Del => {
                let k = other.get(..usize::from(kl)).unwrap_or(&[]);
                if k == at.key {
                    if let Rec::Pair(old @ 1..) = rec {
                        at.place = old;
                    }
                } else {
                    if sig(k) == mine {
                        return Ok(false);
                    }
                    match at.keep.get_mut(at.kept) {
                        Some(slot) => *slot = (from as u8, to as u8),
                        None => return Ok(false),
                    }
                    at.kept += 1;
                }
            }
        }
        from = to;
    }
    // No room for the key's record: fold.
    Ok(at.kept < SHARD_RECORDS)
}

/// Writes the shard `at`: its header, the ranges of its bytes it keeps as
/// they are, and `change` for its key; false (nothing written) when the
/// shard is or would be over [`SHARD_MAX`].
fn shard_write<P: Port>(
    port: &mut P,
    at: &Shard<'_>,
    change: Change<'_>,
) -> Result<bool, MemError> {
    let path = at.path;
    // The shard's bytes: one of ours is at most SHARD_MAX.
    let mut old = [0u8; SHARD_MAX + 1];
    let len = match open_opt(port, path)? {
        Some(fd) => {
            let r = read_all(port, fd, &mut old);
            let _ = port.close(fd);
            r?
        }
        None => 0,
    };
    if len > SHARD_MAX {
        return Ok(false);
    }
    let old = old.get(..len).unwrap_or(&[]);
    let size = write_shard(port, NO_FD, old, at, &change).map(|n| n as usize);
    if size.map_or(true, |n| n > SHARD_MAX) {
        return Ok(false);
    }
    // Where "wb" is not atomic (FAT, a Python file system) through a
    // temporary file and a rename, so that a failure keeps the old shard.
    let atomic = port.atomic_write(path);
    let target = if atomic { path } else { MEMORY_TMP_PATH };
    let fd = port.open(target, Mode::Write)?;
    let written = write_shard(port, fd, old, at, &change);
    let closed = port.close(fd);
    let result = written.and(closed).and_then(|()| {
        if atomic {
            Ok(())
        } else {
            port.rename(MEMORY_TMP_PATH, path)
        }
    });
    if result.is_err() && !atomic {
        let _ = port.remove(MEMORY_TMP_PATH);
    }
    result?;
    Ok(true)
}

fn read_all<P: Port>(port: &mut P, fd: Fd, buf: &mut [u8]) -> Result<usize, Errno> {
    let mut len = 0usize;
    loop {
        let Some(room) = buf.get_mut(len..).filter(|r| !r.is_empty()) else {
            return Ok(len);
        };
        match port.read(fd, room)? {
            0 => return Ok(len),
            n => len += n.min(room.len()),
        }
    }
}

fn write_shard<P: Port>(
    port: &mut P,
    fd: Fd,
    old: &[u8],
    at: &Shard<'_>,
    change: &Change<'_>,
) -> Result<u32, Errno> {
    let mut w = LineWriter::new(fd);
    write_header(port, &mut w, at.generation)?;
    for &(a, b) in at.kept() {
        let line = old.get(usize::from(a)..usize::from(b)).unwrap_or(&[]);
        w.raw(port, line)?;
        if line.last() != Some(&b'\n') {
            w.raw(port, b"\n")?;
        }
    }
    match *change {
        Change::Pair(v, pinned, n) => write_pair(port, &mut w, at.key, v, pinned, n)?,
        Change::Del => write_del(port, &mut w, at.key)?,
    }
    w.flush(port).map(|()| w.written())
}
