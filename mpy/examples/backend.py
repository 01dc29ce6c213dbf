#!/usr/bin/env python3
"""backend.py — a local stand-in for the TESAIoT backend (spec §6).

Plain CPython 3 standard library. Listens on loopback and speaks the bentoclaw
wire protocol:

    POST <any path not starting with /_>
    Content-Type: application/json
    Authorization: Bearer <api_key>
    {"prompt": "...", "context": "..."}

    -> 200, body = the reply text (UTF-8)

Tool requests (docs/BACKEND.md): a reply body that is exactly
    {"tool_call": {"name": "<tool>", "arg": "<text>" | null}}
asks the device to run a tool; the device answers with a second POST whose
body adds
    "tool_result": {"name": "...", "status": "ok"|"refused"|"error"|"unknown",
                    "result": "..."}
(checked here: a malformed "tool_result" is a 400). In the answering modes
(ok, slow, tools) a request carrying a tool_result, with no fixed or queued
reply set, is answered with a sentence about it, e.g.
    "Tool echo ok: hello"        (see tool_summary()).

Summary requests (docs/BACKEND.md §4): a body
    {"summarize": "<role: text lines>", "max_bytes": 255}
(no "prompt"/"context") asks for a summary of turns the device is about to
fold; in the answering modes it is answered with summarize() (deterministic:
the user lines kept, cut to max_bytes) unless "summary" is set through
/_control. Fault modes apply to it like to any request; it never takes a
queued or fixed reply.

Token counts (docs/BACKEND.md §3): every 200 answer of the protocol carries
    X-Tokens-In: <ceil(request body bytes / 4)>
    X-Tokens-Out: <ceil(reply bytes / 4)>
unless /_control {"tokens": false} turned them off.

Checks made on every request (a failing check answers with the status shown):
    Content-Type is application/json ............. 415
    Authorization is "Bearer <--api-key>" ........ 401
    body is UTF-8 JSON object with string "prompt"
    and string "context" ......................... 400
    body at most 64 KiB .......................... 413

The reply in mode "ok" is deterministic: a question like "what is my name?"
(or "ชื่ออะไร") is answered from the context lines "- key: value"; anything
else is echoed back with the number of context bytes and lines received.

Fault modes (--mode, or at run time through /_control):
    ok              normal answer
    statusNNN       answer with HTTP status NNN (e.g. status500, status404)
    truncated       Content-Length: 1000, send 16 bytes, close
    huge            200 with a 1 MiB body (Thai "ก" repeated: 3-byte chars)
    garbage         bytes that are not HTTP, then close
    badutf8         200 whose body is not valid UTF-8
    hang            never answer; hold the connection until the client gives
                    up (bounded by --hang-max seconds)
    slow            answer normally after --delay-ms
    close_mid       close in the middle of the response headers
    drop            close the connection without sending anything
    header_flood    200 with 5000 response headers before the body
    tools           like ok, but a prompt "run <tool> [<arg>]" is answered
                    with a tool request for that tool (the demo's model)

Control and inspection (never subject to faults, no auth needed):
    POST /_control  {"mode": "status500"}             set the mode from now on
                    {"mode": "hang", "count": 2}      next 2 requests only, then
                                                      back to the standing mode
                    {"reply": "fixed text"}           fixed reply in mode ok
                                                      (null restores the default)
                    {"delay_ms": 500}                 delay for mode slow
                    {"summary": "text"}               fixed answer to summary
                                                      requests (null: summarize())
                    {"tokens": false}                 no X-Tokens-* headers
                    {"token_headers": {"X-Tokens-In": "abc"}}
                                                      send these token header
                                                      values verbatim instead
                                                      (null: the computed ones)
                    {"replies": ["a", "b"]}           queued replies in the
                                                      answering modes: one per
                                                      request, before "reply"
                                                      and the normal answer
                                                      ([] or null: empty queue)
                    -> JSON of the resulting settings
    GET  /_last     JSON of the last protocol request: method, path, headers,
                    body (text), body_json (parsed or null), valid (bool),
                    auth_ok (bool), status (what was answered or "fault:<mode>")
    GET  /_log      the last 32 such records, oldest first, and "total"
    POST /_reset    clear the log, mode back to the start-up mode

On start the first line on stdout is "PORT <n>". The server exits on SIGTERM,
SIGINT, and on stdin EOF when --stdin-exit is given.
"""

