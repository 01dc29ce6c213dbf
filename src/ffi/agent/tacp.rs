//! TACP v2: dispatch, the ready/ASK-done answers, the frame receiver
//! (`claw_tacp_rx_t`) and frame writing.

use super::*;

/// Bytes of work buffer `claw_tacp_dispatch` needs for this request (an
/// online ASK runs `ask()`; the rest need one answer), and
/// `claw_tacp_ready` (`sub` 0). 0 for a NULL payload with a length.
///
/// # Safety
/// `payload` is NULL or valid for reads of `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tacp_work_size(sub: u8, payload: *const u8, len: usize) -> usize {
    // SAFETY: per this function's contract.
    let Some(payload) = (unsafe { bytes(payload, len) }) else {
        return 0;
    };
    let mut host = CHost::new(core::ptr::null_mut());
    tacp_mod::work_size(&mut host, sub, payload)
}

/// One TACP v2 request (`docs/TACP.md`): sub-command `sub`, its payload
/// `payload[0..len)`. The answers go out through `claw_port_tacp_respond`
/// before this returns; every request is answered — but an ASK while
/// connected: `CLAW_STATUS_TACP_ASK` says to run `claw_ask` with the
/// payload (the same buffers and stack as `ask()`) and hand its outcome to
/// `claw_tacp_ask_done`, which answers it. `work` holds
/// `claw_tacp_work_size(sub, payload, len)` bytes. Otherwise not `CLAW_OK`
/// only for a KeyboardInterrupt/SystemExit that stopped it
/// (`CLAW_KIND_PENDING`: the host's to raise or drop) or a buffer too
/// small.
///
/// # Safety
/// `payload` valid for `len` bytes; `work` valid for writes of `work_len`
/// bytes and not overlapping `payload`; `ctx` is passed to
/// `claw_port_tool` untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tacp_dispatch(
    sub: u8,
    payload: *const u8,
    len: usize,
    work: *mut u8,
    work_len: usize,
    ctx: *mut c_void,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let Some(payload) = (unsafe { bytes(payload, len) }) else {
        return Status::WorkTooSmall as claw_status_t;
    };
    if work.is_null() || work_len > isize::MAX as usize {
        return Status::WorkTooSmall as claw_status_t;
    }
    // SAFETY: non-NULL, valid for writes of `work_len` bytes, not aliased.
    let work = unsafe { core::slice::from_raw_parts_mut(work, work_len) };
    let mut host = CHost::new(ctx);
    if !host.on_task {
        // Off the MicroPython task: nothing runs, nothing is answered.
        return Status::Busy as claw_status_t;
    }
    if work_len < tacp_mod::work_size(&mut host, sub, payload) {
        return Status::WorkTooSmall as claw_status_t;
    }
    done(tacp_mod::dispatch(&mut host, sub, payload, work))
}

/// The answer of an online ASK (`claw_tacp_dispatch` said
/// `CLAW_STATUS_TACP_ASK`): `status` is what `claw_ask` (or
/// `claw_ask_check`) returned, the reply `reply[0..len)`. Answers through
/// `claw_port_tacp_respond`, then the STATS card. Not `CLAW_OK` only for a
/// KeyboardInterrupt/SystemExit (answered "interrupted").
///
/// # Safety
/// `reply` NULL or valid for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tacp_ask_done(
    status: claw_status_t,
    reply: *const u8,
    len: usize,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let reply = unsafe { bytes(reply, len) }.unwrap_or(&[]);
    let outcome = match Status::from_c(status) {
        Status::Ok => Ok(reply),
        s => Err(s),
    };
    let mut host = CHost::new(core::ptr::null_mut());
    if !host.on_task {
        return Status::Busy as claw_status_t;
    }
    done(tacp_mod::ask_done(&mut host, outcome))
}

