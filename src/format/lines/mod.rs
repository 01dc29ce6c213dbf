//! A streaming JSON Lines reader and writer for flat records.
//!
//! Both files of the core are JSON Lines whose records are flat objects of
//! strings and scalars. Records are parsed straight from the file into the
//! caller's fixed buffers, one byte at a time: no line buffer, no recursion,
//! no heap. A line that is not such a record — garbage, a torn tail, invalid
//! UTF-8, nested arrays or objects, a string longer than its buffer, a 100 KB
//! line — is skipped up to its newline and reported as [`Line::Skipped`];
//! the records around it survive.
//!
//! Why not serde-json-core: it needs the whole line in a buffer (a session
//! line can be 1.5 KB once escaped) and its escaped-string support still
//! needs a second buffer to unescape into; see `docs/DESIGN.md` for the
//! measured code size of both approaches.
//!
//! The parts, each using only those after it: `writer.rs` (the
//! [`LineWriter`]), `parser.rs` ([`read_record`], [`read_fields`]: one flat
//! record a line), `fields.rs` (the fields a caller asks for: [`StrField`],
//! [`ScalarField`], [`ScalarSet`]), `reader.rs` (the [`ByteReader`] over the
//! port or over RAM). The tests are in `tests.rs`. A parse step's result
//! packed in a word, and the word-at-a-time byte tests, are in
//! `src/kernel/`.

mod fields;
mod parser;
mod reader;
#[cfg(test)]
mod tests;
mod writer;

pub use fields::{
    ARRAY_MAX, FIELD_NAME_MAX, SCALAR_NAME_MAX, SET_MAX, Scalar, ScalarField, ScalarSet, StrField,
    scalar_name,
};
pub use parser::{Line, read_fields, read_record};
pub use reader::{ByteReader, NO_FD};
pub use writer::LineWriter;
