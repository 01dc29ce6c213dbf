//! The session: the conversation ring in RAM and its copy on flash.
//!
//! # `/.bentoclaw_session` — JSON Lines, one message a line
//!
//! ```text
//! {"role":"system","content":"Connected to TESAIoT backend"}
//! {"role":"user","content":"สวัสดี, what is my name?","end":true}
//! {"role":"assistant","content":"Your name is Somchai.","end":true}
//! ```
//!
//! * `role` is `user`, `assistant`, `system` or `tool`; `content` is the
//!   message, UTF-8, at most 255 bytes once decoded.
//! * Every flush **appends** the messages added since the last flush (a
//!   batch); the last line of a batch carries `"end":true`. A reader only
//!   trusts lines up to the last `end` line, so a batch whose tail was lost
//!   to a power cut is dropped whole: the ring read back is exactly the one
//!   of some completed flush, never a mix. (littlefs also commits an append
//!   atomically at close; the marker makes the format safe on FAT as well.)
//! * The reader keeps the newest ten trusted lines. A line that is not a
//!   record (torn, garbage, invalid UTF-8, too long) is skipped and the file
//!   is marked for repair.
//! * Appending forever would grow the file: once it would hold more than
//!   [`COMPACT_LINES`] lines, or when it needs repair, the flush instead
//!   writes the whole ring to `/.bentoclaw_session.tmp` and renames it over
//!   the file (atomic on littlefs). Appends keep the bytes written per
//!   exchange close to the size of the new lines; see `docs/PERFORMANCE.md`.
//!
//! # Laziness and failures
//!
//! `init` touches no file. The first call that needs the ring loads it; a
//! file that exists but cannot be read is left alone and read again later.
//! `add` never writes flash; `flush` does, and keeps the ring dirty when it
//! fails (a failed append is followed by a whole rewrite from RAM, never by
//! another write through the failed handle). `clear` deletes the file; when
//! the delete fails it rewrites the file empty at once, and when that fails
//! too the clear stays pending and the next flush retries it — the old
//! conversation is never read back.

pub mod ring;

use crate::jsonl::{ByteReader, Line, LineWriter, ScalarField, StrField, read_record};
use crate::port::{Errno, Mode, Port, SESSION_PATH, SESSION_TMP_PATH};
use crate::text::utf8_prefix;
use ring::{MAX_MSGS, MSG_MAX_BYTES, Role, SessionRing};

/// A flush rewrites the file instead of appending once it would hold more
/// lines than this.
pub(crate) const COMPACT_LINES: u16 = 3 * MAX_MSGS as u16;

/// Why `add` refused a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddError {
    /// The content is not UTF-8.
    NotUtf8,
    /// The session file exists but could not be read; the ring is not
    /// touched, and the next call tries again.
    Io(Errno),
}

/// The ring plus what is known about its file.
pub struct Session {
    ring: SessionRing,
    loaded: bool,
    dirty: bool,
    /// Newest messages of the ring that are not in the file yet.
    unflushed: u8,
    /// Trusted lines in the file.
    file_lines: u16,
    /// The next flush must rewrite the file whole (repair, failed append,
    /// pending clear).
    rewrite: bool,
}

impl Session {
    /// Fresh RAM state; nothing loaded yet.
    pub const fn new() -> Self {
        Self {
            ring: SessionRing::new(),
            loaded: false,
            dirty: false,
            unflushed: 0,
            file_lines: 0,
            rewrite: false,
        }
    }

    /// Forgets the RAM ring, unflushed (`claw_session_init`).
    pub fn init(&mut self) {
        *self = Self::new();
    }

    /// The ring, loading it first when needed (empty while the file cannot
    /// be read).
    pub fn ring<P: Port>(&mut self, port: &mut P) -> &SessionRing {
        let _ = self.ensure_loaded(port);
        &self.ring
    }

    /// Appends a message; no flash write.
    pub fn add<P: Port>(&mut self, port: &mut P, role: Role, text: &[u8]) -> Result<(), AddError> {
        let keep = utf8_prefix(text, MSG_MAX_BYTES).ok_or(AddError::NotUtf8)?;
        self.ensure_loaded(port).map_err(AddError::Io)?;
        self.ring.push(role, text.get(..keep).unwrap_or(&[]));
        self.dirty = true;
        self.unflushed = self.unflushed.saturating_add(1).min(MAX_MSGS as u8);
        Ok(())
    }

