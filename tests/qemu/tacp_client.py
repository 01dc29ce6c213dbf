"""tacp_client.py — a host-side TACP v2 client (docs/TACP.md), standing in
for the BENTO AI IDE: it writes frames to the emulated board's console UART
and takes the device's frames out of what the console sends back, leaving
the REPL's text where it was (tests/qemu/run.py's Board buffer).

    frame(sub, payload, seq)        the bytes of one request
    parse(stream)                   [(sub, seq, payload)] and the other bytes
    Client(board).request(sub, payload) -> (sub, payload)   one exchange
    Client(board).frames(seconds)   every frame that comes within `seconds`

Written from the protocol's description, independent of the firmware's
framer: CRC-16/CCITT (init 0xFFFF, poly 0x1021) over sub, seq, the length
(little-endian) and the payload, sent little-endian. Standard library only.
"""
import time

MAGIC = b"\xaa\x55\x30"
ERROR = 0xFF
TERMINATE = b"\xaa\x55\x01"
PING = b"\xaa\x55\x03"
PAYLOAD_MAX = 3072


def crc16(data, crc=0xFFFF):
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def frame(sub, payload=b"", seq=1):
    if isinstance(payload, str):
        payload = payload.encode()
    body = bytes([sub, seq]) + len(payload).to_bytes(2, "little") + payload
    return MAGIC + body + crc16(body).to_bytes(2, "little")


def take(buf):
    """The first whole frame in `buf` (a bytearray): removes it and returns
    (sub, seq, payload), or None when none is complete yet. A frame with a
    bad CRC raises ValueError (the device must never send one)."""
    i = buf.find(MAGIC)
    if i < 0 or len(buf) < i + 7:
        return None
    n = int.from_bytes(buf[i + 5 : i + 7], "little")
    end = i + 7 + n
    if len(buf) < end + 2:
        return None
    got = int.from_bytes(buf[end : end + 2], "little")
    if n > PAYLOAD_MAX or got != crc16(buf[i + 3 : end]):
        raise ValueError("bad frame from the device: %r" % bytes(buf[i : end + 2])[:80])
    f = (buf[i + 3], buf[i + 4], bytes(buf[i + 7 : end]))
    del buf[i : end + 2]
    return f


def parse(stream):
    """Every frame in `stream` and the bytes around them."""
    buf = bytearray(stream)
    frames = []
    while True:
        f = take(buf)
        if f is None:
            return frames, bytes(buf)
        frames.append(f)


class Client:
    def __init__(self, board):
        self.board = board
        self.seq = 0

    def send(self, data):
        self.board.write(data)

    def next_seq(self):
        self.seq = self.seq % 255 + 1
        return self.seq

    def wait(self, seq, timeout=20.0):
        """The device's frame with `seq` (other frames before it are an
        error), within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        b = self.board
        with b.cond:
            while True:
                f = take(b.buf)
                if f is not None:
                    if f[1] != seq:
                        raise ValueError("a frame for seq %d while waiting for %d: %r" % (f[1], seq, f))
                    return f[0], f[2]
                left = deadline - time.monotonic()
                if b.eof or left <= 0:
                    raise TimeoutError("no answer for seq %d; console: %r" % (seq, bytes(b.buf[-200:])))
                b.cond.wait(min(left, 0.2))

    def request(self, sub, payload=b"", seq=None, timeout=20.0):
        seq = self.next_seq() if seq is None else seq
        self.send(frame(sub, payload, seq))
        return self.wait(seq, timeout)

    def frames(self, seconds):
        """Every frame the device sends within `seconds`."""
        deadline = time.monotonic() + seconds
        got = []
        b = self.board
        with b.cond:
            while True:
                f = take(b.buf)
                if f is not None:
                    got.append(f)
                    continue
                left = deadline - time.monotonic()
                if left <= 0:
                    return got
                b.cond.wait(min(left, 0.1))
