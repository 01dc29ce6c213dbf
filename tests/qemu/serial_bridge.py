#!/usr/bin/env python3
"""serial_bridge.py — the host side of the emulated board's network
co-processor: frames from the board's UART1 (qemu chardev on a Unix socket)
become HTTP requests to the bundled backend (mpy/examples/backend.py) on
loopback, and the answers go back as frames. Standard library only.

Frame (both directions; the board's end is
tests/qemu/boards/MPS2_AN505/serial_link.c; docs/EMULATOR.md has the table):

    "BC" | type u8 | check u8 | id u16 LE | length u32 LE | payload | CRC-32 LE

check = 0xA5 ^ type ^ the bytes of id and length (a header that fails it,
or claims more than 1 MiB, is noise: hunting goes on after its magic). The
CRC is zlib.crc32 of everything before it. An answer has the request's
type | 0x80 and its id. A frame with a bad CRC is dropped (the board's
request then times out); bytes that are no frame are skipped up to the next
magic. Every request is served on its own thread, so a backend that hangs
does not hold up the board's next request: the late answer still goes out,
with its old id, and the board discards it.

Requests of the transport (what a network co-processor would speak):

    0x01 CONNECT     u16 port, u8 n, host[n], u8 m, key[m]
         -> u8 1 when host:port accepted a TCP connection, else 0.
            Only loopback hosts are reached; any other host is 0.
            The endpoint and key are kept for the POSTs that follow.
    0x02 POST        u32 resp_max, u8 n, path[n], body
         -> u16 status, u8 flags, u32 tokens_in, u32 tokens_out, body
            status 0: no endpoint, unreachable, timeout, not HTTP, a
            header block over 1024 bytes, chunked coding, a truncated body
            or one over resp_max. The body is sent for status 200 only.
            flags bit 0/1: X-Tokens-In/Out was present and valid
            (1..10 digits, at most 4294967295, blanks around allowed).
    0x03 DISCONNECT  (empty) -> no answer; the endpoint and key are forgotten

Requests of the test harness (board.link_call(); not co-processor
protocol):

    0x10 HOST_HTTP   u16 port, u16 keep, u8 n, method[n], u16 m, path[m], body
         -> u16 status, body. A request to the backend's own endpoints
            (/_control, /_last, /_log, /_reset) on 127.0.0.1:port; for a JSON
            answer with a "requests" list, keep < 0xffff keeps only its
            newest `keep` entries (the board's heap is small, its UART slow).
    0x13 FAULT       u8 kind -> (empty); applies to the next transport answer:
            1 corrupt (one payload bit flipped: CRC mismatch), 2 late (held
            back and sent just before the answer after it), 3 noise (64
            bytes of non-frame bytes first), 4 drop (never sent)
    0x14 DETACH      (empty) -> no answer: the bridge closes its end of the
            UART, as a co-processor that was unplugged

(0x11 and 0x12 were the old text-line protocol's UART2 requests; TACP is on
the console now, tests/qemu/tacp_client.py.)

Usage by hand (see docs/EMULATOR.md):
    serial_bridge.py --link build/qemu-run/link.sock
listens on the socket, waits for qemu (-chardev socket,id=link,path=...),
then serves until qemu goes away.
"""

import argparse
import http.client
import json
import os
import socket
import struct
import sys
import threading
import time
import zlib

MAGIC = b"BC"
HEADER = struct.Struct("<2sBBHI")  # magic, type, check, id, length
MAX_PAYLOAD = 1 << 20

CONNECT, POST, DISCONNECT = 0x01, 0x02, 0x03
HOST_HTTP, FAULT, DETACH = 0x10, 0x13, 0x14
ANSWER = 0x80
TRANSPORT = (CONNECT, POST)

FAULT_CORRUPT, FAULT_LATE, FAULT_NOISE, FAULT_DROP = 1, 2, 3, 4

LOOPBACK = ("127.0.0.1", "localhost", "::1")
HEADER_MAX = 1024  # BENTOCLAW_HTTP_HEADER_MAX: the whole header block
CONNECT_TIMEOUT_S = 5.0
HTTP_TIMEOUT_S = 30.0  # the board gives up first; a late answer is discarded


def header_check(head):
    x = 0xA5 ^ head[2]
    for b in head[4:10]:
        x ^= b
    return x


def frame(ftype, fid, payload):
    head = bytearray(HEADER.pack(MAGIC, ftype, 0, fid, len(payload)))
    head[3] = header_check(head)
    head = bytes(head)
    return head + payload + struct.pack("<I", zlib.crc32(head + payload) & 0xFFFFFFFF)


def parse_tokens(value):
    """A token count header value as the unix transport reads it, or None."""
    v = value.strip(" \t")
    if not v or not all("0" <= c <= "9" for c in v):
        return None
    n = int(v)
    return n if n <= 0xFFFFFFFF else None


