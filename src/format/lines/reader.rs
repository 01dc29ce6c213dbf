//! The byte reader over the port (or over bytes in RAM) that the parser
//! reads from.

use crate::port::{Errno, Fd, Port};

/// A descriptor no port hands out (they are never negative): a
/// [`ByteReader`] over bytes in RAM ([`ByteReader::over`]), a [`LineWriter`]
/// that only counts ([`LineWriter::written`]: the size of what it would
/// write). So the reader and the writer are compiled once, for the one real
/// port, and call it directly.
///
/// [`LineWriter`]: super::LineWriter
/// [`LineWriter::written`]: super::LineWriter::written
pub const NO_FD: Fd = -1;

/// Bytes read from the port per call.
pub(super) const READ_CHUNK: usize = 64;
// [`ByteReader`] keeps its place in a chunk in a byte.
const _: () = assert!(READ_CHUNK <= u8::MAX as usize);

/// Reads a file through the port in small chunks, or bytes already in RAM.
pub struct ByteReader<'a> {
    src: Source<'a>,
    buf: [u8; READ_CHUNK],
    // One byte each (a chunk is 64 bytes): every frame that holds a reader
    // is on a load's deepest path.
    pos: u8,
    len: u8,
    eof: bool,
    /// The offset of the chunk's first byte (consuming a byte is one
    /// increment: `pos`).
    base: u32,
    /// The last byte of the previous chunk.
    last: u8,
}

/// Where a [`ByteReader`]'s bytes come from: the descriptor in the slice's
/// place (8 bytes, not 12).
enum Source<'a> {
    /// An open file ([`NO_FD`]: an empty one).
    Fd(Fd),
    /// Bytes in RAM: those not read yet.
    Ram(&'a [u8]),
}

impl<'a> ByteReader<'a> {
    /// Wraps an open descriptor ([`NO_FD`]: an empty file).
    pub fn new(fd: Fd) -> Self {
        Self::with(Source::Fd(fd))
    }

    /// Reads `data` (the port is not called).
    pub fn over(data: &'a [u8]) -> Self {
        Self::with(Source::Ram(data))
    }

    fn with(src: Source<'a>) -> Self {
        Self {
            src,
            buf: [0; READ_CHUNK],
            pos: 0,
            len: 0,
            eof: false,
            base: 0,
            last: 0,
        }
    }

    /// The descriptor, for closing ([`NO_FD`] over RAM).
    pub fn fd(&self) -> Fd {
        match self.src {
            Source::Fd(fd) => fd,
            Source::Ram(_) => NO_FD,
        }
    }

    /// Offset of the next byte.
    pub fn offset(&self) -> u32 {
        self.base.saturating_add(u32::from(self.pos))
    }

    /// The last byte consumed (0 before the first).
    pub(super) fn last(&self) -> u8 {
        match usize::from(self.pos).checked_sub(1) {
            Some(i) => self.buf.get(i).copied().unwrap_or(0),
            None => self.last,
        }
    }

    #[inline(always)] // stack: see docs/STACK.md
    pub(super) fn peek<P: Port + ?Sized>(&mut self, port: &mut P) -> Result<Option<u8>, Errno> {
        if self.pos >= self.len {
            self.refill(port)?;
        }
        // Still nothing buffered: the end of the file.
        Ok(self
            .buf
            .get(usize::from(self.pos)..usize::from(self.len))
            .and_then(|b| b.first())
            .copied())
    }

    /// Reads the next chunk (the end of the file: none). The only caller of
    /// the port, kept out of line and small: it is the bottom of every
    /// parse's deepest call chain.
    fn refill<P: Port + ?Sized>(&mut self, port: &mut P) -> Result<(), Errno> {
        if self.eof {
            return Ok(());
        }
        // The chunk is consumed: what is kept of it.
        self.last = self.last();
        self.base = self.base.saturating_add(u32::from(self.pos));
        self.pos = 0;
        self.len = 0;
        let n = match &mut self.src {
            Source::Ram(ram) => {
                let (now, rest) = ram.split_at_checked(READ_CHUNK).unwrap_or((ram, &[]));
                crate::kernel::copy::copy_chunk(&mut self.buf, now);
                *ram = rest;
                now.len()
            }
            Source::Fd(NO_FD) => 0,
            Source::Fd(fd) => port.read_chunk(*fd, &mut self.buf)?,
        };
        if n == 0 || n > self.buf.len() {
            self.eof = true;
            return Ok(());
        }
        self.len = n as u8;
        Ok(())
    }

    // Out of line (as `consume`): inlined at its twenty-odd calls it would
    // cost flash.
    #[inline(never)] // stack: see docs/STACK.md
    pub(super) fn bump(&mut self) {
        if self.pos < self.len {
            self.pos += 1;
        }
    }

    #[inline(always)] // stack: see docs/STACK.md
    pub(super) fn next<P: Port + ?Sized>(&mut self, port: &mut P) -> Result<Option<u8>, Errno> {
        let b = self.peek(port)?;
        self.bump();
        Ok(b)
    }

    /// The bytes buffered and not consumed yet.
    #[inline(always)] // stack: see docs/STACK.md
    pub(super) fn chunk(&self) -> &[u8] {
        self.buf
            .get(usize::from(self.pos)..usize::from(self.len))
            .unwrap_or(&[])
    }

    /// The bytes buffered and not consumed yet, reading the next chunk
    /// first when there are none (none: the end of the file).
    #[inline(always)] // stack: see docs/STACK.md
    pub(super) fn fill<P: Port + ?Sized>(&mut self, port: &mut P) -> Result<&[u8], Errno> {
        if self.pos >= self.len {
            self.refill(port)?;
        }
        Ok(self.chunk())
    }

    /// Consumes the first `n` bytes of [`ByteReader::chunk`], `n` at most
    /// its length (inlined: one addition; `pass(1)` after a peek that
    /// found a byte is a [`ByteReader::bump`] without its call).
    pub(super) fn pass(&mut self, n: usize) {
        self.pos = self.pos.wrapping_add(n as u8);
    }

    /// Consumes the first `n` bytes of [`ByteReader::chunk`].
    #[inline(never)] // size: see docs/STACK.md
    pub(super) fn consume(&mut self, n: usize) {
        let n = n.min(usize::from(self.len.saturating_sub(self.pos)));
        self.pos += n as u8;
    }

    /// Consumes bytes up to offset `to` (or the end of the file).
    pub fn skip_to<P: Port + ?Sized>(&mut self, port: &mut P, to: u32) -> Result<(), Errno> {
        while self.offset() < to && self.peek(port)?.is_some() {
            let want = (to - self.offset()) as usize;
            self.consume(want.min(self.chunk().len()));
        }
        Ok(())
    }
}

pub(super) fn skip_line<P: Port + ?Sized>(
    port: &mut P,
    r: &mut ByteReader<'_>,
) -> Result<(), Errno> {
    while r.peek(port)?.is_some() {
        match r.chunk().iter().position(|&b| b == b'\n') {
            Some(i) => {
                r.consume(i + 1);
                break;
            }
            None => r.consume(r.chunk().len()),
        }
    }
    Ok(())
}