/// The READY frame's answer (`claw_port_tacp_respond` with sub 0): `fw`
/// (the firmware's version) and `board` (its name), NUL-terminated UTF-8;
/// then the STATS card. `work` holds `claw_tacp_work_size(0, NULL, 0)`
/// bytes.
///
/// # Safety
/// `fw` and `board` NULL or NUL-terminated; `work` valid for writes of
/// `work_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tacp_ready(
    fw: *const c_char,
    board: *const c_char,
    work: *mut u8,
    work_len: usize,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let (fw, board) = unsafe { (c_bytes(fw), c_bytes(board)) };
    // SAFETY: per this function's contract.
    let Some(work) = (unsafe { out_slice(work.cast(), work_len) }) else {
        return Status::WorkTooSmall as claw_status_t;
    };
    let mut host = CHost::new(core::ptr::null_mut());
    let work = work.get_mut(..tacp_mod::WORK_SIZE).unwrap_or(&mut []);
    if !host.on_task {
        return Status::Busy as claw_status_t;
    }
    done(tacp_mod::ready(
        &mut host,
        fw.unwrap_or(b""),
        board.unwrap_or(b""),
        work,
    ))
}

/// The TACP receiver's state (`claw_tacp_rx_push`): all zero at rest.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct claw_tacp_rx_t {
    /// Where it is in a command or frame.
    pub phase: u8,
    /// The frame's sub-command.
    pub sub: u8,
    /// The frame's sequence number.
    pub seq: u8,
    /// The low byte of the frame's CRC.
    pub crc_lo: u8,
    /// The frame's payload length.
    pub len: u16,
    /// Payload bytes received.
    pub got: u16,
    /// The CRC so far.
    pub crc: u16,
    /// (Padding.)
    pub pad: u16,
    /// The tick of the last byte.
    pub last_ms: u32,
}

/// What one byte made of the stream (`claw_tacp_rx_push`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct claw_tacp_event_t {
    /// `CLAW_TACP_EV_*`.
    pub kind: u8,
    /// `CLAW_TACP_EV_PASS`: how many of `bytes` go to the REPL.
    pub n: u8,
    /// `CLAW_TACP_EV_PASS`: the bytes; `CLAW_TACP_EV_CONTROL`: `bytes[0]` is
    /// the command; `CLAW_TACP_EV_DROPPED`: `bytes[0]` is why
    /// (`CLAW_TACP_DROP_*`).
    pub bytes: [u8; 3],
    /// `CLAW_TACP_EV_FRAME`: its sub-command.
    pub sub: u8,
    /// `CLAW_TACP_EV_FRAME`: its sequence number.
    pub seq: u8,
    /// `CLAW_TACP_EV_FRAME`: its payload's length (in the caller's buffer).
    pub len: u16,
}

/// `claw_tacp_event_t.kind`: the byte is held (part of a command or frame).
pub const CLAW_TACP_EV_HELD: u8 = 0;
/// `claw_tacp_event_t.kind`: `bytes[0..n)` go to the REPL.
pub const CLAW_TACP_EV_PASS: u8 = 1;
/// `claw_tacp_event_t.kind`: a control command `AA 55 bytes[0]`.
pub const CLAW_TACP_EV_CONTROL: u8 = 2;
/// `claw_tacp_event_t.kind`: a whole frame with a good CRC.
pub const CLAW_TACP_EV_FRAME: u8 = 3;
/// `claw_tacp_event_t.kind`: a frame dropped, not answered.
pub const CLAW_TACP_EV_DROPPED: u8 = 4;
/// `CLAW_TACP_EV_DROPPED`: a bad CRC.
pub const CLAW_TACP_DROP_CRC: u8 = 1;
/// `CLAW_TACP_EV_DROPPED`: a length over `CLAW_TACP_PAYLOAD_MAX` (or the
/// caller's buffer).
pub const CLAW_TACP_DROP_TOO_LONG: u8 = 2;

impl From<claw_tacp_rx_t> for tacp_mod::frame::Rx {
    fn from(r: claw_tacp_rx_t) -> Self {
        Self {
            phase: r.phase,
            sub: r.sub,
            seq: r.seq,
            crc_lo: r.crc_lo,
            len: r.len,
            got: r.got,
            crc: r.crc,
            pad: r.pad,
            last_ms: r.last_ms,
        }
    }
}

