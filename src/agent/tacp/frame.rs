//! TACP's bytes on the wire (`docs/TACP.md`): the frame of the claw
//! sub-protocol, its CRC, and a receiver that finds the frames and the
//! control commands in the console's byte stream, where the vendor's
//! `tacp.c` is absent (the unix port, the emulated board). The frame layout
//! and its CRC are described once, in `docs/TACP.md` ("Frames"); a payload
//! holds at most [`PAYLOAD_MAX`] bytes.
//!
//! [`Rx`] takes one byte at a time; its state is a few bytes, the payload
//! goes into the caller's buffer. Bytes that are not TACP come back
//! ([`Event::Pass`]) for the REPL, in order; a byte that may start a
//! command is held until the next one tells. A frame that stops arriving
//! for [`GAP_MS`] is dropped (the next byte starts afresh); so is one with
//! a bad CRC and one whose length is over [`PAYLOAD_MAX`] (its header only:
//! what follows is read as new input). None of them is answered. The gap
//! is counted between bytes and a frame's bytes are not searched for a
//! magic: a frame cut short takes the bytes of a next frame sent within
//! the gap as its rest (`docs/TACP.md`, "What the framer does with the
//! bytes").

/// First magic byte.
pub const MAGIC0: u8 = 0xAA;
/// Second magic byte.
pub const MAGIC1: u8 = 0x55;
/// Control command: Ctrl-C (KeyboardInterrupt).
pub const CMD_TERMINATE: u8 = 0x01;
/// Control command: safe boot once and a soft reset (for an upload).
pub const CMD_PROGRAM_MODE: u8 = 0x02;
/// Control command: the IDE's ping, no side effects.
pub const CMD_CONNECT: u8 = 0x03;
/// Control command: the USB icon on the LCD.
pub const CMD_STATUS: u8 = 0x04;
/// Control command: build information.
pub const CMD_VERSION_QUERY: u8 = 0x05;
/// Control command: a hardware reset.
pub const CMD_HARD_RESET: u8 = 0x06;
/// Control command: a file upload (a header of its own follows).
pub const CMD_FILE_XFER: u8 = 0x20;
/// The claw sub-protocol: a frame follows.
pub const CMD_BENTOCLAW: u8 = 0x30;

/// Longest payload (`TACP_CLAW_PAYLOAD_MAX`).
pub const PAYLOAD_MAX: usize = 3072;
/// Bytes of a frame around its payload: magic, 0x30, sub, seq, length, CRC.
pub const OVERHEAD: usize = 9;
/// The longest frame.
pub const FRAME_MAX: usize = PAYLOAD_MAX + OVERHEAD;
/// A frame (or a command's header) whose next byte has not come this long
/// after the one before is dropped: the vendor's byte timeout
/// (`TACP_FILE_TIMEOUT_MS`).
pub const GAP_MS: u32 = 5000;
/// Longest path of a file upload's header (`TACP_FILE_PATH_MAX`).
pub const FILE_PATH_MAX: u8 = 127;

/// CRC-16/CCITT of `bytes`, continuing from `crc` (start with 0xFFFF).
pub fn crc16(mut crc: u16, bytes: &[u8]) -> u16 {
    for &b in bytes {
        crc = crc16_byte(crc, b);
    }
    crc
}

fn crc16_byte(crc: u16, b: u8) -> u16 {
    let mut crc = crc ^ (u16::from(b) << 8);
    for _ in 0..8 {
        crc = if crc & 0x8000 != 0 {
            (crc << 1) ^ 0x1021
        } else {
            crc << 1
        };
    }
    crc
}

/// Writes the frame of `sub`, `seq` and `payload` (cut to [`PAYLOAD_MAX`])
/// into `out`; its length, or `None` when `out` is too small.
pub fn write_frame(sub: u8, seq: u8, payload: &[u8], out: &mut [u8]) -> Option<usize> {
    let payload = payload.get(..PAYLOAD_MAX).unwrap_or(payload);
    let len = payload.len() as u16;
    let n = payload.len() + OVERHEAD;
    let out = out.get_mut(..n)?;
    let [lo, hi] = len.to_le_bytes();
    let head = [MAGIC0, MAGIC1, CMD_BENTOCLAW, sub, seq, lo, hi];
    let crc = crc16(crc16(0xFFFF, &[sub, seq, lo, hi]), payload);
    // (No `copy_from_slice`: its length check is a panic path.)
    crate::text::copy_prefix(out, &head);
    crate::text::copy_prefix(out.get_mut(head.len()..)?, payload);
    crate::text::copy_prefix(
        out.get_mut(head.len() + payload.len()..)?,
        &crc.to_le_bytes(),
    );
    Some(n)
}

