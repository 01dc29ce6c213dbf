//! The record formats on flash: what the bytes of each file look like, how
//! they are written and read. The state machines that decide *which* file
//! to write when live elsewhere ([`crate::session`], [`crate::memory`]).
//!
//! Every file is JSON Lines of flat objects (one record a line), so a person
//! can read them and a torn last line costs that line only.
//!
//! ```text
//! /.bentoclaw_session      the base: the ring as of its last fold
//!   {"role":"summary","content":"user: my cat is Mali; …"}
//!   {"role":"user","content":"สวัสดี"}
//!   {"role":"assistant","content":"Hello!","end":true,"seq":41,"st":[512,98,0,0,73,12,0]}
//! /.bentoclaw_session.0 … .5   one flush ("batch") each, written round-robin
//!   {"role":"summary","content":"…","keep":2}          a compaction: keep the 2 newest
//!   {"role":"user","content":"what is my cat called?"}
//!   {"role":"assistant","content":"Mali.","end":true,"seq":42,"st":[…]}
//! /.bentoclaw_memory       the base store
//!   {"seq":3}                                          its generation
//!   {"key":"name","value":"สมชาย"}
//!   {"key":"wifi","value":"hunter2","pin":true}
//! /.bentoclaw_memory.0 … .7   pairs set since the base was written, by key hash
//!   {"seq":3}                                          applies to generation 3
//!   {"key":"city","value":"Chiang Mai"}
//!   {"key":"name","del":true}                          forgotten
//! ```
//!
//! * A batch ends at the line carrying `"end":true`; `"seq"` numbers batches
//!   (the base's `seq` says which batches it already holds), `"st"` carries
//!   the session statistics `[in, out, tin, tout, ctx, n, at]`.
//! * A file in the seed's plain form — one record a line, no `end`, no
//!   `seq`, no header — is read as a base of generation 0 (a device that ran
//!   the vendor library leaves such files behind).
//! * The previous release's session file (appended batches, statistics as
//!   `"in"`, `"out"`, … on the end line) is read too.
//!
//! [`lines`] is the streaming reader and writer all of them use: records are
//! parsed straight from the file into fixed buffers, no line buffer, no
//! recursion; a line that is not a record is skipped and reported.

pub mod lines;
pub mod memory;
pub mod session;
