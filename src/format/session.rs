//! Session records: one message a line, batches ended by an `end` line.
//!
//! ```text
//! {"role":"user","content":"…"}
//! {"role":"summary","content":"…","keep":4}
//! {"role":"assistant","content":"…","end":true,"seq":42,"st":[512,98,0,0,73,12,1767225600]}
//! {"end":true,"seq":43,"st":[…]}                      a batch of statistics alone
//! ```
//!
//! | field | meaning |
//! |---|---|
//! | `role` | `user`, `assistant`, `system`, `tool`, `summary` |
//! | `content` | the message, UTF-8, at most 255 bytes decoded |
//! | `keep` | (summary) the ring before this line keeps its newest `keep` turns; the rest and any older summary are replaced by this one |
//! | `end` | the last line of a batch: lines after the last `end` are not trusted |
//! | `seq` | (end line) the batch's number; a base's `seq` is the newest batch it holds |
//! | `st` | (end line, feature `lasting`) `[in, out, tin, tout, ctx, n, at]` |
//!
//! A line that is not such a record (torn, garbage, invalid UTF-8, too long)
//! is skipped; the previous release's statistics fields (`"in"`, `"out"`,
//! `"tin"`, `"tout"`, `"ctx"`, `"n"`, `"at"` on end lines) are still read.

use super::lines::{ByteReader, Line, LineWriter, Scalar, ScalarField, StrField, read_record};
use crate::port::{Errno, Port};
use crate::session::ring::{MSG_MAX_BYTES, Message, Role};

/// Session statistics as the end line carries them.
pub type StatsArray = [u32; 7];

/// What a line said.
pub struct Record {
    /// The message on it, if any (`None`: a bare end line).
    pub role: Option<Role>,
    /// Bytes of the message in the caller's buffer.
    pub len: usize,
    /// A summary's `keep`.
    pub keep: Option<u8>,
    /// The batch ends here.
    pub end: bool,
    /// The batch's number (end lines; 0 when absent).
    pub seq: u32,
    /// The statistics (end lines) are present: in the reader's
    /// [`ByteReader::array`] (not copied through every frame).
    pub stats: bool,
}

/// What [`read`] found.
pub enum Read {
    /// A record.
    Record(Record),
    /// A line that is not a record (consumed).
    Skipped,
    /// The end of the file.
    Eof,
}

const FIELDS: [&[u8]; 9] = [
    b"end", b"seq", b"keep", b"st", b"in", b"out", b"tin", b"tout", b"ctx",
];

/// Reads the next line; the message goes to `text` (`None`: it is checked,
/// not kept), the statistics (when [`Record::stats`]) to `r`'s
/// [`ByteReader::array`].
// Out of line: its decode buffers must not add up with the callers' frames
// on a 1 KiB stack budget.
#[inline(never)]
pub fn read<P: Port>(
    port: &mut P,
    r: &mut ByteReader,
    text: Option<&mut [u8; MSG_MAX_BYTES]>,
) -> Result<Read, Errno> {
    let mut role = [0u8; 9];
    let content = match text {
        Some(t) => StrField::optional(b"content", t),
        None => StrField {
            required: false,
            ..StrField::counted(b"content", MSG_MAX_BYTES)
        },
    };
    let mut strs = [StrField::optional(b"role", &mut role), content];
    let mut extra = [
        ScalarField::new(FIELDS[0]),
        ScalarField::new(FIELDS[1]),
        ScalarField::new(FIELDS[2]),
        ScalarField::new(FIELDS[3]),
        ScalarField::new(FIELDS[4]),
        ScalarField::new(FIELDS[5]),
        ScalarField::new(FIELDS[6]),
        ScalarField::new(FIELDS[7]),
        ScalarField::new(FIELDS[8]),
        ScalarField::new(b"n"),
        ScalarField::new(b"at"),
    ];
    let line = read_record(port, r, &mut strs, &mut extra)?;
    match line {
        Line::Eof => return Ok(Read::Eof),
        Line::Skipped => return Ok(Read::Skipped),
        Line::Record | Line::RecordAtEof => {}
    }
    let [role_f, text_f] = &strs;
    let end = extra[0].value == Scalar::True;
    let role = match (role_f.seen, text_f.seen) {
        (true, true) => match Role::from_name(role_f.value()) {
            Some(r) => Some(r),
            None => return Ok(Read::Skipped),
        },
        // A bare end line (statistics alone) is a record; anything else
        // without a message is not.
        (false, false) if end => None,
        _ => return Ok(Read::Skipped),
    };
    let len = text_f.len;
    let keep = match (role, extra[2].value) {
        (Some(Role::Summary), Scalar::Uint(k)) => Some(k.min(255) as u8),
        _ => None,
    };
    let stats = match extra[3].value {
        Scalar::Array(7) => true,
        Scalar::Array(..) => return Ok(Read::Skipped),
        _ if extra[4].value != Scalar::Absent => {
            r.set_array([
                extra[4].value.uint(),
                extra[5].value.uint(),
                extra[6].value.uint(),
                extra[7].value.uint(),
                extra[8].value.uint(),
                extra[9].value.uint(),
                extra[10].value.uint(),
            ]);
            true
        }
        _ => false,
    };
    Ok(Read::Record(Record {
        role,
        len,
        keep,
        end,
        seq: extra[1].value.uint(),
        stats,
    }))
}

/// How a line ends a batch.
pub struct End<'a> {
    /// The batch's number.
    pub seq: u32,
    /// The statistics to record (feature `lasting`).
    pub stats: Option<&'a StatsArray>,
}

/// Writes a message line; `keep` for a summary, `end` on a batch's last line.
pub fn write<P: Port>(
    port: &mut P,
    w: &mut LineWriter,
    m: &Message,
    keep: Option<u8>,
    end: Option<&End<'_>>,
) -> Result<(), Errno> {
    w.raw(port, b"{\"role\":\"")?;
    w.raw(port, m.role.name())?;
    w.raw(port, b"\",\"content\":")?;
    w.string(port, &m.text)?;
    if let Some(k) = keep {
        w.raw(port, b",\"keep\":")?;
        w.uint(port, u32::from(k))?;
    }
    match end {
        Some(e) => write_end_fields(port, w, e),
        None => w.raw(port, b"}\n"),
    }
}

/// Writes a bare end line (a batch of statistics alone).
pub fn write_end<P: Port>(port: &mut P, w: &mut LineWriter, end: &End<'_>) -> Result<(), Errno> {
    w.raw(port, b"{")?;
    write_end_fields(port, w, end)
}

fn write_end_fields<P: Port>(port: &mut P, w: &mut LineWriter, e: &End<'_>) -> Result<(), Errno> {
    // A bare end line starts right after "{": no comma before its first field.
    let first = w.last() == Some(b'{');
    w.raw(
        port,
        if first {
            b"\"end\":true,\"seq\":"
        } else {
            b",\"end\":true,\"seq\":"
        },
    )?;
    w.uint(port, e.seq)?;
    if let Some(st) = e.stats {
        w.raw(port, b",\"st\":[")?;
        for (i, v) in st.iter().enumerate() {
            if i > 0 {
                w.raw(port, b",")?;
            }
            w.uint(port, *v)?;
        }
        w.raw(port, b"]")?;
    }
    w.raw(port, b"}\n")
}