/// Why a frame was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drop {
    /// Its CRC did not match.
    Crc,
    /// Its length is over [`PAYLOAD_MAX`] (or the caller's buffer).
    TooLong,
}

/// What one byte made of the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Held: part of a command or frame (or maybe the start of one).
    Held,
    /// Bytes for the REPL: `.0[..n]`, in order (held bytes that turned out
    /// to be no command, and this one).
    Pass([u8; 3], u8),
    /// A control command `AA 55 CMD` (for [`CMD_FILE_XFER`]: once its
    /// header has been read).
    Control(u8),
    /// A whole frame with a good CRC; the payload is `payload[..len]`.
    Frame {
        /// Its sub-command.
        sub: u8,
        /// Its sequence number.
        seq: u8,
        /// Its payload's length.
        len: u16,
    },
    /// A frame dropped (not answered).
    Dropped(Drop),
}

/// Where the receiver is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
enum Phase {
    #[default]
    Idle = 0,
    Magic0,
    Magic1,
    Sub,
    Seq,
    LenLo,
    LenHi,
    Payload,
    CrcLo,
    CrcHi,
    /// A file upload's header: its path length.
    FilePathLen,
    /// The rest of the header (path, 4 length bytes): `len - got` to skip.
    FileHeader,
}

impl Phase {
    fn from_u8(v: u8) -> Phase {
        const ALL: [Phase; 12] = [
            Phase::Idle,
            Phase::Magic0,
            Phase::Magic1,
            Phase::Sub,
            Phase::Seq,
            Phase::LenLo,
            Phase::LenHi,
            Phase::Payload,
            Phase::CrcLo,
            Phase::CrcHi,
            Phase::FilePathLen,
            Phase::FileHeader,
        ];
        ALL.get(usize::from(v)).copied().unwrap_or(Phase::Idle)
    }
}

/// The receiver's state: 16 bytes, all zero at rest (`claw_tacp_rx_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Rx {
    /// Where it is ([`Phase`] as a byte).
    pub phase: u8,
    /// The frame's sub-command.
    pub sub: u8,
    /// The frame's sequence number.
    pub seq: u8,
    /// The low byte of the received CRC.
    pub crc_lo: u8,
    /// The frame's payload length (a file header: bytes to skip).
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

impl Rx {
    /// At rest.
    pub const fn new() -> Self {
        Self {
            phase: 0,
            sub: 0,
            seq: 0,
            crc_lo: 0,
            len: 0,
            got: 0,
            crc: 0,
            pad: 0,
            last_ms: 0,
        }
    }

    /// Whether a command or frame is under way (its bytes held).
    pub fn busy(&self) -> bool {
        self.phase != Phase::Idle as u8
    }

    /// Whether the caller's payload buffer holds part of a frame (its
    /// payload is being received, or its CRC): keep it for the next byte.
    pub fn in_payload(&self) -> bool {
        (Phase::Payload as u8..=Phase::CrcHi as u8).contains(&self.phase)
    }

    fn go(&mut self, p: Phase) {
        self.phase = p as u8;
    }

    fn add(&mut self, b: u8) {
        self.crc = crc16_byte(self.crc, b);
    }

    /// One byte received at tick `now`; `payload` holds the frame's payload
    /// (the same buffer until the frame is done: at least [`PAYLOAD_MAX`]
    /// bytes, or shorter frames only).
    pub fn push(&mut self, b: u8, now: u32, payload: &mut [u8]) -> Event {
        let stale = self.busy() && now.wrapping_sub(self.last_ms) > GAP_MS;
        self.last_ms = now;
        let mut pre = [0u8; 3];
        let mut n = 0usize;
        if stale {
            // What was held passes when it was no more than a magic; a
            // frame or header cut short is dropped.
            match Phase::from_u8(self.phase) {
                Phase::Magic0 => {
                    pre[0] = MAGIC0;
                    n = 1;
                }
                Phase::Magic1 => {
                    pre = [MAGIC0, MAGIC1, 0];
                    n = 2;
                }
                _ => {}
            }
            self.go(Phase::Idle);
        }
        let ev = self.step(b, payload);
        if n == 0 {
            return ev;
        }
        match ev {
            Event::Pass(bytes, k) => {
                for &c in bytes.iter().take(usize::from(k)) {
                    if let Some(slot) = pre.get_mut(n) {
                        *slot = c;
                        n += 1;
                    }
                }
                Event::Pass(pre, n as u8)
            }
            // Fresh, `b` alone is passed or held.
            _ => Event::Pass(pre, n as u8),
        }
    }

