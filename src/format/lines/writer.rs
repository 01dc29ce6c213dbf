//! The JSON Lines writer.

use super::reader::NO_FD;
use crate::kernel::copy::copy_run;
use crate::kernel::swar::plain_len;
use crate::port::{Errno, Fd, Port};

/// Bytes collected before a port write.
const WRITE_CHUNK: usize = 32;

/// Writes JSON Lines through the port in small chunks.
pub struct LineWriter {
    fd: Fd,
    buf: [u8; WRITE_CHUNK],
    len: usize,
    /// Bytes handed to the port so far plus those buffered.
    written: u32,
    /// The last byte written.
    last: u8,
}

impl LineWriter {
    /// Wraps a descriptor opened for writing ([`NO_FD`]: counts only).
    pub fn new(fd: Fd) -> Self {
        Self {
            fd,
            buf: [0; WRITE_CHUNK],
            len: 0,
            written: 0,
            last: 0,
        }
    }

    /// The descriptor, for closing.
    pub fn fd(&self) -> Fd {
        self.fd
    }

    /// The last byte written, if any.
    pub fn last(&self) -> Option<u8> {
        (self.written > 0).then_some(self.last)
    }

    /// Total bytes written (including those still buffered).
    pub fn written(&self) -> u32 {
        self.written
    }

    /// Appends raw bytes.
    pub fn raw<P: Port + ?Sized>(&mut self, port: &mut P, bytes: &[u8]) -> Result<(), Errno> {
        let mut rest = bytes;
        while !rest.is_empty() {
            if self.len >= self.buf.len() {
                self.flush_in(port)?;
            }
            let room = self.buf.len() - self.len;
            let (now, later) = rest.split_at_checked(room).unwrap_or((rest, &[]));
            if let Some(dst) = self.buf.get_mut(self.len..self.len + now.len()) {
                copy_run(dst, now);
            }
            self.len += now.len();
            self.written = self.written.saturating_add(now.len() as u32);
            if let Some(&b) = now.last() {
                self.last = b;
            }
            rest = later;
        }
        Ok(())
    }

    fn byte<P: Port + ?Sized>(&mut self, port: &mut P, b: u8) -> Result<(), Errno> {
        if self.len >= self.buf.len() {
            self.flush(port)?;
        }
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = b;
            self.len += 1;
            self.written = self.written.saturating_add(1);
            self.last = b;
        }
        Ok(())
    }

    /// Appends `s` as a JSON string, quotes included. Control characters are
    /// escaped; other bytes (UTF-8) are written as they are.
    pub fn string<P: Port + ?Sized>(&mut self, port: &mut P, s: &[u8]) -> Result<(), Errno> {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.byte(port, b'"')?;
        let mut rest = s;
        while !rest.is_empty() {
            // Plain bytes go in whole.
            let (run, _) = plain_len(rest);
            if run > 0 {
                let (plain, tail) = rest.split_at_checked(run).unwrap_or((rest, &[]));
                self.raw(port, plain)?;
                rest = tail;
                continue;
            }
            let Some((&b, tail)) = rest.split_first() else {
                break;
            };
            rest = tail;
            match b {
                b'"' => self.raw(port, b"\\\"")?,
                b'\\' => self.raw(port, b"\\\\")?,
                b'\n' => self.raw(port, b"\\n")?,
                b'\r' => self.raw(port, b"\\r")?,
                b'\t' => self.raw(port, b"\\t")?,
                0x00..=0x1F => {
                    self.raw(port, b"\\u00")?;
                    self.byte(port, HEX[usize::from(b >> 4)])?;
                    self.byte(port, HEX[usize::from(b & 0xF)])?;
                }
                _ => self.byte(port, b)?,
            }
        }
        self.byte(port, b'"')
    }

    /// Appends a decimal number.
    pub fn uint<P: Port + ?Sized>(&mut self, port: &mut P, v: u32) -> Result<(), Errno> {
        let mut digits = [0u8; 10];
        let mut n = 0usize;
        let mut v = v;
        loop {
            if let Some(d) = digits.get_mut(n) {
                *d = b'0' + (v % 10) as u8;
            }
            n += 1;
            v /= 10;
            if v == 0 || n >= digits.len() {
                break;
            }
        }
        for i in (0..n).rev() {
            self.byte(port, digits.get(i).copied().unwrap_or(b'0'))?;
        }
        Ok(())
    }

    /// Hands buffered bytes to the port.
    pub fn flush<P: Port + ?Sized>(&mut self, port: &mut P) -> Result<(), Errno> {
        self.flush_in(port)
    }

    /// [`Self::flush`], inlined where a full buffer is handed on (no frame
    /// under the copy's, at the bottom of every write path).
    #[inline(always)] // stack: see docs/STACK.md
    fn flush_in<P: Port + ?Sized>(&mut self, port: &mut P) -> Result<(), Errno> {
        if self.len > 0 {
            let chunk = self.buf.get(..self.len).unwrap_or(&[]);
            self.len = 0;
            if self.fd != NO_FD {
                port.write(self.fd, chunk)?;
            }
        }
        Ok(())
    }
}