import argparse
import json
import os
import re
import select
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 64 * 1024
LOG_KEEP = 32
HUGE_BYTES = 1024 * 1024
FLOOD_HEADERS = 5000
SOCKET_TIMEOUT_S = 15

MODES_FIXED = (
    "ok",
    "truncated",
    "huge",
    "garbage",
    "badutf8",
    "hang",
    "slow",
    "close_mid",
    "drop",
    "header_flood",
    "tools",
)

ANSWERING_MODES = ("ok", "slow", "tools")
TOOL_STATUSES = ("ok", "refused", "error", "unknown")


def valid_mode(mode):
    if mode in MODES_FIXED:
        return True
    m = re.fullmatch(r"status([1-5][0-9][0-9])", mode or "")
    return bool(m)


class State:
    """Everything shared between handler threads, behind one lock."""

    def __init__(self, args):
        self.lock = threading.Lock()
        self.args = args
        self.start_mode = args.mode
        self.mode = args.mode
        self.once_mode = None
        self.once_left = 0
        self.reply = None
        self.replies = []
        self.delay_ms = args.delay_ms
        self.summary = None
        self.tokens = True
        self.token_headers = None
        self.log = []
        self.total = 0

    def take_mode(self):
        with self.lock:
            if self.once_left > 0:
                self.once_left -= 1
                mode = self.once_mode
                if self.once_left == 0:
                    self.once_mode = None
                return mode
            return self.mode

    def settings(self):
        return {
            "mode": self.mode,
            "once_mode": self.once_mode,
            "once_left": self.once_left,
            "reply": self.reply,
            "replies": list(self.replies),
            "delay_ms": self.delay_ms,
            "summary": self.summary,
            "tokens": self.tokens,
            "token_headers": self.token_headers,
        }

    def record(self, rec):
        with self.lock:
            self.total += 1
            self.log.append(rec)
            del self.log[:-LOG_KEEP]

    def reset(self):
        with self.lock:
            self.log = []
            self.total = 0
            self.mode = self.start_mode
            self.once_mode = None
            self.once_left = 0
            self.reply = None
            self.replies = []
            self.delay_ms = self.args.delay_ms
            self.summary = None
            self.tokens = True
            self.token_headers = None


CTX_LINE = re.compile(r"^\s*-\s*([^:\n]{1,64}?)\s*:\s*(.*?)\s*$")


def context_memory(context):
    """The "- key: value" lines of the context, as a dict (first one wins)."""
    mem = {}
    for line in context.splitlines()[:512]:
        m = CTX_LINE.match(line)
        if m and m.group(1).lower() not in mem:
            mem[m.group(1).lower()] = m.group(2)
    return mem


def answer(prompt, context):
    """The deterministic reply of mode ok."""
    mem = context_memory(context)
    low = prompt.lower()
    key = None
    m = re.search(r"what(?:'s| is) my ([\w\- ]{1,31}?)\s*\??\s*$", low)
    if m:
        key = m.group(1).strip()
    elif "ชื่อ" in prompt:
        key = "name"
    if key is not None:
        if key in mem:
            return "Your %s is %s." % (key, mem[key])
        return "I don't know your %s yet." % key
    lines = context.count("\n") + (1 if context and not context.endswith("\n") else 0)
    return "Echo: %s (context: %d bytes, %d lines)" % (
        prompt,
        len(context.encode("utf-8")),
        lines,
    )


def summarize(lines, max_bytes=255):
    """The deterministic summary of mode ok: "Earlier: " and the text of the
    user lines (and of an earlier summary) joined by "; ", cut to max_bytes
    on a character boundary."""
    parts = []
    for line in lines.splitlines():
        role, _, text = line.partition(": ")
        if role in ("user", "summary") and text:
            parts.append(text[len("Earlier: "):] if text.startswith("Earlier: ") else text)
    out = ("Earlier: " + "; ".join(parts)).encode("utf-8")[:max(0, max_bytes)]
    return out.decode("utf-8", "ignore")


RUN_TOOL = re.compile(r"^\s*run\s+(\S{1,64})(?:\s+(.*?))?\s*$", re.IGNORECASE | re.DOTALL)


