//! An in-memory [`Port`] for tests, with a settable clock and fault
//! injection. Files are committed at `close`, as on littlefs: until then a
//! reader sees the old content, and a failed handle commits nothing.

use crate::port::{Errno, Fd, MAX_OPEN_FILES, Mode, Port};
use std::collections::BTreeMap;
use std::ffi::{CStr, CString};

/// Which operation a fault applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `open`.
    Open,
    /// `write`.
    Write,
    /// `close` of a file opened for writing.
    Close,
    /// `remove`.
    Remove,
    /// `rename`.
    Rename,
    /// `read`.
    Read,
}

struct OpenFile {
    path: CString,
    mode: Mode,
    data: Vec<u8>,
    pos: usize,
    failed: bool,
}

/// An in-memory file system and clock.
pub struct MemPort {
    files: BTreeMap<CString, Vec<u8>>,
    open: Vec<Option<OpenFile>>,
    /// The clock.
    pub now: u32,
    /// Fail the n-th (0-based, counted from now on) operation of a kind.
    faults: Vec<(Op, u32, Errno)>,
    late_faults: Vec<(Op, u32, Errno)>,
    counts: BTreeMap<u8, u32>,
    /// Bytes committed to files by `close` (what reaches flash).
    pub bytes_committed: u64,
    /// Port writes seen.
    pub writes: u32,
    /// What `atomic_write` answers (a file is committed at close, as on
    /// littlefs: true by default).
    pub atomic: bool,
    /// Most files open at once.
    pub max_open: usize,
}

impl Default for MemPort {
    fn default() -> Self {
        Self::new()
    }
}

impl MemPort {
    /// Empty file system, clock at 0.
    pub fn new() -> Self {
        Self {
            files: BTreeMap::new(),
            open: (0..MAX_OPEN_FILES).map(|_| None).collect(),
            now: 0,
            faults: Vec::new(),
            late_faults: Vec::new(),
            counts: BTreeMap::new(),
            bytes_committed: 0,
            writes: 0,
            atomic: true,
            max_open: 0,
        }
    }

    /// Sets a file's content.
    pub fn put(&mut self, path: &CStr, data: &[u8]) {
        self.files.insert(path.to_owned(), data.to_vec());
    }

    /// A file's content.
    pub fn get(&self, path: &CStr) -> Option<Vec<u8>> {
        self.files.get(path).cloned()
    }

    /// All files.
    pub fn snapshot(&self) -> BTreeMap<CString, Vec<u8>> {
        self.files.clone()
    }

    /// Makes the `nth` next operation of kind `op` fail with `err`.
    pub fn fail(&mut self, op: Op, nth: u32, err: Errno) {
        let base = self.count(op);
        self.faults.push((op, base + nth, err));
    }

    /// Makes the `nth` next operation of kind `op` take effect and then
    /// report `err` (a commit whose read-back fails).
    pub fn fail_after(&mut self, op: Op, nth: u32, err: Errno) {
        let base = self.count(op);
        self.late_faults.push((op, base + nth, err));
    }

    /// Makes every operation of kind `op` fail until [`MemPort::heal`].
    pub fn fail_all(&mut self, op: Op, err: Errno) {
        for n in 0..10_000 {
            self.fail(op, n, err);
        }
    }

    /// Clears every pending fault.
    pub fn heal(&mut self) {
        self.faults.clear();
        self.late_faults.clear();
    }

    /// Files currently open.
    pub fn open_count(&self) -> usize {
        self.open.iter().filter(|f| f.is_some()).count()
    }

    /// Operations of a kind so far.
    pub fn count(&self, op: Op) -> u32 {
        self.counts.get(&(op as u8)).copied().unwrap_or(0)
    }

    fn tick(&mut self, op: Op) -> Result<(), Errno> {
        let n = self.count(op);
        self.counts.insert(op as u8, n + 1);
        match self.faults.iter().position(|&(o, k, _)| o == op && k == n) {
            Some(i) => Err(self.faults.remove(i).2),
            None => Ok(()),
        }
    }

    fn slot(&mut self, fd: Fd) -> Result<&mut OpenFile, Errno> {
        usize::try_from(fd)
            .ok()
            .and_then(|i| self.open.get_mut(i))
            .and_then(|s| s.as_mut())
            .ok_or(Errno(9))
    }
}