    /// Messages in the ring.
    pub fn count<P: Port>(&mut self, port: &mut P) -> u16 {
        self.ring(port).len() as u16
    }

    /// Whether RAM holds changes the file does not (no I/O).
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Writes what is dirty to flash. On failure the ring stays dirty.
    pub fn flush<P: Port>(&mut self, port: &mut P) -> Result<(), Errno> {
        if !self.dirty {
            return Ok(());
        }
        let n = u16::from(self.unflushed);
        let result = if self.rewrite || self.file_lines.saturating_add(n) > COMPACT_LINES {
            self.rewrite_file(port)
        } else {
            self.append(port, usize::from(self.unflushed))
        };
        match result {
            Ok(()) => {
                self.dirty = false;
                self.unflushed = 0;
                Ok(())
            }
            Err(e) => {
                // The file may now end in a partial batch: only a rewrite
                // from RAM repairs it.
                self.rewrite = true;
                Err(e)
            }
        }
    }

    /// Empties the ring and deletes the file; see the module docs.
    pub fn clear<P: Port>(&mut self, port: &mut P) {
        self.ring.clear();
        self.loaded = true;
        self.unflushed = 0;
        match port.remove(SESSION_PATH) {
            Ok(()) | Err(Errno::ENOENT) => {
                self.file_lines = 0;
                self.rewrite = false;
                self.dirty = false;
            }
            Err(_) => {
                self.rewrite = true;
                self.dirty = true;
                // Try to make the clear durable now rather than at the next
                // flush; if this fails too, the next flush retries.
                let _ = self.flush(port);
            }
        }
    }

    /// Loads the ring on first use. A file that exists but cannot be read
    /// leaves the session unloaded (and the file alone): the next call tries
    /// again, rather than a later flush replacing a good file with an empty
    /// ring.
    fn ensure_loaded<P: Port>(&mut self, port: &mut P) -> Result<(), Errno> {
        if self.loaded {
            return Ok(());
        }
        self.ring.clear();
        self.file_lines = 0;
        match self.load(port) {
            Ok(clean) => self.rewrite = !clean,
            Err(Errno::ENOENT) => self.rewrite = false,
            Err(e) => {
                self.ring.clear();
                self.file_lines = 0;
                return Err(e);
            }
        }
        self.loaded = true;
        Ok(())
    }

    /// Loads the trusted lines; `Ok(false)` when the file needs repair.
    fn load<P: Port>(&mut self, port: &mut P) -> Result<bool, Errno> {
        // Pass 1: where does the last complete batch end?
        let (cut, clean) = {
            let fd = port.open(SESSION_PATH, Mode::Read)?;
            let mut r = ByteReader::new(fd);
            let res = scan_batches(port, &mut r);
            let _ = port.close(fd);
            res?
        };
        // Pass 2: keep the newest lines before the cut.
        let fd = port.open(SESSION_PATH, Mode::Read)?;
        let mut r = ByteReader::new(fd);
        let res = self.read_lines(port, &mut r, cut);
        let _ = port.close(fd);
        res?;
        Ok(clean)
    }

    fn read_lines<P: Port>(
        &mut self,
        port: &mut P,
        r: &mut ByteReader,
        cut: u32,
    ) -> Result<(), Errno> {
        while r.offset() < cut {
            let mut role = [0u8; 9];
            let mut text = [0u8; MSG_MAX_BYTES];
            let mut strs = [
                StrField::new(b"role", &mut role),
                StrField::new(b"content", &mut text),
            ];
            let line = read_record(port, r, &mut strs, &mut [])?;
            match line {
                Line::Record | Line::RecordAtEof => {
                    if let Some(role) = Role::from_name(strs[0].value()) {
                        self.ring.push(role, strs[1].value());
                        self.file_lines = self.file_lines.saturating_add(1);
                    }
                }
                Line::Skipped => {}
                Line::Eof => break,
            }
        }
        Ok(())
    }

