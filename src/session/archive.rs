//! `/.bentoclaw_archive`: where compacted and retired turns go (feature
//! `lasting`). Readable, never loaded into the context.
//!
//! The same JSON Lines as the session file, oldest first (roles include
//! `summary`, for a retired summary):
//!
//! ```text
//! {"role":"user","content":"my cat is called Mali"}
//! {"role":"assistant","content":"Noted!"}
//! ```
//!
//! Turns are appended when they are compacted away or when a session is
//! retired, before they leave the ring; nothing changes when that append
//! fails. The file is capped at [`ARCHIVE_MAX`] bytes: past that, the
//! newest lines that fit in half of it are copied to
//! `/.bentoclaw_archive.tmp`, which is renamed over the archive (the oldest
//! turns are dropped, never the newest). A failed append leaves at most a
//! torn last line, which the next trim drops.

use crate::format::lines::LineWriter;
use crate::message::Message;
use crate::port::{Errno, Mode, Port};

pub use crate::port::{ARCHIVE_PATH, ARCHIVE_TMP_PATH};
/// Size cap of the archive in bytes.
pub(crate) const ARCHIVE_MAX: u32 = 8 * 1024;

/// Writes one turn as a JSON line.
pub fn write_turn<P: Port>(port: &mut P, w: &mut LineWriter, m: &Message) -> Result<(), Errno> {
    w.raw(port, b"{\"role\":\"")?;
    w.raw(port, m.role.name())?;
    w.raw(port, b"\",\"content\":")?;
    w.string(port, &m.text)?;
    w.raw(port, b"}\n")
}

/// Appends `turns`, then trims the archive when it passed the cap. Its
/// own frame: its writer is not on the stack under what its caller does
/// next (a new session's clear).
// stack: see docs/STACK.md
#[inline(never)]
pub fn append<'a, P: Port>(
    port: &mut P,
    turns: impl Iterator<Item = &'a Message>,
) -> Result<(), Errno> {
    let fd = port.open(ARCHIVE_PATH, Mode::Append)?;
    let mut w = LineWriter::new(fd);
    let mut written = Ok(());
    for m in turns {
        written = write_turn(port, &mut w, m);
        if written.is_err() {
            break;
        }
    }
    let written = written.and_then(|()| w.flush(port));
    let closed = port.close(fd);
    written?;
    closed?;
    let size = file_size(port)?;
    if size > ARCHIVE_MAX {
        // A failed trim leaves a valid (if large) archive: not an error of
        // the append.
        let _ = trim(port, size - ARCHIVE_MAX / 2);
    }
    Ok(())
}

fn file_size<P: Port>(port: &mut P) -> Result<u32, Errno> {
    let fd = port.open(ARCHIVE_PATH, Mode::Read)?;
    let mut buf = [0u8; 64];
    let mut size = 0u32;
    let res = loop {
        match port.read(fd, &mut buf) {
            Ok(0) => break Ok(size),
            Ok(n) => size = size.saturating_add(n as u32),
            Err(e) => break Err(e),
        }
    };
    let _ = port.close(fd);
    res
}

/// Copies the archive without its first `drop` bytes (and the rest of the
/// line they end in) to the temporary file and renames it into place.
fn trim<P: Port>(port: &mut P, drop: u32) -> Result<(), Errno> {
    let src = port.open(ARCHIVE_PATH, Mode::Read)?;
    let dst = match port.open(ARCHIVE_TMP_PATH, Mode::Write) {
        Ok(fd) => fd,
        Err(e) => {
            let _ = port.close(src);
            return Err(e);
        }
    };
    let mut buf = [0u8; 64];
    let mut offset = 0u32;
    let mut copying = false;
    let copied = loop {
        let n = match port.read(src, &mut buf) {
            Ok(0) => break Ok(()),
            Ok(n) => n,
            Err(e) => break Err(e),
        };
        let chunk = buf.get(..n).unwrap_or(&[]);
        let mut start = 0usize;
        if !copying {
            // Skip to the first newline at or after `drop`.
            let from = drop.saturating_sub(offset) as usize;
            match chunk.iter().skip(from).position(|&b| b == b'\n') {
                Some(p) => {
                    copying = true;
                    start = from + p + 1;
                }
                None => start = n,
            }
        }
        offset = offset.saturating_add(n as u32);
        if let Some(rest) = chunk.get(start..).filter(|r| !r.is_empty()) {
            if let Err(e) = port.write(dst, rest) {
                break Err(e);
            }
        }
    };
    let _ = port.close(src);
    let closed = port.close(dst);
    let result = copied
        .and(closed)
        .and_then(|()| port.rename(ARCHIVE_TMP_PATH, ARCHIVE_PATH));
    if result.is_err() {
        let _ = port.remove(ARCHIVE_TMP_PATH);
    }
    result
}

/// Copies up to `out.len()` bytes of the archive from `offset`; returns how
/// many (0 at the end, or when there is no archive).
pub fn read<P: Port>(port: &mut P, offset: u32, out: &mut [u8]) -> Result<usize, Errno> {
    let fd = match port.open(ARCHIVE_PATH, Mode::Read) {
        Ok(fd) => fd,
        Err(Errno::ENOENT) => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut skipped = 0u32;
    let mut buf = [0u8; 64];
    let mut filled = 0usize;
    let res = loop {
        if skipped < offset {
            let want = ((offset - skipped) as usize).min(buf.len());
            match port.read(fd, buf.get_mut(..want).unwrap_or(&mut [])) {
                Ok(0) => break Ok(0),
                Ok(n) => skipped = skipped.saturating_add(n as u32),
                Err(e) => break Err(e),
            }
            continue;
        }
        let Some(rest) = out.get_mut(filled..).filter(|r| !r.is_empty()) else {
            break Ok(filled);
        };
        match port.read(fd, rest) {
            Ok(0) => break Ok(filled),
            Ok(n) => filled += n,
            Err(e) => break Err(e),
        }
    };
    let _ = port.close(fd);
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Role;
    use crate::session::ring::SessionRing;
    use crate::testing::MemPort;

    #[test]
    #[cfg_attr(miri, ignore)] // long; no unsafe code under test
    fn appends_reads_and_trims_from_the_oldest() {
        let mut port = MemPort::new();
        let mut ring = SessionRing::new();
        for i in 0..200 {
            ring.push(
                Role::User,
                format!("archived turn number {i:03}").as_bytes(),
            );
            append(&mut port, ring.iter().last().into_iter()).unwrap();
        }
        let text = String::from_utf8(port.get(ARCHIVE_PATH).unwrap()).unwrap();
        assert!(text.len() as u32 <= ARCHIVE_MAX);
        assert!(text.ends_with("archived turn number 199\"}\n"));
        assert!(
            text.starts_with("{\"role\":\"user\""),
            "trimmed on a line boundary"
        );
        assert!(!text.contains("number 000"), "the oldest went first");
        let mut out = [0u8; 40];
        let n = read(&mut port, 2, &mut out).unwrap();
        assert_eq!(&out[..n], &text.as_bytes()[2..42]);
        assert_eq!(read(&mut port, 1 << 20, &mut out).unwrap(), 0);
        assert!(port.get(ARCHIVE_TMP_PATH).is_none());
    }
}