impl Port for MemPort {
    fn ticks_ms(&mut self) -> u32 {
        self.now
    }

    fn open(&mut self, path: &CStr, mode: Mode) -> Result<Fd, Errno> {
        self.tick(Op::Open)?;
        let data = match (mode, self.files.get(path)) {
            (Mode::Read, None) => return Err(Errno::ENOENT),
            (Mode::Read | Mode::Append, Some(d)) => d.clone(),
            (Mode::Append, None) | (Mode::Write, _) => Vec::new(),
        };
        let i = self
            .open
            .iter()
            .position(|s| s.is_none())
            .expect("the core opened more than MAX_OPEN_FILES files");
        self.open[i] = Some(OpenFile {
            path: path.to_owned(),
            mode,
            data,
            pos: 0,
            failed: false,
        });
        self.max_open = self.max_open.max(self.open_count());
        Ok(i as Fd)
    }

    fn read(&mut self, fd: Fd, buf: &mut [u8]) -> Result<usize, Errno> {
        self.tick(Op::Read)?;
        let f = self.slot(fd)?;
        assert_eq!(f.mode, Mode::Read, "read on a file opened for writing");
        let rest = &f.data[f.pos.min(f.data.len())..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        f.pos += n;
        Ok(n)
    }

    fn write(&mut self, fd: Fd, buf: &[u8]) -> Result<(), Errno> {
        self.writes += 1;
        let fault = self.tick(Op::Write);
        let f = self.slot(fd)?;
        assert_ne!(f.mode, Mode::Read, "write on a file opened for reading");
        assert!(!f.failed, "the core wrote through a failed handle");
        if let Err(e) = fault {
            f.failed = true;
            // A torn write: half of it lands in the (uncommitted) buffer.
            f.data.extend_from_slice(&buf[..buf.len() / 2]);
            return Err(e);
        }
        f.data.extend_from_slice(buf);
        Ok(())
    }

    fn close(&mut self, fd: Fd) -> Result<(), Errno> {
        let f = usize::try_from(fd)
            .ok()
            .and_then(|i| self.open.get_mut(i))
            .and_then(|s| s.take())
            .ok_or(Errno(9))?;
        if f.mode == Mode::Read {
            return Ok(());
        }
        self.tick(Op::Close)?;
        if f.failed {
            return Err(Errno::EIO);
        }
        let old = self.files.get(&f.path).map_or(0, |d| d.len());
        self.bytes_committed += match f.mode {
            Mode::Append => (f.data.len() - old.min(f.data.len())) as u64,
            _ => f.data.len() as u64,
        };
        self.files.insert(f.path, f.data);
        Ok(())
    }

    fn remove(&mut self, path: &CStr) -> Result<(), Errno> {
        self.tick(Op::Remove)?;
        self.files.remove(path).map(|_| ()).ok_or(Errno::ENOENT)
    }

    fn atomic_write(&mut self, _: &CStr) -> bool {
        self.atomic
    }

    fn rename(&mut self, from: &CStr, to: &CStr) -> Result<(), Errno> {
        let n = self.count(Op::Rename);
        self.tick(Op::Rename)?;
        let data = self.files.remove(from).ok_or(Errno::ENOENT)?;
        self.files.insert(to.to_owned(), data);
        match self
            .late_faults
            .iter()
            .position(|&(o, k, _)| o == Op::Rename && k == n)
        {
            Some(i) => Err(self.late_faults.remove(i).2),
            None => Ok(()),
        }
    }
}

/// Proptest's default settings, with the failing cases kept in, and replayed
/// from, `file`: a path under `tests/proptest-regressions/` (from the crate's
/// root, where `cargo test` runs), named after the tests' module rather than
/// derived from their source file, so tests that move keep their cases.
/// `PROPTEST_DISABLE_FAILURE_PERSISTENCE` still turns it off.
#[cfg(test)]
pub fn regressions(file: &'static str) -> proptest::test_runner::Config {
    use proptest::test_runner::{Config, FailurePersistence, FileFailurePersistence};
    let default = Config::default();
    Config {
        failure_persistence: default
            .failure_persistence
            .as_ref()
            .map(|_| Box::new(FileFailurePersistence::Direct(file)) as Box<dyn FailurePersistence>),
        ..default
    }
}