    fn write_lines<P: Port>(
        &self,
        port: &mut P,
        w: &mut LineWriter,
        newest: usize,
    ) -> Result<(), Errno> {
        let skip = self.ring.len().saturating_sub(newest);
        let last = self.ring.len().saturating_sub(1);
        for (i, m) in self.ring.iter().enumerate().skip(skip) {
            w.raw(port, b"{\"role\":\"")?;
            w.raw(port, m.role.name())?;
            w.raw(port, b"\",\"content\":")?;
            w.string(port, &m.text)?;
            w.raw(
                port,
                if i == last {
                    b",\"end\":true}\n"
                } else {
                    b"}\n"
                },
            )?;
        }
        w.flush(port)
    }

    fn append<P: Port>(&mut self, port: &mut P, newest: usize) -> Result<(), Errno> {
        let fd = port.open(SESSION_PATH, Mode::Append)?;
        let mut w = LineWriter::new(fd);
        let written = self.write_lines(port, &mut w, newest);
        let closed = port.close(fd);
        written?;
        closed?;
        self.file_lines = self.file_lines.saturating_add(newest as u16);
        Ok(())
    }

    fn rewrite_file<P: Port>(&mut self, port: &mut P) -> Result<(), Errno> {
        let fd = port.open(SESSION_TMP_PATH, Mode::Write)?;
        let mut w = LineWriter::new(fd);
        let written = self.write_lines(port, &mut w, self.ring.len());
        let closed = port.close(fd);
        let result = written
            .and(closed)
            .and_then(|()| port.rename(SESSION_TMP_PATH, SESSION_PATH));
        if result.is_err() {
            let _ = port.remove(SESSION_TMP_PATH);
            return result;
        }
        self.file_lines = self.ring.len() as u16;
        self.rewrite = false;
        Ok(())
    }
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

/// Pass 1 of a load: the offset just past the last `"end":true` line, and
/// whether the file is clean (no skipped line, nothing after that point).
fn scan_batches<P: Port>(port: &mut P, r: &mut ByteReader) -> Result<(u32, bool), Errno> {
    let mut cut = 0u32;
    let mut clean = true;
    loop {
        let mut role = [0u8; 9];
        let mut text = [0u8; MSG_MAX_BYTES];
        let mut strs = [
            StrField::new(b"role", &mut role),
            StrField::new(b"content", &mut text),
        ];
        let mut end = [ScalarField {
            name: b"end",
            value: crate::jsonl::Scalar::Absent,
        }];
        match read_record(port, r, &mut strs, &mut end)? {
            Line::Eof => break,
            Line::Record if Role::from_name(strs[0].value()).is_some() => {
                if end[0].value == crate::jsonl::Scalar::True {
                    cut = r.offset();
                }
            }
            Line::RecordAtEof if Role::from_name(strs[0].value()).is_some() => {
                // Valid but unterminated: trust it, but an append would glue
                // onto it, so the file gets rewritten.
                if end[0].value == crate::jsonl::Scalar::True {
                    cut = r.offset();
                }
                clean = false;
            }
            _ => clean = false,
        }
    }
    if r.offset() != cut {
        clean = false;
    }
    Ok((cut, clean))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{MemPort, Op};

    fn texts(s: &mut Session, port: &mut MemPort) -> Vec<String> {
        s.ring(port)
            .iter()
            .map(|m| String::from_utf8(m.text.to_vec()).unwrap())
            .collect()
    }

    fn reboot(port: &mut MemPort) -> Session {
        let _ = port;
        Session::new()
    }

    #[test]
    fn add_keeps_newest_ten_without_writing() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        for i in 0..25 {
            s.add(&mut port, Role::User, format!("m{i}").as_bytes())
                .unwrap();
        }
        assert_eq!(s.count(&mut port), 10);
        assert_eq!(texts(&mut s, &mut port)[0], "m15");
        assert_eq!(port.writes, 0, "add must not write flash");
        assert!(s.is_dirty());
    }