impl From<tacp_mod::frame::Rx> for claw_tacp_rx_t {
    fn from(r: tacp_mod::frame::Rx) -> Self {
        Self {
            phase: r.phase,
            sub: r.sub,
            seq: r.seq,
            crc_lo: r.crc_lo,
            len: r.len,
            got: r.got,
            crc: r.crc,
            pad: r.pad,
            last_ms: r.last_ms,
        }
    }
}

/// Feeds one byte received at tick `now_ms` to the TACP receiver `rx`
/// (control commands, claw frames, and the bytes that are neither, for the
/// REPL); a frame's payload goes to `payload[0..payload_max)`, the same
/// buffer until the frame is done (`CLAW_TACP_PAYLOAD_MAX` bytes take any
/// frame). `*ev` says what the byte made; returns `ev->kind`. Pure: no
/// state of the library is touched.
///
/// # Safety
/// `rx` and `ev` NULL or valid; `payload` NULL or valid for writes of
/// `payload_max` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tacp_rx_push(
    rx: *mut claw_tacp_rx_t,
    byte: u8,
    now_ms: u32,
    payload: *mut u8,
    payload_max: usize,
    ev: *mut claw_tacp_event_t,
) -> u8 {
    use tacp_mod::frame::{Drop, Event};
    if rx.is_null() || ev.is_null() {
        return CLAW_TACP_EV_HELD;
    }
    // SAFETY: per this function's contract.
    let payload = unsafe { out_slice(payload.cast(), payload_max) }.unwrap_or(&mut []);
    // SAFETY: non-NULL and valid per the contract.
    let mut state: tacp_mod::frame::Rx = unsafe { rx.read() }.into();
    let mut e = claw_tacp_event_t::default();
    match state.push(byte, now_ms, payload) {
        Event::Held => {}
        Event::Pass(b, n) => {
            e.kind = CLAW_TACP_EV_PASS;
            e.bytes = b;
            e.n = n;
        }
        Event::Control(c) => {
            e.kind = CLAW_TACP_EV_CONTROL;
            e.bytes[0] = c;
        }
        Event::Frame { sub, seq, len } => {
            e.kind = CLAW_TACP_EV_FRAME;
            e.sub = sub;
            e.seq = seq;
            e.len = len;
        }
        Event::Dropped(d) => {
            e.kind = CLAW_TACP_EV_DROPPED;
            e.bytes[0] = match d {
                Drop::Crc => CLAW_TACP_DROP_CRC,
                Drop::TooLong => CLAW_TACP_DROP_TOO_LONG,
            };
        }
    }
    // SAFETY: non-NULL and valid per the contract.
    unsafe {
        rx.write(state.into());
        ev.write(e);
    }
    e.kind
}

/// Whether the receiver is inside a frame's payload (the caller's payload
/// buffer holds part of one and must be kept).
///
/// # Safety
/// `rx` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tacp_rx_in_frame(rx: *const claw_tacp_rx_t) -> bool {
    if rx.is_null() {
        return false;
    }
    // SAFETY: non-NULL and valid per the contract.
    let state: tacp_mod::frame::Rx = unsafe { rx.read() }.into();
    state.in_payload()
}

/// Writes the TACP v2 frame of `sub`, `seq` and `payload[0..len)` (cut to
/// `CLAW_TACP_PAYLOAD_MAX`) into `out`: its length, 0 when `out_max` is too
/// small (`CLAW_TACP_FRAME_MAX` takes any).
///
/// # Safety
/// `payload` NULL or valid for `len` bytes; `out` NULL or valid for writes
/// of `out_max` bytes, not overlapping `payload`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tacp_frame(
    sub: u8,
    seq: u8,
    payload: *const u8,
    len: usize,
    out: *mut u8,
    out_max: usize,
) -> usize {
    // SAFETY: per this function's contract.
    let (Some(payload), Some(out)) = (unsafe { bytes(payload, len) }, unsafe {
        out_slice(out.cast(), out_max)
    }) else {
        return 0;
    };
    tacp_mod::frame::write_frame(sub, seq, payload, out).unwrap_or(0)
}