def http_answer(s, resp_max):
    """Read an HTTP/1.x answer from socket s the way the unix transport
    does: the header block ends within HEADER_MAX bytes with CRLF lines, the
    status line is "HTTP/1.0" or "HTTP/1.1", a status code and a space or
    CRLF; Content-Length, when present, is digits, exact and not
    conflicting; Transfer-Encoding fails; without a length the body runs
    to the close. A body over resp_max fails. Returns (status, tokens_in,
    tokens_out, body) or None; the body only for status 200."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        if len(buf) >= HEADER_MAX:
            return None  # header flood
        c = s.recv(HEADER_MAX - len(buf))
        if not c:
            return None  # closed inside the header block
        buf += c
    end = buf.index(b"\r\n\r\n") + 4
    if end > HEADER_MAX:
        return None
    head, rest = buf[:end], buf[end:]
    if (len(head) < 14 or head[:7] != b"HTTP/1." or head[7:8] not in (b"0", b"1") or head[8:9] != b" "
            or not head[9:12].isdigit() or head[12:13] not in (b" ", b"\r")):
        return None
    status = int(head[9:12])
    lines = head[:-4].split(b"\r\n")[1:]
    length = tin = tout = None
    for line in lines:
        if b"\n" in line or b":" not in line or line.startswith(b":"):
            return None  # bare LF, or not a header line
        name, _, value = line.partition(b":")
        name = name.lower()
        if name == b"content-length":
            v = value.strip(b" \t")
            if not v or not v.isdigit():
                return None
            if length is not None and int(v) != length:
                return None  # conflicting lengths
            length = int(v)
        elif name == b"transfer-encoding":
            return None
        elif name == b"x-tokens-in":
            tin = parse_tokens(value.decode("latin-1")) if parse_tokens(value.decode("latin-1")) is not None else tin
        elif name == b"x-tokens-out":
            tout = parse_tokens(value.decode("latin-1")) if parse_tokens(value.decode("latin-1")) is not None else tout
    if status != 200:
        return status, None, None, b""
    if length is not None and length > resp_max:
        return None
    limit = length if length is not None else resp_max
    body = rest
    while length is None or len(body) < length:
        if len(body) > limit:
            break
        c = s.recv(65536)
        if not c:
            if length is not None:
                return None  # truncated
            break
        body += c
    if length is not None:
        body = body[:length]  # bytes after the declared length are ignored
    elif len(body) > resp_max:
        return None
    return status, tin, tout, body


class SerialBridge:
    """Serves one board: `link` is the connected socket of its UART1."""

    def __init__(self, link, log=None):
        self.link = link
        self.log = log or (lambda msg: None)
        self.wlock = threading.Lock()
        self.state_lock = threading.Lock()
        self.endpoint = None  # (host, port, key)
        self.fault = None
        self.held = None  # a late answer waiting for the next one
        self.closed = False
        self.stats = {"frames": 0, "bad_crc": 0, "skipped": 0, "answers": 0}
        self.thread = threading.Thread(target=self._read_link, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def close(self):
        self.closed = True
        try:
            self.link.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.link.close()

    # --- the link ----------------------------------------------------------------

    def _read_link(self):
        buf = bytearray()
        while not self.closed:
            try:
                data = self.link.recv(65536)
            except OSError:
                data = b""
            if not data:
                break
            buf += data
            while True:
                i = buf.find(MAGIC)
                if i < 0:
                    # Keep a last "B" that may start the magic.
                    keep = 1 if buf.endswith(b"B") else 0
                    self.stats["skipped"] += len(buf) - keep
                    del buf[: len(buf) - keep]
                    break
                if i:
                    self.stats["skipped"] += i
                    del buf[:i]
                if len(buf) < HEADER.size:
                    break
                _, ftype, check, fid, length = HEADER.unpack_from(buf)
                if check != header_check(buf) or length > MAX_PAYLOAD:
                    del buf[:2]  # not a frame after all
                    continue
                end = HEADER.size + length + 4
                if len(buf) < end:
                    break
                body = bytes(buf[: end - 4])
                (crc,) = struct.unpack_from("<I", buf, end - 4)
                if zlib.crc32(body) & 0xFFFFFFFF != crc:
                    self.stats["bad_crc"] += 1
                    self.log("bridge: frame with a bad CRC dropped")
                    del buf[:2]
                    continue
                del buf[:end]
                self.stats["frames"] += 1
                self._dispatch(ftype, fid, body[HEADER.size :])
        self.closed = True

    def _dispatch(self, ftype, fid, payload):
        if ftype == DISCONNECT:
            with self.state_lock:
                self.endpoint = None
            return
        if ftype == DETACH:
            self.log("bridge: detached by the board's request")
            self.close()
            return
        handler = {
            CONNECT: self._connect,
            POST: self._post,
            HOST_HTTP: self._host_http,
            FAULT: self._fault,
        }.get(ftype)
        if handler is None:
            self.log("bridge: unknown frame type 0x%02x ignored" % ftype)
            return
        threading.Thread(target=self._serve, args=(handler, ftype, fid, payload), daemon=True).start()

    def _serve(self, handler, ftype, fid, payload):
        try:
            answer = handler(payload)
        except Exception as e:  # a malformed request: no answer, the board times out
            self.log("bridge: request 0x%02x failed: %r" % (ftype, e))
            return
        if answer is not None:
            self._send(ftype | ANSWER, fid, answer, transport=ftype in TRANSPORT)

    def _send(self, ftype, fid, payload, transport):
        data = frame(ftype, fid, payload)
        with self.wlock:
            if transport:
                fault, self.fault = self.fault, None
                if fault == FAULT_DROP:
                    self.log("bridge: fault: answer %d dropped" % fid)
                    return
                if fault == FAULT_LATE:
                    self.log("bridge: fault: answer %d held back" % fid)
                    self.held = data
                    return
                if fault == FAULT_CORRUPT:
                    b = bytearray(data)
                    b[HEADER.size + len(payload) // 2] ^= 0x10
                    data = bytes(b)
                elif fault == FAULT_NOISE:
                    data = b"BBC\x00noise B C BC\xff" + bytes(range(48)) + data
                if self.held is not None:
                    data, self.held = self.held + data, None
            try:
                self.link.sendall(data)
                self.stats["answers"] += 1
            except OSError:
                pass

    # --- the transport requests ------------------------------------------------------

    def _connect(self, p):
        (port,) = struct.unpack_from("<H", p, 0)
        n = p[2]
        host = p[3 : 3 + n].decode()
        m = p[3 + n]
        key = p[4 + n : 4 + n + m].decode()
        ok = False
        if host in LOOPBACK:
            try:
                socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
                ok = True
            except OSError:
                pass
        with self.state_lock:
            self.endpoint = (host, port, key) if ok else None
        self.log("bridge: connect %s:%d -> %s" % (host, port, ok))
        return bytes([1 if ok else 0])

    def _post(self, p):
        (resp_max,) = struct.unpack_from("<I", p, 0)
        n = p[4]
        path = p[5 : 5 + n].decode("ascii", "replace")
        body = p[5 + n :]
        with self.state_lock:
            ep = self.endpoint
        status, tin, tout, reply = 0, None, None, b""
        # The request line takes a path of printable ASCII from "/", no space.
        if ep is not None and path.startswith("/") and all(0x20 < ord(c) < 0x7F for c in path):
            status, tin, tout, reply = self._http_post(ep, path, body, resp_max)
        flags = (1 if tin is not None else 0) | (2 if tout is not None else 0)
        if status != 200:
            reply = b""
        return struct.pack("<HBII", status, flags, tin or 0, tout or 0) + reply

    def _http_post(self, ep, path, body, resp_max):
        """POST body to the endpoint with the unix transport's request and
        its rules for the answer (mpy/claw_transport_unix.c): returns
        (status, tokens_in, tokens_out, body); status 0 = failed."""
        host, port, key = ep
        req = ("POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
               "apikey: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
               % (path, host, port, key, len(body))).encode()
        fail = (0, None, None, b"")
        try:
            s = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S)
        except OSError:
            return fail
        try:
            s.settimeout(HTTP_TIMEOUT_S)
            s.sendall(req + body)
            return http_answer(s, resp_max) or fail
        except OSError:
            return fail
        finally:
            s.close()

    # --- the harness requests --------------------------------------------------------

    def _host_http(self, p):
        port, keep = struct.unpack_from("<HH", p, 0)
        n = p[4]
        method = p[5 : 5 + n].decode()
        (m,) = struct.unpack_from("<H", p, 5 + n)
        path = p[7 + n : 7 + n + m].decode()
        body = p[7 + n + m :]
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=HTTP_TIMEOUT_S)
        try:
            conn.request(method, path, body=body or None, headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            status, data = r.status, r.read()
        except (OSError, http.client.HTTPException):
            status, data = 0, b""
        finally:
            conn.close()
        if keep != 0xFFFF and data[:1] == b"{":
            try:
                doc = json.loads(data)
                if isinstance(doc.get("requests"), list):
                    doc["requests"] = doc["requests"][-keep:] if keep else []
                    data = json.dumps(doc, ensure_ascii=False).encode()
            except ValueError:
                pass
        return struct.pack("<H", status) + data

    def _fault(self, p):
        with self.wlock:
            self.fault = p[0]
        return b""


def listen_unix(path):
    """A listening Unix socket at path (replacing a stale one)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(1)
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--link", required=True, help="Unix socket for the board's UART1")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    log = (lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    ls = listen_unix(args.link)
    print("waiting for qemu:\n  -chardev socket,id=link,path=%s -serial stdio -serial chardev:link" % args.link,
          file=sys.stderr, flush=True)
    link, _ = ls.accept()
    bridge = SerialBridge(link, log).start()
    log("bridge: qemu attached")
    try:
        while not bridge.closed:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        bridge.close()
        try:
            os.unlink(args.link)
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