    #[test]
    fn flush_then_reload_round_trips_and_appends() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        s.add(&mut port, Role::User, "สวัสดี \"quoted\"\nline".as_bytes())
            .unwrap();
        s.add(&mut port, Role::Assistant, b"hi").unwrap();
        s.flush(&mut port).unwrap();
        assert!(!s.is_dirty());
        s.add(&mut port, Role::Tool, b"42").unwrap();
        s.flush(&mut port).unwrap();
        let file = String::from_utf8(port.get(SESSION_PATH).unwrap()).unwrap();
        assert_eq!(file.lines().count(), 3, "{file}");
        assert!(file.lines().nth(1).unwrap().ends_with("\"end\":true}"));
        let mut s2 = reboot(&mut port);
        assert_eq!(
            texts(&mut s2, &mut port),
            ["สวัสดี \"quoted\"\nline", "hi", "42"]
        );
        assert_eq!(s2.ring(&mut port).get(2).unwrap().role, Role::Tool);
    }

    #[test]
    fn compacts_instead_of_growing() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        for i in 0..100 {
            s.add(&mut port, Role::User, format!("q{i}").as_bytes())
                .unwrap();
            s.add(&mut port, Role::Assistant, format!("a{i}").as_bytes())
                .unwrap();
            s.flush(&mut port).unwrap();
            let lines = port
                .get(SESSION_PATH)
                .unwrap()
                .split(|&b| b == b'\n')
                .count()
                - 1;
            assert!(lines <= COMPACT_LINES as usize);
        }
        let mut s2 = Session::new();
        assert_eq!(texts(&mut s2, &mut port).last().unwrap(), "a99");
        assert_eq!(s2.count(&mut port), 10);
    }

    #[test]
    fn truncates_on_a_character_boundary() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        let long = "ก".repeat(100); // 300 bytes
        s.add(&mut port, Role::User, long.as_bytes()).unwrap();
        let t = &s.ring(&mut port).get(0).unwrap().text;
        assert_eq!(t.len(), 255);
        assert!(core::str::from_utf8(t).is_ok());
        assert_eq!(
            s.add(&mut port, Role::User, &[0xE0, 0xB8]),
            Err(AddError::NotUtf8)
        );
    }

    #[test]
    fn failed_flush_stays_dirty_and_retry_rewrites_from_ram() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        s.add(&mut port, Role::User, b"one").unwrap();
        s.flush(&mut port).unwrap();
        s.add(&mut port, Role::User, b"two").unwrap();
        port.fail(Op::Write, 0, Errno::ENOSPC);
        assert_eq!(s.flush(&mut port), Err(Errno::ENOSPC));
        assert!(s.is_dirty());
        // Nothing of the failed append was committed.
        assert_eq!(Session::new().count(&mut port), 1);
        s.flush(&mut port).unwrap();
        let mut s2 = Session::new();
        assert_eq!(texts(&mut s2, &mut port), ["one", "two"]);
    }

    #[test]
    fn torn_batch_is_dropped_whole_and_repaired() {
        let mut port = MemPort::new();
        port.put(
            SESSION_PATH,
            b"{\"role\":\"user\",\"content\":\"a\",\"end\":true}\n\
              {\"role\":\"user\",\"content\":\"b\"}\n\
              {\"role\":\"assistant\",\"content\":\"c\"",
        );
        let mut s = Session::new();
        assert_eq!(texts(&mut s, &mut port), ["a"]);
        s.add(&mut port, Role::User, b"d").unwrap();
        s.flush(&mut port).unwrap();
        let mut s2 = Session::new();
        assert_eq!(texts(&mut s2, &mut port), ["a", "d"]);
        let file = String::from_utf8(port.get(SESSION_PATH).unwrap()).unwrap();
        assert_eq!(file.lines().count(), 2, "repaired by a rewrite: {file}");
    }

    #[test]
    fn clear_survives_a_failed_delete() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        s.add(&mut port, Role::User, b"secret").unwrap();
        s.flush(&mut port).unwrap();
        port.fail(Op::Remove, 0, Errno::EIO);
        s.clear(&mut port);
        assert_eq!(s.count(&mut port), 0);
        assert_eq!(
            Session::new().count(&mut port),
            0,
            "rewritten empty at once"
        );

        // Delete and rewrite both fail: pending until the next flush.
        s.add(&mut port, Role::User, b"secret2").unwrap();
        s.flush(&mut port).unwrap();
        port.fail_all(Op::Remove, Errno::EIO);
        port.fail_all(Op::Open, Errno::EIO);
        s.clear(&mut port);
        assert!(s.is_dirty());
        port.heal();
        assert!(s.flush(&mut port).is_ok());
        assert_eq!(Session::new().count(&mut port), 0);
    }

    #[test]
    fn init_drops_unflushed_ram() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        s.add(&mut port, Role::User, b"x").unwrap();
        s.init();
        assert_eq!(s.count(&mut port), 0);
        assert!(!s.is_dirty());
    }
}