def tool_result_problem(tr):
    """None when "tool_result" has the documented shape, else what is wrong."""
    if not isinstance(tr, dict):
        return '"tool_result" is not an object'
    if set(tr) != {"name", "status", "result"}:
        return '"tool_result" must have exactly name, status, result'
    if not isinstance(tr["name"], str) or not isinstance(tr["result"], str):
        return '"tool_result" name and result must be strings'
    if tr["status"] not in TOOL_STATUSES:
        return '"tool_result" status must be one of %s' % ", ".join(TOOL_STATUSES)
    return None


def tool_summary(tr):
    """The answer to a request that carries a tool result."""
    return "Tool %s %s: %s" % (tr["name"], tr["status"], tr["result"])


def answer_tools(prompt, context):
    """Mode tools: "run <tool> [<arg>]" becomes a tool request."""
    m = RUN_TOOL.match(prompt)
    if m:
        return json.dumps({"tool_call": {"name": m.group(1), "arg": m.group(2)}},
                          ensure_ascii=False)
    return answer(prompt, context)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "bentoclaw-backend/1"
    sys_version = ""

    # --- plumbing -------------------------------------------------------------
    def setup(self):
        super().setup()
        self.connection.settimeout(SOCKET_TIMEOUT_S)

    def log_message(self, fmt, *args):
        if not self.server.state.args.quiet:
            sys.stderr.write("backend: %s %s\n" % (self.address_string(), fmt % args))

    def read_body(self):
        """Body as bytes, or an int status on error. Bounded by MAX_BODY."""
        te = self.headers.get("Transfer-Encoding", "").lower()
        if te == "chunked":
            out = bytearray()
            for _ in range(4096):
                line = self.rfile.readline(64)
                try:
                    size = int(line.split(b";")[0].strip(), 16)
                except ValueError:
                    return 400
                if size == 0:
                    for _ in range(64):  # trailers
                        if self.rfile.readline(1024) in (b"\r\n", b"\n", b""):
                            break
                    return bytes(out)
                if len(out) + size > MAX_BODY:
                    return 413
                out += self.rfile.read(size)
                self.rfile.readline(8)
            return 400
        length = self.headers.get("Content-Length")
        if length is None:
            return 411
        try:
            n = int(length)
        except ValueError:
            return 400
        if n < 0:
            return 400
        if n > MAX_BODY:
            return 413
        data = self.rfile.read(n)
        if len(data) != n:
            return 400
        return data

    def send_text(self, status, text, ctype="text/plain; charset=utf-8"):
        data = text.encode("utf-8") if isinstance(text, str) else text
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        self.close_connection = True

    def send_json(self, status, obj):
        self.send_text(status, json.dumps(obj, ensure_ascii=False), "application/json")

    def raw(self, data):
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            pass
        self.close_connection = True

    # --- control endpoints ---------------------------------------------------
    def do_GET(self):
        st = self.server.state
        if self.path == "/_last":
            with st.lock:
                self.send_json(200, st.log[-1] if st.log else None)
        elif self.path == "/_log":
            with st.lock:
                self.send_json(200, {"total": st.total, "requests": list(st.log)})
        elif self.path == "/_settings":
            with st.lock:
                self.send_json(200, st.settings())
        else:
            self.send_text(405, "POST only\n")

    def control(self):
        st = self.server.state
        body = self.read_body()
        if isinstance(body, int):
            return self.send_text(body, "bad control request\n")
        if self.path == "/_reset":
            st.reset()
            with st.lock:
                return self.send_json(200, st.settings())
        try:
            req = json.loads(body.decode("utf-8") or "{}")
            if not isinstance(req, dict):
                raise ValueError("not an object")
        except ValueError as e:
            return self.send_text(400, "bad control JSON: %s\n" % e)
        with st.lock:
            if "mode" in req:
                mode = req["mode"]
                if not isinstance(mode, str) or not valid_mode(mode):
                    return self.send_text(400, "unknown mode %r\n" % (mode,))
                count = req.get("count")
                if count is None:
                    st.mode = mode
                    st.once_mode, st.once_left = None, 0
                else:
                    if not isinstance(count, int) or count < 0:
                        return self.send_text(400, "count must be an int >= 0\n")
                    st.once_mode, st.once_left = mode, count
            if "reply" in req:
                if req["reply"] is not None and not isinstance(req["reply"], str):
                    return self.send_text(400, "reply must be a string or null\n")
                st.reply = req["reply"]
            if "replies" in req:
                q = req["replies"]
                if q is None:
                    q = []
                if not isinstance(q, list) or not all(isinstance(x, str) for x in q):
                    return self.send_text(400, "replies must be a list of strings or null\n")
                st.replies = list(q)
            if "summary" in req:
                if req["summary"] is not None and not isinstance(req["summary"], str):
                    return self.send_text(400, "summary must be a string or null\n")
                st.summary = req["summary"]
            if "token_headers" in req:
                th = req["token_headers"]
                if th is not None and not (isinstance(th, dict) and all(
                        isinstance(k, str) and isinstance(v, str) for k, v in th.items())):
                    return self.send_text(400, "token_headers must map str to str, or null\n")
                st.token_headers = th
            if "tokens" in req:
                if not isinstance(req["tokens"], bool):
                    return self.send_text(400, "tokens must be a bool\n")
                st.tokens = req["tokens"]
            if "delay_ms" in req:
                if not isinstance(req["delay_ms"], int) or not 0 <= req["delay_ms"] <= 600000:
                    return self.send_text(400, "delay_ms must be 0..600000\n")
                st.delay_ms = req["delay_ms"]
            settings = st.settings()
        self.send_json(200, settings)

    # --- the protocol ----------------------------------------------------------
    def do_POST(self):
        if self.path in ("/_control", "/_reset"):
            return self.control()
        st = self.server.state
        rec = {
            "time": time.time(),
            "method": "POST",
            "path": self.path,
            "headers": {k: v for k, v in self.headers.items()},
            "header_list": [[k, v] for k, v in self.headers.items()],
            "body": None,
            "body_json": None,
            "valid": False,
            "auth_ok": False,
            "status": None,
        }
        body = self.read_body()
        if isinstance(body, int):
            rec["status"] = body
            st.record(rec)
            return self.send_text(body, "bad request body\n")
        rec["body"] = body.decode("utf-8", "replace")
        rec["body_bytes"] = len(body)

        ctype = self.headers.get("Content-Type", "")
        auth = self.headers.get("Authorization", "")
        rec["auth_ok"] = auth == "Bearer " + st.args.api_key
        status, problem, req = 200, None, None
        try:
            text = body.decode("utf-8")
            req = json.loads(text)
            if not isinstance(req, dict):
                problem = "body is not a JSON object"
            elif "summarize" in req:
                if not isinstance(req["summarize"], str):
                    problem = '"summarize" must be a string'
                elif set(req) - {"summarize", "max_bytes"}:
                    problem = 'a summary request has only "summarize" and "max_bytes"'
                elif not isinstance(req.get("max_bytes", 255), int):
                    problem = '"max_bytes" must be an int'
                else:
                    rec["summarize"] = req["summarize"]
            elif not isinstance(req.get("prompt"), str):
                problem = 'no string "prompt"'
            elif not isinstance(req.get("context"), str):
                problem = 'no string "context"'
            elif "tool_result" in req:
                problem = tool_result_problem(req["tool_result"])
                rec["tool_result"] = req["tool_result"]
            rec["body_json"] = req
        except UnicodeDecodeError:
            problem = "body is not UTF-8"
        except ValueError as e:
            problem = "invalid JSON: %s" % e
        rec["valid"] = problem is None
        if ctype.split(";")[0].strip().lower() != "application/json":
            status, problem = 415, "Content-Type must be application/json"
        elif not rec["auth_ok"]:
            status, problem = 401, "bad or missing bearer key"
        elif problem is not None:
            status = 400

        if status != 200:
            rec["status"] = status
            rec["problem"] = problem
            st.record(rec)
            return self.send_text(status, problem + "\n")

        mode = st.take_mode()
        rec["status"] = 200 if mode in ANSWERING_MODES else "fault:" + mode
        st.record(rec)
        self.body_bytes = len(body)
        self.respond(mode, req)

    def send_reply(self, text):
        """A 200 answer of the protocol, with the token counts."""
        data = text.encode("utf-8") if isinstance(text, str) else text
        st = self.server.state
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        if st.token_headers is not None:
            for k, v in st.token_headers.items():
                self.send_header(k, v)
        elif st.tokens:
            self.send_header("X-Tokens-In", str((self.body_bytes + 3) // 4))
            self.send_header("X-Tokens-Out", str((len(data) + 3) // 4))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        self.close_connection = True

    def respond(self, mode, req):
        st = self.server.state
        if mode in ANSWERING_MODES:
            if mode == "slow":
                time.sleep(min(st.delay_ms, 600000) / 1000.0)
            if "summarize" in req:
                with st.lock:
                    fixed = st.summary
                if fixed is None:
                    fixed = summarize(req["summarize"], req.get("max_bytes", 255))
                return self.send_reply(fixed)
            with st.lock:
                fixed = st.replies.pop(0) if st.replies else st.reply
            if fixed is not None:
                text = fixed
            elif "tool_result" in req:
                text = tool_summary(req["tool_result"])
            elif mode == "tools":
                text = answer_tools(req["prompt"], req["context"])
            else:
                text = answer(req["prompt"], req["context"])
            return self.send_reply(text)
        m = re.fullmatch(r"status([0-9]{3})", mode)
        if m:
            code = int(m.group(1))
            return self.send_text(code, "backend says %d\n" % code)
        if mode == "truncated":
            return self.raw(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n"
                b"Content-Length: 1000\r\nConnection: close\r\n\r\nonly sixteen b.."
            )
        if mode == "huge":
            unit = "ก".encode("utf-8")
            body = unit * (HUGE_BYTES // len(unit))
            return self.send_text(200, body)
        if mode == "garbage":
            junk = bytes((i * 151 + 7) & 0xFF for i in range(512))
            return self.raw(b"\x00\xffSSH-2.0-not-http\r\n" + junk * 4)
        if mode == "badutf8":
            return self.send_text(200, b"ok \xff\xfe \xc3\x28 \xe0\xb8 end")
        if mode == "close_mid":
            return self.raw(b"HTTP/1.1 200 OK\r\nContent-Type: text/pla")
        if mode == "drop":
            self.close_connection = True
            return None
        if mode == "header_flood":
            body = b"flooded"
            parts = [b"HTTP/1.1 200 OK\r\n"]
            for i in range(FLOOD_HEADERS):
                parts.append(b"X-Flood-%d: %s\r\n" % (i, b"v" * 40))
            parts.append(b"Content-Type: text/plain\r\nContent-Length: %d\r\n" % len(body))
            parts.append(b"Connection: close\r\n\r\n" + body)
            return self.raw(b"".join(parts))
        if mode == "hang":
            return self.hang()
        return self.send_text(500, "unknown mode\n")

    def hang(self):
        """Say nothing until the client closes (EOF) or --hang-max passes."""
        deadline = time.monotonic() + self.server.state.args.hang_max
        sock = self.connection
        while time.monotonic() < deadline and not self.server.stopping.is_set():
            try:
                r, _, _ = select.select([sock], [], [], 0.2)
                if r and not sock.recv(4096):
                    break
            except OSError:
                break
        self.close_connection = True


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 = pick a free port")
    ap.add_argument("--api-key", default="demo-key")
    ap.add_argument("--mode", default="ok", help="start-up mode (see module doc)")
    ap.add_argument("--delay-ms", type=int, default=2000, help="delay of mode slow")
    ap.add_argument("--hang-max", type=float, default=300.0,
                    help="seconds mode hang holds a connection at most")
    ap.add_argument("--stdin-exit", action="store_true", help="exit on stdin EOF")
    ap.add_argument("--quiet", action="store_true", help="no per-request log on stderr")
    args = ap.parse_args()
    if not valid_mode(args.mode):
        ap.error("unknown mode %r" % args.mode)

    server = Server((args.host, args.port), Handler)
    server.state = State(args)
    server.stopping = threading.Event()
    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, on_signal)

    if args.stdin_exit:
        def watch_stdin():
            # os.read on the raw descriptor: a daemon thread blocked inside the
            # buffered sys.stdin would abort the interpreter at exit.
            try:
                while os.read(0, 4096):
                    pass
            except (OSError, ValueError):
                pass
            stop.set()

        threading.Thread(target=watch_stdin, daemon=True).start()

    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                         daemon=True)
    t.start()
    print("PORT %d" % server.server_address[1], flush=True)
    while not stop.wait(0.5):
        pass
    server.stopping.set()
    server.shutdown()
    server.server_close()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(0)
