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

#[cfg(feature = "lasting")]
pub mod archive;
pub mod ring;

use crate::jsonl::{ByteReader, Line, LineWriter, Scalar, ScalarField, StrField, read_record};
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

/// Byte and token accounting of a session (feature `lasting`). Persisted
/// on the `end` line of every batch (`"in"`, `"out"`, `"tin"`, `"tout"`,
/// `"ctx"`, `"n"`, `"at"`); reset with the session.
#[cfg(feature = "lasting")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Request bytes sent (bodies).
    pub in_bytes: u32,
    /// Reply bytes received.
    pub out_bytes: u32,
    /// Input tokens, when the backend reports them.
    pub in_tokens: u32,
    /// Output tokens, when the backend reports them.
    pub out_tokens: u32,
    /// Context bytes of the last request.
    pub context_bytes: u32,
    /// Exchanges counted.
    pub exchanges: u32,
    /// The host's clock (seconds) at the last exchange; 0 when unknown.
    pub last_active: u32,
}

#[cfg(feature = "lasting")]
impl Stats {
    const ZERO: Stats = Stats {
        in_bytes: 0,
        out_bytes: 0,
        in_tokens: 0,
        out_tokens: 0,
        context_bytes: 0,
        exchanges: 0,
        last_active: 0,
    };
    const FIELDS: [&'static [u8]; 7] = [b"in", b"out", b"tin", b"tout", b"ctx", b"n", b"at"];

    fn values(&self) -> [u32; 7] {
        [
            self.in_bytes,
            self.out_bytes,
            self.in_tokens,
            self.out_tokens,
            self.context_bytes,
            self.exchanges,
            self.last_active,
        ]
    }

    fn from_fields(f: &[ScalarField]) -> Stats {
        let v = |i: usize| f.get(i).map_or(0, |f| f.value.uint());
        Stats {
            in_bytes: v(1),
            out_bytes: v(2),
            in_tokens: v(3),
            out_tokens: v(4),
            context_bytes: v(5),
            exchanges: v(6),
            last_active: v(7),
        }
    }
}

/// Fields of a session line beyond role and content: `end`, then (feature
/// `lasting`) the statistics.
#[cfg(not(feature = "lasting"))]
fn extra_fields() -> [ScalarField; 1] {
    [ScalarField {
        name: b"end",
        value: Scalar::Absent,
    }]
}

#[cfg(feature = "lasting")]
fn extra_fields() -> [ScalarField; 8] {
    let f = |name| ScalarField {
        name,
        value: Scalar::Absent,
    };
    let n = Stats::FIELDS;
    [
        f(b"end"),
        f(n[0]),
        f(n[1]),
        f(n[2]),
        f(n[3]),
        f(n[4]),
        f(n[5]),
        f(n[6]),
    ]
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
    #[cfg(feature = "lasting")]
    stats: Stats,
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
            #[cfg(feature = "lasting")]
            stats: Stats::ZERO,
        }
    }

    /// Forgets the RAM ring, unflushed (`claw_session_init`). In place:
    /// a fresh `Session` built on the stack and copied would cost its 2.6 KB
    /// of stack.
    pub fn init(&mut self) {
        self.ring.clear();
        self.loaded = false;
        self.dirty = false;
        self.unflushed = 0;
        self.file_lines = 0;
        self.rewrite = false;
        #[cfg(feature = "lasting")]
        {
            self.stats = Stats::ZERO;
        }
    }

    /// The ring, loading it first when needed (empty while the file cannot
    /// be read).
    pub fn ring<P: Port>(&mut self, port: &mut P) -> &SessionRing {
        let _ = self.ensure_loaded(port);
        &self.ring
    }

    /// The ring as it is in RAM (after [`Session::ring`] loaded it).
    pub fn ring_loaded(&self) -> &SessionRing {
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
        // Nothing new to append but still dirty (statistics, a compaction):
        // only a rewrite records it.
        let result = if self.rewrite || n == 0 || self.file_lines.saturating_add(n) > COMPACT_LINES
        {
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

    /// Counts one exchange (feature `lasting`); no flash write, but the
    /// session is dirty until the next flush records it.
    #[cfg(feature = "lasting")]
    pub fn account<P: Port>(&mut self, port: &mut P, add: &Stats) {
        if self.ensure_loaded(port).is_err() {
            // Counting onto an unread file would overwrite its figures.
            return;
        }
        let s = &mut self.stats;
        s.in_bytes = s.in_bytes.saturating_add(add.in_bytes);
        s.out_bytes = s.out_bytes.saturating_add(add.out_bytes);
        s.in_tokens = s.in_tokens.saturating_add(add.in_tokens);
        s.out_tokens = s.out_tokens.saturating_add(add.out_tokens);
        s.context_bytes = add.context_bytes;
        s.exchanges = s.exchanges.saturating_add(1);
        if add.last_active != 0 {
            s.last_active = add.last_active;
        }
        self.dirty = true;
    }

    /// The statistics (feature `lasting`).
    #[cfg(feature = "lasting")]
    pub fn stats<P: Port>(&mut self, port: &mut P) -> Stats {
        let _ = self.ensure_loaded(port);
        self.stats
    }

    /// Folds all but the newest `keep` turns (and the old summary) into one
    /// summary entry at the head of the ring (feature `lasting`). The
    /// folded turns go to the archive first; a tool turn stays with the
    /// turn before it (the one that asked for it), and a reply with its
    /// question (folding one turn less). `summary` is the text the
    /// backend wrote, or `None` for a local digest. Returns how many turns
    /// were folded; the file is rewritten at the next flush.
    #[cfg(feature = "lasting")]
    pub fn compact<P: Port>(
        &mut self,
        port: &mut P,
        summary: Option<&[u8]>,
        keep: usize,
    ) -> Result<usize, Errno> {
        self.ensure_loaded(port)?;
        let head = usize::from(self.ring.summary().is_some());
        let fold = self.fold_plan(keep);
        if fold == 0 {
            return Ok(0);
        }
        archive::append(port, self.ring.iter().skip(head).take(fold))?;
        self.summarize(head, fold, summary);
        self.dirty = true;
        self.rewrite = true;
        self.unflushed = 0;
        Ok(fold)
    }

    /// How many turns `compact(_, keep)` folds, without folding them: all
    /// but the newest `keep` after the summary, less what keeps a tool turn
    /// with the turn that asked for it, and a reply with its question.
    #[cfg(feature = "lasting")]
    pub fn fold_plan(&self, keep: usize) -> usize {
        let head = usize::from(self.ring.summary().is_some());
        let turns = self.ring.len() - head;
        let role_at = |f: usize| self.ring.get(head + f).map(|m| m.role);
        let mut fold = turns.saturating_sub(keep);
        while fold > 0 && role_at(fold) == Some(Role::Tool) {
            fold -= 1;
        }
        if fold > 0
            && role_at(fold) == Some(Role::Assistant)
            && role_at(fold - 1) == Some(Role::User)
        {
            fold -= 1;
        }
        fold
    }

    /// Builds the new summary and folds it into the ring. Out of line: its
    /// 255-byte buffer must not sit on the stack under the file passes.
    #[cfg(feature = "lasting")]
    #[inline(never)]
    fn summarize(&mut self, head: usize, fold: usize, summary: Option<&[u8]>) {
        let mut text: heapless::Vec<u8, MSG_MAX_BYTES> = heapless::Vec::new();
        match summary {
            Some(s) => {
                let n = utf8_prefix(s, MSG_MAX_BYTES).unwrap_or(0);
                let _ = text.extend_from_slice(s.get(..n).unwrap_or(&[]));
            }
            None => {
                if let Some(old) = self.ring.summary() {
                    let _ = text.extend_from_slice(&old.text);
                }
                for m in self.ring.iter().skip(head).take(fold) {
                    digest(&mut text, m);
                }
            }
        }
        self.ring.fold(fold, &text);
    }

    /// Retires the session (feature `lasting`): every entry goes to the
    /// archive, then the session is cleared (statistics too). Nothing
    /// changes when the archive cannot be written.
    #[cfg(feature = "lasting")]
    pub fn start_new<P: Port>(&mut self, port: &mut P) -> Result<(), Errno> {
        self.ensure_loaded(port)?;
        if !self.ring.is_empty() {
            archive::append(port, self.ring.iter())?;
        }
        self.clear(port);
        Ok(())
    }

    /// Empties the ring and deletes the file; see the module docs.
    pub fn clear<P: Port>(&mut self, port: &mut P) {
        self.ring.clear();
        self.loaded = true;
        self.unflushed = 0;
        #[cfg(feature = "lasting")]
        {
            self.stats = Stats::ZERO;
        }
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
    // Out of line (as the other file passes are): each pass has its own
    // decode buffers, and inlined into one frame they would add up on a
    // 1 KiB stack budget instead of taking turns.
    #[inline(never)]
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
            let (cut, clean, _stats) = res?;
            #[cfg(feature = "lasting")]
            {
                self.stats = _stats;
            }
            (cut, clean)
        };
        // Pass 2: keep the newest lines before the cut.
        let fd = port.open(SESSION_PATH, Mode::Read)?;
        let mut r = ByteReader::new(fd);
        let res = self.read_lines(port, &mut r, cut);
        let _ = port.close(fd);
        res?;
        Ok(clean)
    }

    #[inline(never)]
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

    #[inline(never)]
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
            #[cfg(feature = "lasting")]
            if i == last {
                for (name, v) in Stats::FIELDS.iter().zip(self.stats.values()) {
                    w.raw(port, b",\"")?;
                    w.raw(port, name)?;
                    w.raw(port, b"\":")?;
                    w.uint(port, v)?;
                }
            }
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
/// Appends a short account of `m` to a local digest, dropping the oldest
/// bytes (on a character boundary) when it would pass the message size.
#[cfg(feature = "lasting")]
fn digest(text: &mut heapless::Vec<u8, MSG_MAX_BYTES>, m: &ring::Message) {
    /// Bytes of each folded turn kept in a local digest.
    const PIECE: usize = 60;
    let body = m
        .text
        .get(..crate::text::floor_char_boundary(&m.text, PIECE))
        .unwrap_or(&[]);
    let sep: &[u8] = if text.is_empty() { b"" } else { b"; " };
    let need = sep.len() + m.role.name().len() + 2 + body.len();
    let over = (text.len() + need).saturating_sub(MSG_MAX_BYTES);
    if over > 0 {
        // Keep the newest part: cut the front on a character boundary.
        let mut cut = over.min(text.len());
        while text.get(cut).is_some_and(|b| b & 0xC0 == 0x80) {
            cut += 1;
        }
        // Shift in place (a second buffer would double the stack).
        let keep = text.len() - cut;
        for i in 0..keep {
            if let Some(b) = text.get(i + cut).copied() {
                if let Some(d) = text.get_mut(i) {
                    *d = b;
                }
            }
        }
        text.truncate(keep);
    }
    for piece in [sep, m.role.name(), b": ", body] {
        let _ = text.extend_from_slice(piece);
    }
}

#[cfg(feature = "lasting")]
type FileStats = Stats;
/// Without `lasting` there are no statistics; a flag keeps the types simple.
#[cfg(not(feature = "lasting"))]
type FileStats = bool;

fn file_stats(_f: &[ScalarField]) -> FileStats {
    #[cfg(feature = "lasting")]
    return Stats::from_fields(_f);
    #[cfg(not(feature = "lasting"))]
    false
}

/// Pass 1 of a load: the offset just past the last `"end":true` line,
/// whether the file is clean (no skipped line, nothing after that point),
/// and the statistics of that line.
#[inline(never)]
fn scan_batches<P: Port>(
    port: &mut P,
    r: &mut ByteReader,
) -> Result<(u32, bool, FileStats), Errno> {
    let mut cut = 0u32;
    let mut clean = true;
    let mut stats = file_stats(&[]);
    loop {
        let mut role = [0u8; 9];
        // Checked, not kept: this pass only finds the batches.
        let mut strs = [
            StrField::new(b"role", &mut role),
            StrField::counted(b"content", MSG_MAX_BYTES),
        ];
        let mut extra = extra_fields();
        let line = read_record(port, r, &mut strs, &mut extra)?;
        let is_end = extra.first().is_some_and(|e| e.value == Scalar::True);
        match line {
            Line::Eof => break,
            Line::Record | Line::RecordAtEof if Role::from_name(strs[0].value()).is_some() => {
                if is_end {
                    cut = r.offset();
                    stats = file_stats(&extra);
                }
                // Valid but unterminated: trust it, but an append would glue
                // onto it, so the file gets rewritten.
                clean &= line == Line::Record;
            }
            _ => clean = false,
        }
    }
    if r.offset() != cut {
        clean = false;
    }
    Ok((cut, clean, stats))
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
    #[cfg_attr(miri, ignore)] // long; no unsafe code under test
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

#[cfg(all(test, feature = "lasting"))]
mod lasting_tests {
    use super::archive::ARCHIVE_PATH;
    use super::*;
    use crate::testing::MemPort;

    fn texts(s: &mut Session, port: &mut MemPort) -> Vec<(Role, String)> {
        s.ring(port)
            .iter()
            .map(|m| (m.role, String::from_utf8(m.text.to_vec()).unwrap()))
            .collect()
    }

    #[test]
    fn stats_persist_with_the_session_and_reset_with_it() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        s.add(&mut port, Role::User, b"q").unwrap();
        let add = Stats {
            in_bytes: 100,
            out_bytes: 20,
            in_tokens: 7,
            out_tokens: 3,
            context_bytes: 60,
            exchanges: 1,
            last_active: 1_700_000_000,
        };
        s.account(&mut port, &add);
        s.account(&mut port, &add);
        s.flush(&mut port).unwrap();
        let mut again = Session::new();
        let st = again.stats(&mut port);
        assert_eq!((st.in_bytes, st.out_tokens, st.exchanges), (200, 6, 2));
        assert_eq!((st.context_bytes, st.last_active), (60, 1_700_000_000));
        // Statistics alone make the session dirty, and a flush records them.
        again.account(&mut port, &add);
        assert!(again.is_dirty());
        again.flush(&mut port).unwrap();
        assert_eq!(Session::new().stats(&mut port).exchanges, 3);
        again.clear(&mut port);
        assert_eq!(again.stats(&mut port), Stats::default());
    }

    #[test]
    fn compaction_folds_old_turns_into_a_summary_and_archives_them() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        for i in 0..8 {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            s.add(&mut port, role, format!("turn {i}").as_bytes())
                .unwrap();
        }
        s.flush(&mut port).unwrap();
        // keep 3 would keep a reply without its question: one turn less folds.
        assert_eq!(s.compact(&mut port, None, 3).unwrap(), 4);
        let t = texts(&mut s, &mut port);
        assert_eq!(t.len(), 5);
        assert_eq!(t[0].0, Role::Summary);
        assert!(
            t[0].1.starts_with("user: turn 0; assistant: turn 1;"),
            "{}",
            t[0].1
        );
        assert_eq!(t[1].1, "turn 4");
        s.flush(&mut port).unwrap();
        assert_eq!(
            texts(&mut Session::new(), &mut port),
            t,
            "the summary survives a reboot"
        );
        let archive = String::from_utf8(port.get(ARCHIVE_PATH).unwrap()).unwrap();
        assert_eq!(archive.lines().count(), 4);
        assert!(archive.contains("turn 3"));
        // A backend summary replaces the old one; turns keep arriving after it.
        s.add(&mut port, Role::User, b"turn 8").unwrap();
        assert_eq!(
            s.compact(&mut port, Some("the owner likes tea".as_bytes()), 1)
                .unwrap(),
            4
        );
        let t = texts(&mut s, &mut port);
        assert_eq!(t[0], (Role::Summary, "the owner likes tea".to_string()));
        assert_eq!(t.len(), 2);
        for i in 0..20 {
            s.add(&mut port, Role::User, format!("more {i}").as_bytes())
                .unwrap();
        }
        let t = texts(&mut s, &mut port);
        assert_eq!(t.len(), 10);
        assert_eq!(t[0].0, Role::Summary, "the summary stays at the head");
        s.flush(&mut port).unwrap();
        assert_eq!(texts(&mut Session::new(), &mut port), t);
    }

    #[test]
    fn a_tool_turn_stays_with_its_asker() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        s.add(&mut port, Role::User, b"hi").unwrap();
        s.add(&mut port, Role::Assistant, b"hello").unwrap();
        s.add(&mut port, Role::System, b"connected").unwrap();
        s.add(&mut port, Role::Assistant, b"run led").unwrap();
        s.add(&mut port, Role::Tool, b"led: on").unwrap();
        s.add(&mut port, Role::Assistant, b"done").unwrap();
        // keep 2 would start the kept part with the tool turn: fold less.
        assert_eq!(s.compact(&mut port, None, 2).unwrap(), 3);
        let t = texts(&mut s, &mut port);
        assert_eq!(t[1], (Role::Assistant, "run led".to_string()));
        assert_eq!(t[2].0, Role::Tool);

        // A reply keeps its question.
        let mut s = Session::new();
        s.clear(&mut port);
        for (r, t) in [
            (Role::User, "q1"),
            (Role::Assistant, "a1"),
            (Role::User, "q2"),
            (Role::Assistant, "a2"),
        ] {
            s.add(&mut port, r, t.as_bytes()).unwrap();
        }
        assert_eq!(s.compact(&mut port, None, 1).unwrap(), 2);
        let t = texts(&mut s, &mut port);
        assert_eq!(t[1], (Role::User, "q2".to_string()));
    }

    #[test]
    fn a_long_digest_keeps_its_newest_part_on_character_boundaries() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        for round in 0..6 {
            for i in 0..4 {
                s.add(
                    &mut port,
                    Role::User,
                    format!("ข้อความ {round}-{i} ").repeat(5).as_bytes(),
                )
                .unwrap();
            }
            s.compact(&mut port, None, 1).unwrap();
            let head = &s.ring(&mut port).get(0).unwrap().text;
            assert!(head.len() <= MSG_MAX_BYTES);
            assert!(core::str::from_utf8(head).is_ok());
        }
        let t = texts(&mut s, &mut port);
        assert!(
            t[0].1.contains("5-2"),
            "the newest folded turn is in the digest: {}",
            t[0].1
        );
    }

    #[test]
    fn a_new_session_archives_the_old_one() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        s.add(&mut port, Role::User, b"old chat").unwrap();
        s.flush(&mut port).unwrap();
        s.start_new(&mut port).unwrap();
        assert_eq!(s.count(&mut port), 0);
        assert_eq!(Session::new().count(&mut port), 0);
        let archive = String::from_utf8(port.get(ARCHIVE_PATH).unwrap()).unwrap();
        assert!(archive.contains("old chat"));
        // Nothing changes when the archive cannot be written.
        s.add(&mut port, Role::User, b"keep me").unwrap();
        port.fail(crate::testing::Op::Open, 0, Errno::ENOSPC);
        assert!(s.start_new(&mut port).is_err());
        assert_eq!(s.count(&mut port), 1);
    }
}
