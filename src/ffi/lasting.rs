//! `claw_ext.h`, part 2: sessions that last (feature `lasting`) — byte and
//! token accounting, compaction into a summary entry, the archive, and a
//! fresh session on demand. Additions to the vendor ABI.

use cty::c_char;

use super::{c_bytes, out_slice, with_state};
use crate::text::copy_prefix;

/// `claw_role_t` of a compaction summary: only ever the first entry of the
/// ring; `claw_session_add` refuses it.
pub const CLAW_ROLE_SUMMARY: u8 = 4;
/// Size cap of the archive (`/.bentoclaw_archive`) in bytes; past it the
/// oldest turns are dropped.
pub const CLAW_ARCHIVE_MAX: u32 = 8192;

// The constants are literal for cbindgen; these keep them equal to the core's.
const _: () = assert!(CLAW_ROLE_SUMMARY == crate::message::Role::Summary as u8);
const _: () = assert!(CLAW_ARCHIVE_MAX == crate::session::archive::ARCHIVE_MAX);

/// Byte and token accounting of the session (`claw_session_stats`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct claw_session_stats_t {
    /// Request bytes sent.
    pub in_bytes: u32,
    /// Reply bytes received.
    pub out_bytes: u32,
    /// Input tokens reported by the backend (0 when it reports none).
    pub in_tokens: u32,
    /// Output tokens reported by the backend.
    pub out_tokens: u32,
    /// Context bytes of the last request.
    pub context_bytes: u32,
    /// Exchanges counted.
    pub exchanges: u32,
    /// The host clock (seconds) at the last exchange; 0 when unknown.
    pub last_active: u32,
}

/// Counts one exchange into the session's statistics (persisted with the
/// session at the next flush, reset with it). `context_bytes` replaces the
/// last value; `now_s` 0 leaves the last-active time as it was.
#[unsafe(no_mangle)]
pub extern "C" fn claw_session_account(
    in_bytes: u32,
    out_bytes: u32,
    in_tokens: u32,
    out_tokens: u32,
    context_bytes: u32,
    now_s: u32,
) {
    let add = crate::session::Stats {
        in_bytes,
        out_bytes,
        in_tokens,
        out_tokens,
        context_bytes,
        exchanges: 1,
        last_active: now_s,
    };
    with_state((), |s, p| s.session.account(p, &add));
}

/// Copies the session's statistics to `out`. False for NULL.
///
/// # Safety
/// `out` is NULL or valid for writes of one element.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_session_stats(out: *mut claw_session_stats_t) -> bool {
    if out.is_null() {
        return false;
    }
    let Some(st) = with_state(None, |s, p| Some(s.session.stats(p))) else {
        return false;
    };
    let v = claw_session_stats_t {
        in_bytes: st.in_bytes,
        out_bytes: st.out_bytes,
        in_tokens: st.in_tokens,
        out_tokens: st.out_tokens,
        context_bytes: st.context_bytes,
        exchanges: st.exchanges,
        last_active: st.last_active,
    };
    // SAFETY: non-NULL and valid for one element per the contract.
    unsafe { out.write(v) };
    true
}

/// Folds all but the newest `keep` turns into one summary entry
/// (`CLAW_ROLE_SUMMARY`) at the head of the ring: `summary` is the text the
/// backend wrote (UTF-8, cut to 255 bytes), or NULL for a local digest. A
/// tool turn stays with the turn that asked for it. The folded turns are
/// appended to the archive first (nothing changes when that fails). Returns
/// how many turns were folded; the session file is rewritten at the next
/// flush.
///
/// # Safety
/// `summary` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_session_compact(summary: *const c_char, keep: u16) -> u16 {
    // SAFETY: per this function's contract.
    let summary = unsafe { c_bytes(summary) };
    with_state(0, |s, p| {
        s.session
            .compact(p, summary, usize::from(keep))
            .map_or(0, |n| n as u16)
    })
}

/// How many turns `claw_session_compact(_, keep)` would fold now, without
/// folding them (so a caller can send exactly those turns to be summarised).
#[unsafe(no_mangle)]
pub extern "C" fn claw_session_compact_plan(keep: u16) -> u16 {
    with_state(0, |s, p| {
        let _ = s.session.ring(p);
        s.session.fold_plan(usize::from(keep)) as u16
    })
}

/// Retires the session: its entries go to the archive, then it is cleared
/// (statistics too). False, and nothing changed, when the archive cannot
/// be written.
#[unsafe(no_mangle)]
pub extern "C" fn claw_session_new() -> bool {
    with_state(false, |s, p| s.session.start_new(p).is_ok())
}

/// The `index`-th entry of the ring (oldest first): its role, and its text
/// NUL-terminated in `out`. False past the end, for NULL, or when the text
/// does not fit `out_max` (then nothing is written).
///
/// # Safety
/// `role` is NULL or valid for one byte; `out` is NULL or valid for writes
/// of `out_max` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_session_message(
    index: u16,
    role: *mut u8,
    out: *mut c_char,
    out_max: usize,
) -> bool {
    // SAFETY: per this function's contract.
    let Some(out) = (unsafe { out_slice(out, out_max) }) else {
        return false;
    };
    if role.is_null() {
        return false;
    }
    let got = with_state(None, |s, p| {
        let m = s.session.ring(p).get(usize::from(index))?;
        let dst = out.get_mut(..=m.text.len())?;
        copy_prefix(dst, &m.text);
        if let Some(nul) = dst.last_mut() {
            *nul = 0;
        }
        Some(m.role as u8)
    });
    match got {
        Some(r) => {
            // SAFETY: non-NULL and valid for one byte per the contract.
            unsafe { role.write(r) };
            true
        }
        None => false,
    }
}

/// Copies up to `out_max` bytes of the archive (JSON Lines of retired and
/// compacted turns, oldest first) from byte `offset`. Returns how many; 0
/// at the end, without an archive, or for NULL. Not NUL-terminated.
///
/// # Safety
/// `out` is NULL or valid for writes of `out_max` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_archive_read(offset: u32, out: *mut c_char, out_max: usize) -> usize {
    // SAFETY: per this function's contract.
    let Some(out) = (unsafe { out_slice(out, out_max) }) else {
        return 0;
    };
    with_state(0, |_, p| {
        crate::session::archive::read(p, offset, out).unwrap_or(0)
    })
}
