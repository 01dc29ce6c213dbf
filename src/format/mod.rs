//! The record formats on flash: what the bytes of each file look like, how
//! they are written and read. The state machines that decide *which* file
//! to write when live elsewhere ([`crate::session`], [`crate::memory`]).
//!
//! The session, memory and archive files are JSON Lines of flat objects (one
//! record a line), so a person can read them and a torn last line costs that
//! line only. Each format is described once, where it is read and written:
//!
//! * `/.bentoclaw_session` and its slots `.0` … `.5`: the files in
//!   [`crate::session`], the records in [`session`];
//! * `/.bentoclaw_memory` and its shards `.0` … `.7`: the files in
//!   [`crate::memory`], the records in [`memory`];
//! * `/.bentoclaw_archive` (feature `lasting`): `src/session/archive.rs`;
//! * `/.bentoclaw_config` (feature `agent`): `src/agent/config.rs`, one JSON
//!   object, read with serde-json-core, not with [`lines`].
//!
//! A file in the seed's plain form — one record a line, no `end`, no `seq`,
//! no header — is read as a base of generation 0 (a device that ran the
//! vendor library leaves such files behind).
//!
//! [`lines`] is the streaming reader and writer the JSON Lines files use:
//! records are parsed straight from the file into fixed buffers, no line
//! buffer, no recursion; a line that is not a record is skipped and
//! reported.

pub mod lines;
pub mod memory;
pub mod session;
