//! What the core needs from its host: a millisecond clock and a handful of
//! file operations.
//!
//! The core never touches a file system itself. On the device the FFI layer
//! implements [`Port`] over `include/claw_port.h`, whose C side runs
//! MicroPython's own VFS (so LittleFS, FAT and the unix VFS all work); the
//! tests implement it in memory with fault injection.

use core::ffi::CStr;

/// A positive `errno` value reported by the port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Errno(pub i32);

impl Errno {
    /// No such file.
    pub const ENOENT: Errno = Errno(2);
    /// I/O error; also what a port reports for anything it cannot classify.
    pub const EIO: Errno = Errno(5);
    /// No space left on the device.
    pub const ENOSPC: Errno = Errno(28);
}

/// How a file is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Read from the start; the file must exist.
    Read,
    /// Create or truncate, then write.
    Write,
    /// Create when missing, write at the end.
    Append,
}

/// A descriptor handed out by [`Port::open`].
pub type Fd = i32;

/// The host interface. Every method returns normally (a host exception has
/// already been turned into an [`Errno`]).
///
/// Rules the core keeps, and hosts may rely on:
/// * at most [`MAX_OPEN_FILES`] files are open at once;
/// * after a failed `write` or `close` the descriptor is never written again:
///   a retry reopens the file and rewrites it from RAM (littlefs can report
///   success for a second sync of a failed handle and write nothing).
pub trait Port {
    /// Monotonic milliseconds, wrapping at `u32::MAX`.
    fn ticks_ms(&mut self) -> u32;
    /// Opens `path` in `mode`. Paths are the core's constants (`'static`):
    /// a port may keep them (the FFI port names a failed file by them).
    fn open(&mut self, path: &'static CStr, mode: Mode) -> Result<Fd, Errno>;
    /// Reads up to `buf.len()` bytes; `Ok(0)` is the end of the file.
    fn read(&mut self, fd: Fd, buf: &mut [u8]) -> Result<usize, Errno>;
    /// [`Port::read`] as the JSON reader calls it (its one caller): a port
    /// may inline its read there, so that the bottom of every parse is one
    /// frame, and keep [`Port::read`] a call everywhere else.
    fn read_chunk(&mut self, fd: Fd, buf: &mut [u8]) -> Result<usize, Errno> {
        self.read(fd, buf)
    }
    /// Writes all of `buf`.
    fn write(&mut self, fd: Fd, buf: &[u8]) -> Result<(), Errno>;
    /// Commits and closes; the descriptor is released even on error.
    fn close(&mut self, fd: Fd) -> Result<(), Errno>;
    /// Deletes `path`.
    fn remove(&mut self, path: &'static CStr) -> Result<(), Errno>;
    /// Renames `from` onto `to`, replacing `to` atomically.
    fn rename(&mut self, from: &'static CStr, to: &'static CStr) -> Result<(), Errno>;
    /// Whether a file of `path`'s file system opened with [`Mode::Write`]
    /// and closed replaces its old content atomically (littlefs); when not,
    /// the core writes a temporary file and renames it.
    fn atomic_write(&mut self, path: &'static CStr) -> bool {
        let _ = path;
        false
    }
}

/// Files the core may hold open at the same time (memory rewrite: old file,
/// temporary file, and a look-ahead reader).
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) const MAX_OPEN_FILES: usize = 3;

/// The paths of the module's files: in `/`, or in the directory
/// `BENTOCLAW_STORE_DIR` names at build time (`build.rs` writes them).
mod store_paths {
    use core::ffi::CStr;
    include!(concat!(env!("OUT_DIR"), "/store_paths.rs"));
}
pub use store_paths::*;