    fn step(&mut self, b: u8, payload: &mut [u8]) -> Event {
        match Phase::from_u8(self.phase) {
            Phase::Idle => {
                if b == MAGIC0 {
                    self.go(Phase::Magic0);
                    Event::Held
                } else {
                    Event::Pass([b, 0, 0], 1)
                }
            }
            Phase::Magic0 => match b {
                MAGIC1 => {
                    self.go(Phase::Magic1);
                    Event::Held
                }
                // The first 0xAA was no command; this one may be.
                MAGIC0 => Event::Pass([MAGIC0, 0, 0], 1),
                _ => {
                    self.go(Phase::Idle);
                    Event::Pass([MAGIC0, b, 0], 2)
                }
            },
            Phase::Magic1 => match b {
                CMD_BENTOCLAW => {
                    self.crc = 0xFFFF;
                    self.go(Phase::Sub);
                    Event::Held
                }
                CMD_FILE_XFER => {
                    self.go(Phase::FilePathLen);
                    Event::Held
                }
                CMD_TERMINATE | CMD_PROGRAM_MODE | CMD_CONNECT | CMD_STATUS | CMD_VERSION_QUERY
                | CMD_HARD_RESET => {
                    self.go(Phase::Idle);
                    Event::Control(b)
                }
                MAGIC0 => {
                    self.go(Phase::Magic0);
                    Event::Pass([MAGIC0, MAGIC1, 0], 2)
                }
                _ => {
                    self.go(Phase::Idle);
                    Event::Pass([MAGIC0, MAGIC1, b], 3)
                }
            },
            Phase::Sub => {
                self.sub = b;
                self.add(b);
                self.go(Phase::Seq);
                Event::Held
            }
            Phase::Seq => {
                self.seq = b;
                self.add(b);
                self.go(Phase::LenLo);
                Event::Held
            }
            Phase::LenLo => {
                self.len = u16::from(b);
                self.add(b);
                self.go(Phase::LenHi);
                Event::Held
            }
            Phase::LenHi => {
                self.len |= u16::from(b) << 8;
                self.add(b);
                self.got = 0;
                let len = usize::from(self.len);
                if len > PAYLOAD_MAX || len > payload.len() {
                    self.go(Phase::Idle);
                    return Event::Dropped(Drop::TooLong);
                }
                self.go(if len == 0 {
                    Phase::CrcLo
                } else {
                    Phase::Payload
                });
                Event::Held
            }
            Phase::Payload => {
                if let Some(slot) = payload.get_mut(usize::from(self.got)) {
                    *slot = b;
                }
                self.add(b);
                self.got = self.got.saturating_add(1);
                if self.got >= self.len {
                    self.go(Phase::CrcLo);
                }
                Event::Held
            }
            Phase::CrcLo => {
                self.crc_lo = b;
                self.go(Phase::CrcHi);
                Event::Held
            }
            Phase::CrcHi => {
                self.go(Phase::Idle);
                if u16::from_le_bytes([self.crc_lo, b]) == self.crc {
                    Event::Frame {
                        sub: self.sub,
                        seq: self.seq,
                        len: self.len,
                    }
                } else {
                    Event::Dropped(Drop::Crc)
                }
            }
            Phase::FilePathLen => {
                if b > FILE_PATH_MAX {
                    // No header the IDE sends: what follows is new input.
                    self.go(Phase::Idle);
                    return Event::Control(CMD_FILE_XFER);
                }
                // The path and the 4 length bytes.
                self.len = u16::from(b) + 4;
                self.got = 0;
                self.go(Phase::FileHeader);
                Event::Held
            }
            Phase::FileHeader => {
                self.got = self.got.saturating_add(1);
                if self.got >= self.len {
                    self.go(Phase::Idle);
                    return Event::Control(CMD_FILE_XFER);
                }
                Event::Held
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn frame(sub: u8, seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![0u8; FRAME_MAX];
        let n = write_frame(sub, seq, payload, &mut out).unwrap();
        out.truncate(n);
        out
    }

    /// What the receiver made of `chunks` (fed with tick `t` each, in
    /// order): the REPL bytes, and the events other than held/pass with the
    /// payload of each frame.
    #[derive(Debug, PartialEq, Eq, Default)]
    struct Seen {
        repl: Vec<u8>,
        events: Vec<(Event, Vec<u8>)>,
    }

    fn feed(rx: &mut Rx, chunks: &[(u32, &[u8])]) -> Seen {
        let mut payload = vec![0u8; PAYLOAD_MAX];
        let mut seen = Seen::default();
        for &(t, chunk) in chunks {
            for &b in chunk {
                match rx.push(b, t, &mut payload) {
                    Event::Held => {}
                    Event::Pass(bytes, n) => seen.repl.extend_from_slice(&bytes[..usize::from(n)]),
                    ev @ Event::Frame { len, .. } => {
                        seen.events.push((ev, payload[..usize::from(len)].to_vec()))
                    }
                    ev => seen.events.push((ev, vec![])),
                }
            }
        }
        seen
    }

    #[test]
    fn crc_is_ccitt_false() {
        // The CRC-16/CCITT-FALSE check value.
        assert_eq!(crc16(0xFFFF, b"123456789"), 0x29B1);
        assert_eq!(crc16(0xFFFF, b""), 0xFFFF);
    }

    #[test]
    fn frames_have_the_vendor_layout() {
        // STATUS, seq 7, no payload: CRC over 03 07 00 00.
        let crc = crc16(0xFFFF, &[0x03, 0x07, 0x00, 0x00]).to_le_bytes();
        assert_eq!(
            frame(0x03, 7, b""),
            vec![0xAA, 0x55, 0x30, 0x03, 0x07, 0x00, 0x00, crc[0], crc[1]]
        );
        let f = frame(0x01, 0x2A, b"echo hi");
        assert_eq!(&f[..7], &[0xAA, 0x55, 0x30, 0x01, 0x2A, 7, 0]);
        assert_eq!(&f[7..14], b"echo hi");
        let crc = crc16(0xFFFF, &f[3..14]).to_le_bytes();
        assert_eq!(&f[14..], &crc);
        // A payload over the maximum is cut to it; a small buffer refuses.
        let big = vec![b'x'; PAYLOAD_MAX + 10];
        assert_eq!(frame(4, 0, &big).len(), FRAME_MAX);
        assert_eq!(write_frame(4, 0, b"abc", &mut [0u8; 11]), None);
        assert_eq!(write_frame(4, 0, b"abc", &mut [0u8; 12]), Some(12));
    }

    #[test]
    fn frames_and_repl_bytes_are_told_apart() {
        let mut rx = Rx::new();
        let f = frame(0x01, 9, b"echo \xaa\x55\x01");
        let mut input = b"print(1)\r\n".to_vec();
        input.extend_from_slice(&f);
        input.extend_from_slice(b"x\xaay\xaa\x55z\xaa\xaa\x55\x03\xaa\x55\x01\xaa\x55\xaa\x55\x04");
        let seen = feed(&mut rx, &[(0, &input)]);
        assert_eq!(
            seen.repl,
            b"print(1)\r\nx\xaay\xaa\x55z\xaa\xaa\x55".to_vec()
        );
        assert_eq!(
            seen.events,
            vec![
                (
                    Event::Frame {
                        sub: 1,
                        seq: 9,
                        len: 8
                    },
                    b"echo \xaa\x55\x01".to_vec()
                ),
                (Event::Control(CMD_CONNECT), vec![]),
                (Event::Control(CMD_TERMINATE), vec![]),
                (Event::Control(CMD_STATUS), vec![]),
            ]
        );
        assert!(!rx.busy());
    }

    #[test]
    fn bad_frames_are_dropped_and_the_next_one_is_read() {
        let mut rx = Rx::new();
        let mut bad = frame(0x03, 1, b"");
        *bad.last_mut().unwrap() ^= 1;
        let mut input = bad;
        // Length 3073: the header goes, what follows is new input.
        input.extend_from_slice(&[0xAA, 0x55, 0x30, 0x04, 2, 0x01, 0x0C]);
        input.extend_from_slice(b"ab");
        input.extend_from_slice(&frame(0x04, 3, b""));
        let seen = feed(&mut rx, &[(0, &input)]);
        assert_eq!(seen.repl, b"ab");
        assert_eq!(
            seen.events,
            vec![
                (Event::Dropped(Drop::Crc), vec![]),
                (Event::Dropped(Drop::TooLong), vec![]),
                (
                    Event::Frame {
                        sub: 4,
                        seq: 3,
                        len: 0
                    },
                    vec![]
                ),
            ]
        );
        // A caller's buffer shorter than the frame: dropped too.
        let mut small = [0u8; 2];
        let mut rx = Rx::new();
        let f = frame(1, 1, b"abc");
        let evs: Vec<_> = f.iter().map(|&b| rx.push(b, 0, &mut small)).collect();
        assert_eq!(evs[6], Event::Dropped(Drop::TooLong));
        // The longest payload is taken.
        let big = vec![b'y'; PAYLOAD_MAX];
        let seen = feed(&mut Rx::new(), &[(0, &frame(1, 5, &big))]);
        assert_eq!(seen.events.len(), 1);
        assert_eq!(seen.events[0].1, big);
    }

    #[test]
    fn a_frame_cut_short_is_dropped_after_the_gap() {
        let mut rx = Rx::new();
        let f = frame(0x03, 4, b"abcdef");
        let g = frame(0x03, 5, b"");
        // Half a frame, then nothing for longer than the gap, then a whole
        // frame: only the whole one counts.
        let seen = feed(&mut rx, &[(0, &f[..8]), (GAP_MS + 1, &g)]);
        assert_eq!(
            seen.events,
            vec![(
                Event::Frame {
                    sub: 3,
                    seq: 5,
                    len: 0
                },
                vec![]
            )]
        );
        assert!(seen.repl.is_empty());
        // Within the gap the frame goes on.
        let seen = feed(&mut rx, &[(100, &f[..8]), (100 + GAP_MS, &f[8..])]);
        assert_eq!(seen.events.len(), 1);
        // A lone magic held over the gap passes to the REPL.
        let seen = feed(&mut rx, &[(0, &[0xAA, 0x55]), (GAP_MS * 2, b"a")]);
        assert_eq!(seen.repl, b"\xaa\x55a");
        let seen = feed(&mut rx, &[(0, &[0xAA]), (GAP_MS * 2, &[0xAA])]);
        assert_eq!(seen.repl, b"\xaa");
        assert!(rx.busy(), "the new 0xAA is held");
        // The tick may wrap.
        let mut rx = Rx::new();
        let seen = feed(&mut rx, &[(u32::MAX - 10, &f[..5]), (20, &f[5..])]);
        assert_eq!(seen.events.len(), 1);
    }

    #[test]
    fn a_frame_cut_short_swallows_what_follows_within_the_gap() {
        // EXEC "echo abcdef" cut after its first payload byte: 10 payload
        // bytes and the 2 CRC bytes are missing.
        let f = frame(0x01, 4, b"echo abcdef");
        let g = frame(0x03, 5, b"");
        let h = frame(0x03, 6, b"");
        assert_eq!(g.len() + 3, 12);
        let mut rx = Rx::new();
        // The next frame comes within the gap: its 9 bytes are taken as the
        // cut frame's payload; nothing is answered, the frame still waits.
        let seen = feed(&mut rx, &[(0, &f[..8]), (GAP_MS, &g)]);
        assert_eq!(seen, Seen::default());
        assert!(rx.in_payload());
        // The one after it: 3 bytes end the cut frame, whose CRC fails
        // (dropped, no answer); its other 6 bytes are new input, for the REPL.
        let seen = feed(&mut rx, &[(GAP_MS + 10, &h)]);
        assert_eq!(seen.events, vec![(Event::Dropped(Drop::Crc), vec![])]);
        assert_eq!(seen.repl, h[3..].to_vec());
        assert!(!rx.busy());
        // Cut in its header: the next frame's bytes become the length.
        let mut rx = Rx::new();
        let big = frame(0x01, 7, &[b'z'; 0x30]);
        let seen = feed(&mut rx, &[(0, &f[..4]), (1, &big)]);
        // seq AA, length 0x3055: over the maximum, the header dropped; the
        // rest of `big` from its sub-command on is new input.
        assert_eq!(seen.events, vec![(Event::Dropped(Drop::TooLong), vec![])]);
        assert_eq!(seen.repl, big[3..].to_vec());
        // Cut right after `AA 55 30`: the next frame's `AA 55 30 03` are its
        // sub, seq and a length of 0x0330; the rest is its payload.
        let mut rx = Rx::new();
        let seen = feed(&mut rx, &[(0, &f[..3]), (1, &g)]);
        assert_eq!(seen, Seen::default());
        assert_eq!((rx.sub, rx.seq, rx.len, rx.got), (0xAA, 0x55, 0x0330, 5));
    }

    #[test]
    fn a_file_upload_header_is_swallowed() {
        let mut rx = Rx::new();
        let mut input = vec![0xAA, 0x55, 0x20, 8];
        input.extend_from_slice(b"/main.py");
        input.extend_from_slice(&[10, 0, 0, 0]);
        input.extend_from_slice(b"ok");
        let seen = feed(&mut rx, &[(0, &input)]);
        assert_eq!(seen.repl, b"ok");
        assert_eq!(seen.events, vec![(Event::Control(CMD_FILE_XFER), vec![])]);
        // A path length over 127 is no header.
        let seen = feed(&mut Rx::new(), &[(0, &[0xAA, 0x55, 0x20, 200, b'z'])]);
        assert_eq!(seen.repl, b"z");
    }

    proptest! {
        #![proptest_config(crate::testing::regressions("tests/proptest-regressions/agent/tacp/frame.txt"))]
        /// Frames among REPL text, split anywhere: the same frames and the
        /// same REPL bytes as fed whole.
        #[test]
        fn split_anywhere(
            frames in proptest::collection::vec(
                (any::<u8>(), any::<u8>(), proptest::collection::vec(any::<u8>(), 0..300)),
                1..5,
            ),
            text in proptest::collection::vec(
                proptest::collection::vec(0x20u8..0x7f, 0..20), 5),
            cuts in proptest::collection::vec(any::<usize>(), 0..8),
        ) {
            let mut input = Vec::new();
            let mut want = Seen::default();
            for (i, (sub, seq, p)) in frames.iter().enumerate() {
                input.extend_from_slice(&text[i]);
                want.repl.extend_from_slice(&text[i]);
                input.extend_from_slice(&frame(*sub, *seq, p));
                want.events.push((
                    Event::Frame { sub: *sub, seq: *seq, len: p.len() as u16 },
                    p.clone(),
                ));
            }
            let mut at: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
            at.push(0);
            at.push(input.len());
            at.sort();
            let chunks: Vec<(u32, &[u8])> =
                at.windows(2).map(|w| (0, &input[w[0]..w[1]])).collect();
            let mut rx = Rx::new();
            let seen = feed(&mut rx, &chunks);
            prop_assert_eq!(seen, want);
            prop_assert!(!rx.busy());
        }

        /// Any bytes: no panic, the state stays bounded, and every byte
        /// that is not part of a command comes out once, in order: what
        /// passes is a subsequence of the input.
        #[test]
        fn any_bytes(input in proptest::collection::vec(any::<u8>(), 0..2000)) {
            let mut rx = Rx::new();
            let seen = feed(&mut rx, &[(0, &input)]);
            let mut it = input.iter();
            for b in &seen.repl {
                prop_assert!(it.any(|x| x == b));
            }
            prop_assert!(usize::from(rx.got) <= PAYLOAD_MAX);
        }

        /// One bit flipped anywhere in a frame's CRC-covered part or CRC:
        /// never taken as that frame.
        #[test]
        fn a_flipped_bit_is_caught(
            payload in proptest::collection::vec(any::<u8>(), 0..64),
            bit in any::<usize>(),
        ) {
            let mut f = frame(0x01, 3, &payload);
            let span = (f.len() - 3) * 8;
            let bit = bit % span;
            f[3 + bit / 8] ^= 1 << (bit % 8);
            let seen = feed(&mut Rx::new(), &[(0, &f)]);
            let good = (Event::Frame { sub: 1, seq: 3, len: payload.len() as u16 }, payload.clone());
            prop_assert!(!seen.events.contains(&good));
        }
    }
}
