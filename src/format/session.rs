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
//! A line that is not such a record (torn, garbage, invalid UTF-8, `\u0000`,
//! nested values, too long) is skipped and the records around it survive (a
//! line torn inside a string does not swallow the next); the previous release's statistics fields (`"in"`, `"out"`,
//! `"tin"`, `"tout"`, `"ctx"`, `"n"`, `"at"` on end lines) are still read.

use super::lines::{
    ByteReader, Line, LineWriter, SCALAR_NAME_MAX, Scalar, ScalarSet, StrField, read_fields,
    scalar_name,
};
use crate::message::{MSG_MAX_BYTES, Message, Role};
use crate::port::{Errno, Port};

// [`Record::len`] is a byte.
const _: () = assert!(MSG_MAX_BYTES <= u8::MAX as usize);

/// Session statistics as the end line carries them.
pub type StatsArray = [u32; 7];

/// What a line said.
pub struct Record {
    /// The message on it, if any (`None`: a bare end line).
    pub role: Option<Role>,
    /// Bytes of the message in the caller's buffer (at most
    /// [`MSG_MAX_BYTES`]: a byte, so that the record is two words).
    pub len: u8,
    /// A summary's `keep`.
    pub keep: Option<u8>,
    /// The batch ends here.
    pub end: bool,
    /// The batch's number (end lines; 0 when absent).
    pub seq: u32,
    /// The statistics (end lines) are present: in the caller's array
    /// (see [`read`]; not copied through every frame).
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

/// The fields of a line besides `role` and `content`: those of an end line,
/// then the previous release's statistics fields in the order of `st`.
const FIELDS: [[u8; SCALAR_NAME_MAX]; 11] = [
    scalar_name(b"end"),
    scalar_name(b"seq"),
    scalar_name(b"keep"),
    scalar_name(b"st"),
    scalar_name(b"in"),
    scalar_name(b"out"),
    scalar_name(b"tin"),
    scalar_name(b"tout"),
    scalar_name(b"ctx"),
    scalar_name(b"n"),
    scalar_name(b"at"),
];
/// Where the old statistics fields start in [`FIELDS`].
const OLD_STATS: usize = 4;

/// The string fields' names.
const ROLE: &[u8] = b"role";
const CONTENT: &[u8] = b"content";

/// Reads the next line; the message goes to `text` (`None`: it is checked,
/// not kept), the statistics (when [`Record::stats`]) to `stats` (`None`:
/// checked, not kept).
pub fn read<P: Port>(
    port: &mut P,
    r: &mut ByteReader,
    text: Option<&mut [u8; MSG_MAX_BYTES]>,
    stats: Option<&mut StatsArray>,
) -> Result<Read, Errno> {
    let mut role = [0u8; 9];
    let content = match text {
        Some(t) => StrField::optional(&CONTENT, t),
        None => StrField {
            required: false,
            ..StrField::counted(&CONTENT, MSG_MAX_BYTES)
        },
    };
    let mut strs = [StrField::optional(&ROLE, &mut role), content];
    // Packed (4 bytes a field): this frame is on the deepest path of every
    // session load.
    let mut extra = ScalarSet::new(&FIELDS, stats);
    let line = read_fields(port, r, &mut strs, &mut [], Some(&mut extra))?;
    match line {
        Line::Eof => return Ok(Read::Eof),
        Line::Skipped => return Ok(Read::Skipped),
        Line::Record | Line::RecordAtEof => {}
    }
    let [role_f, text_f] = &strs;
    let end = extra.is_true(0);
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
    // At most MSG_MAX_BYTES (255): the content's longest length.
    let len = text_f.len;
    let keep = match (role, extra.get(2)) {
        (Some(Role::Summary), Scalar::Uint(k)) => Some(k.min(255) as u8),
        _ => None,
    };
    let stats = match extra.array_len(3) {
        Some(7) => true,
        Some(_) => return Ok(Read::Skipped),
        None if extra.present(OLD_STATS) => {
            if let Some(a) = extra.take_array() {
                for (i, v) in a.iter_mut().enumerate() {
                    *v = extra.uint(OLD_STATS + i);
                }
            }
            true
        }
        None => false,
    };
    Ok(Read::Record(Record {
        role,
        len,
        keep,
        end,
        seq: extra.uint(1),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::MemPort;

    /// What [`read`] makes of each line of `text`, one word a line:
    /// `S` skipped, or the record's role, length, keep, end, seq and (when
    /// it says it has them) the statistics.
    fn outcomes(text: &[u8]) -> Vec<String> {
        let mut port = MemPort::new();
        let mut r = ByteReader::over(text);
        let mut out = Vec::new();
        let mut stats: StatsArray = [0; 7];
        loop {
            let mut buf = [0u8; MSG_MAX_BYTES];
            match read(&mut port, &mut r, Some(&mut buf), Some(&mut stats)).unwrap() {
                Read::Eof => break,
                Read::Skipped => out.push("S".to_string()),
                Read::Record(rec) => out.push(format!(
                    "{:?}/{}/{}/{:?}/{}/{}/{}",
                    rec.role
                        .map(|r| r.name())
                        .map(|n| String::from_utf8_lossy(n).into_owned()),
                    rec.len,
                    String::from_utf8_lossy(&buf[..usize::from(rec.len)]),
                    rec.keep,
                    rec.end,
                    rec.seq,
                    if rec.stats {
                        format!("{:?}", stats)
                    } else {
                        "-".to_string()
                    }
                )),
            }
        }
        out
    }

    /// The accept/skip decisions and the values on odd lines, as the reader
    /// with one field a name for the old statistics made them (pinned when
    /// the fields moved to a [`ScalarSet`]).
    #[test]
    fn odd_lines_are_read_as_before() {
        let text: &[u8] = b"{\"end\":true,\"seq\":3,\"in\":5,\"out\":6,\"tin\":7,\"tout\":8,\"ctx\":9,\"n\":10,\"at\":11}\n\
{\"end\":true,\"seq\":4,\"in\":true}\n\
{\"end\":true,\"seq\":5,\"out\":6,\"at\":2}\n\
{\"end\":true,\"seq\":6,\"in\":1,\"in\":false}\n\
{\"end\":true,\"seq\":7,\"in\":null,\"n\":-3,\"at\":1.5}\n\
{\"end\":true,\"seq\":8,\"in\":[1,2],\"out\":4}\n\
{\"end\":true,\"seq\":9,\"st\":[1,2,3,4,5,6,7],\"in\":9}\n\
{\"end\":true,\"seq\":10,\"st\":[1,2,3,4,5,6,7],\"x\":[8]}\n\
{\"end\":true,\"seq\":11,\"st\":[1,2,3]}\n\
{\"end\":true,\"seq\":12,\"st\":[1,2,3,4,5,6,7,8]}\n\
{\"end\":true,\"seq\":13,\"st\":5,\"in\":2}\n\
{\"end\":true,\"seq\":14,\"st\":[],\"in\":2}\n\
{\"end\":true,\"seq\":15,\"in\":\"5\"}\n\
{\"end\":true,\"seq\":16,\"inn\":5,\"i\":4,\"tou\":3,\"touts\":1}\n\
{\"end\":false,\"in\":5}\n\
{\"in\":5}\n\
{\"role\":\"user\",\"content\":\"a\",\"in\":5,\"n\":2,\"end\":true}\n\
{\"role\":\"user\",\"content\":\"b\",\"in\":5,\"n\":2}\n\
{\"role\":\"summary\",\"content\":\"s\",\"keep\":300,\"in\":1}\n\
{\"role\":\"summary\",\"content\":\"s\",\"keep\":true}\n\
{\"role\":\"user\",\"content\":\"c\",\"keep\":2}\n\
{\"role\":\"bogus\",\"content\":\"c\"}\n\
{\"role\":\"user\"}\n\
{\"content\":\"d\",\"end\":true}\n\
{\"end\":true,\"seq\":17,\"in\":{\"a\":1}}\n\
{\"end\":true,\"seq\":18,\"in\":5\n\
{\"end\":true,\"seq\":19,\"seq\":20,\"end\":1,\"in\":4294967296}\n\
{\"end\":true,\"seq\":21,\"in\":3} x\n\
{\"end\":true,\"seq\":22,\"at\":1e3,\"in\":0}";
        let got = outcomes(text);
        let mut want: Vec<String> = EXPECTED.iter().map(|s| s.to_string()).collect();
        if !cfg!(feature = "lasting") {
            // No summaries without the feature: not a role.
            for w in want
                .iter_mut()
                .filter(|w| w.starts_with("Some(\"summary\")"))
            {
                *w = "S".to_string();
            }
        }
        assert_eq!(got, want);
    }

    const EXPECTED: &[&str] = &[
        "None/0//None/true/3/[5, 6, 7, 8, 9, 10, 11]",
        "None/0//None/true/4/[0, 0, 0, 0, 0, 0, 0]",
        "None/0//None/true/5/-",
        "None/0//None/true/6/[0, 0, 0, 0, 0, 0, 0]",
        "None/0//None/true/7/[0, 0, 0, 0, 0, 0, 0]",
        "None/0//None/true/8/[0, 4, 0, 0, 0, 0, 0]",
        "None/0//None/true/9/[1, 2, 3, 4, 5, 6, 7]",
        "None/0//None/true/10/[8, 0, 0, 0, 0, 0, 0]",
        "S",
        "S",
        "None/0//None/true/13/[2, 0, 0, 0, 0, 0, 0]",
        "S",
        "None/0//None/true/15/-",
        "None/0//None/true/16/-",
        "S",
        "S",
        "Some(\"user\")/1/a/None/true/0/[5, 0, 0, 0, 0, 2, 0]",
        "Some(\"user\")/1/b/None/false/0/[5, 0, 0, 0, 0, 2, 0]",
        "Some(\"summary\")/1/s/Some(255)/false/0/[1, 0, 0, 0, 0, 0, 0]",
        "Some(\"summary\")/1/s/None/false/0/-",
        "Some(\"user\")/1/c/None/false/0/-",
        "S",
        "S",
        "S",
        "S",
        "S",
        "S",
        "S",
        "None/0//None/true/22/[0, 0, 0, 0, 0, 0, 0]",
    ];
}
