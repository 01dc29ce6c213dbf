#!/usr/bin/env python3
"""backend.py — a local stand-in for the TESAIoT backend (spec §6).

Plain CPython 3 standard library. Listens on loopback and speaks the bentoclaw
wire protocol:

    POST /ai/v1/chat          (the TESAIoT APISIX gateway's chat route)
    Content-Type: application/json
    apikey: <api_key>         (APISIX key-auth, as the device's transport sends it)
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

Model bridge (docs/BACKEND.md §6): with --openai-base-url URL --model NAME the
answering modes forward each request to an OpenAI-compatible chat-completions
endpoint (llama-server, Ollama, vLLM, hosted APIs) through the `openai`
package, imported only then: the context goes into the system message, the
prompt is the user message, the request's "tools" [{"name", "risk"}] (or the
--tool NAME:RISK list) become function tools, the model's first tool call
becomes a tool request, a tool_result becomes the assistant's tool call and a
tool message, usage becomes the X-Tokens-* headers, and a summary request a
completion cut to max_bytes. An endpoint that cannot be reached or fails is a
502 to the device, no answer within --openai-timeout a 504. With the bridge a
request whose "tools" is malformed is a 400. Fixed and queued replies, the
fixed summary and the fault modes take precedence over the model as they do
over the rules.

Checks made on every request (a failing check answers with the status shown):
    the path is /ai/v1/chat ...................... 404
    Content-Type is application/json ............. 415
    the apikey header is <--api-key> ............. 401
    body is UTF-8 JSON object with string "prompt"
    and string "context" ......................... 400
    body at most 64 KiB .......................... 413

The reply in mode "ok" is deterministic: a question like "what is my name?"
(or "ชื่ออะไร") is answered from the context lines "- key: value"; anything
else is echoed back with the number of context bytes and lines received.
Every answer of the rules fits the device's REPLY_MAX (4096 bytes): a long
echoed prompt or tool result is cut on a character boundary, "…" marking
the cut, and a long tool request's argument is cut to fit. (Fault modes,
and replies fixed or queued through /_control, are sent as given.)

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
import hashlib
import json
import os
import re
import select
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# The one route the device posts to (the vendor binding's, BENTOCLAW_HTTP_PATH).
CHAT_PATH = "/ai/v1/chat"
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
    tail = " (context: %d bytes, %d lines)" % (len(context.encode("utf-8")), lines)
    return within_reply_max("Echo: ", prompt, tail)


def within_reply_max(head, text, tail):
    """head + text + tail, at most REPLY_MAX bytes (the device's limit: a
    longer 200 body fails there): when it would be longer, text is cut on a
    character boundary and "…" marks the cut."""
    whole = head + text + tail
    if len(whole.encode("utf-8", "replace")) <= REPLY_MAX:
        return whole
    room = REPLY_MAX - len((head + "\u2026" + tail).encode("utf-8", "replace"))
    return head + cut_utf8(text, room) + "\u2026" + tail


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
    return within_reply_max("Tool %s %s: " % (tr["name"], tr["status"]), tr["result"], "")


def answer_tools(prompt, context):
    """Mode tools: "run <tool> [<arg>]" becomes a tool request."""
    m = RUN_TOOL.match(prompt)
    if m:
        text = json.dumps({"tool_call": {"name": m.group(1), "arg": m.group(2)}},
                          ensure_ascii=False)
        if len(text.encode("utf-8", "replace")) > REPLY_MAX:
            # Still a tool request, its argument cut to fit.
            text = tool_call_reply(m.group(1), m.group(2))
        return text
    return answer(prompt, context)


# --- the model bridge ----------------------------------------------------------
#
# With --openai-base-url the answering modes forward each request to an
# OpenAI-compatible chat-completions endpoint (llama.cpp's llama-server,
# Ollama, vLLM, hosted APIs) through the `openai` package, imported only
# then (class Bridge). The functions before it are the mapping, without I/O.

REPLY_MAX = 4096  # the device's REPLY_MAX: a longer 200 body is a failed request
BRIDGE_TIMEOUT_S = 4.5  # under the device's HTTP_TIMEOUT_MS (5000) by default
BRIDGE_MAX_TOKENS = 512
BRIDGE_TOOLS_MAX = 64
CALL_MEMO_MAX = 64
TOKENS_MAX = 4294967295  # the largest count the device reads
TOOL_NAME_OK = re.compile(r"[A-Za-z0-9_-]{1,64}")  # names hosted APIs accept
THINK_BLOCK = re.compile(r"\A\s*<think>.*?</think>", re.DOTALL)

RISK_TEXT = {
    0: "Risk 0 (low): the device runs it when you call it.",
    1: "Risk 1 (medium): the device runs it when you call it.",
    2: ("Risk 2 (high): the device refuses it when the backend calls it (it needs "
        "a USB connection), so tell the user that instead of calling it."),
}

DEFAULT_SYSTEM_PROMPT = (
    "You are the assistant of a small embedded device (bentoclaw). Answer the "
    "user's last message briefly, in plain text, in the user's language."
)

CONTEXT_INTRO = (
    "The device's context: what it remembers (\"- key: value\" lines under "
    "\"Memory:\") and the recent conversation (\"role: text\" lines under "
    "\"Conversation:\", oldest first; \"tool:\" lines are tool results, a "
    "\"summary:\" line sums up older turns)."
)

SUMMARY_PROMPT = (
    "You write the running summary of a conversation for a small device's "
    "memory. The user message holds the turns to fold, one \"role: text\" line "
    "each, oldest first; a \"summary:\" line is the previous summary, which "
    "yours replaces, so keep what it says. Keep names, facts, numbers, "
    "decisions and the user's preferences; leave out small talk. Reply with "
    "the summary only, in plain text, at most %d bytes of UTF-8."
)


class BridgeError(Exception):
    """A request the bridge could not answer; `status` is the device's answer."""

    def __init__(self, status, reason):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def cut_utf8(text, max_bytes):
    """text as valid UTF-8 (a lone surrogate becomes "?"), cut to at most
    max_bytes bytes on a character boundary."""
    return text.encode("utf-8", "replace")[:max(0, max_bytes)].decode("utf-8", "ignore")


def parse_tool_spec(spec):
    """--tool NAME[:RISK] -> {"name", "risk"} (risk 0 when left out)."""
    name, sep, risk = spec.rpartition(":")
    if not sep:
        name, risk = spec, "0"
    if not name or any(c.isspace() for c in name):
        raise ValueError("a tool name must be non-empty, without blanks: %r" % spec)
    if risk not in ("0", "1", "2"):
        raise ValueError("a tool risk must be 0, 1 or 2: %r" % spec)
    return {"name": name, "risk": int(risk)}


def tools_problem(tools):
    """None when a request's "tools" has the documented shape, else what is wrong."""
    if not isinstance(tools, list):
        return '"tools" must be a list'
    if len(tools) > BRIDGE_TOOLS_MAX:
        return '"tools" has more than %d entries' % BRIDGE_TOOLS_MAX
    for t in tools:
        if not (isinstance(t, dict) and isinstance(t.get("name"), str)
                and type(t.get("risk")) is int and t["risk"] in RISK_TEXT):
            return '"tools" entries must be objects with a string "name" and a "risk" of 0, 1 or 2'
    return None


def chat_tools(tools):
    """The device's registry as the request's function tools, and the names
    left out (a name hosted APIs would refuse, or one given twice)."""
    out, skipped, seen = [], [], set()
    for t in tools:
        name = t["name"]
        if not TOOL_NAME_OK.fullmatch(name) or name in seen:
            skipped.append(name)
            continue
        seen.add(name)
        out.append({
            "type": "function",
            "function": {
                "name": name,
                "description": "Device tool %s. %s" % (name, RISK_TEXT[t["risk"]]),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "arg": {
                            "type": "string",
                            "description": "The tool's argument as text; leave it out "
                                           "when the tool takes none.",
                        },
                    },
                    "required": [],
                },
            },
        })
    return out, skipped


def call_id(prompt, name):
    """The id of the tool call a follow-up answers: the same for the same
    prompt and tool, so a follow-up needs no state to name it."""
    digest = hashlib.sha256(("%s\0%s" % (prompt, name)).encode("utf-8", "replace"))
    return "call_" + digest.hexdigest()[:24]


def call_arguments(arg):
    """The arguments JSON of a call whose argument the device got as `arg`."""
    return "{}" if arg is None else json.dumps({"arg": arg}, ensure_ascii=False)


def tool_message(tr):
    """The tool message's text for a device tool_result."""
    status, result = tr["status"], tr["result"]
    if status == "ok":
        return result
    head = "unknown tool" if status == "unknown" else status
    return "%s: %s" % (head, result) if result else head


def chat_messages(req, system_prompt, sent_arg=None):
    """The chat messages for a device request. The context goes into the
    system message as it came (a chat template may insist that user and
    assistant alternate, which the device's turns need not do); the prompt
    is the user message. A follow-up adds the assistant's tool call and the
    tool's result. `sent_arg(prompt, name)` -> (found, arg) recalls the
    argument the device was given."""
    system = system_prompt
    if req["context"]:
        system += "\n\n" + CONTEXT_INTRO + "\n\n" + req["context"]
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": req["prompt"]},
    ]
    tr = req.get("tool_result")
    if tr is not None:
        found, arg = sent_arg(req["prompt"], tr["name"]) if sent_arg else (False, None)
        cid = call_id(req["prompt"], tr["name"])
        messages.append({
            "role": "assistant",
            "content": None,
            "tool_calls": [{
                "id": cid,
                "type": "function",
                "function": {"name": tr["name"], "arguments": call_arguments(arg)},
            }],
        })
        messages.append({"role": "tool", "tool_call_id": cid, "content": tool_message(tr)})
    return messages


def summary_messages(lines, max_bytes):
    return [
        {"role": "system", "content": SUMMARY_PROMPT % max_bytes},
        {"role": "user", "content": lines},
    ]


def arg_from_arguments(arguments):
    """A tool call's arguments (a JSON text, as the API sends them) -> the
    device's `arg` (str or None):
        '{"arg": "hi"}' -> "hi"        '{}', '', 'null', '{"arg": null}' -> None
        '{"arg": 5}' -> "5"            '{"arg": {"a": 1}}' -> '{"a": 1}' (JSON)
        '{"text": "hi"}' -> "hi"       (one member under another name)
        '{"a": 1, "b": 2}' -> that JSON, compact
        '"hi"' -> "hi"                 (a bare JSON string)
        'hi', '{"arg": "hi' -> the text as it came (not JSON: given as is)
    An object instead of a text (a server that sends one) is taken as parsed."""
    if arguments is None:
        return None
    if isinstance(arguments, str):
        if not arguments.strip():
            return None
        try:
            value = json.loads(arguments)
        except ValueError:
            return arguments.strip()
    else:
        value = arguments
    if isinstance(value, dict):
        if "arg" in value:
            value = value["arg"]
        elif len(value) == 1:
            value = next(iter(value.values()))
        elif not value:
            return None
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def tool_call_reply(name, arg):
    """The device's tool request, at most REPLY_MAX bytes (a long argument is
    cut on a character boundary to fit)."""
    name = cut_utf8(name, REPLY_MAX)
    if arg is not None:
        arg = cut_utf8(arg, REPLY_MAX)

    def render():
        return json.dumps({"tool_call": {"name": name, "arg": arg}},
                          ensure_ascii=False, separators=(",", ":"))

    text = render()
    if arg and len(text.encode("utf-8")) > REPLY_MAX:
        # The longest prefix that fits once escaped (arg is surrogate-free
        # here, so any prefix is whole characters).
        full, lo, hi = arg, 0, len(arg)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            arg = full[:mid]
            if len(render().encode("utf-8")) <= REPLY_MAX:
                lo = mid
            else:
                hi = mid - 1
        arg = full[:lo]
        text = render()
    return text


def field(obj, name):
    """obj[name] or obj.name, None when absent: a response that the client
    could not validate comes back partly as plain dicts."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def token_count(value):
    return value if type(value) is int and 0 <= value <= TOKENS_MAX else None


def completion_parts(resp):
    """(message, tokens_in, tokens_out) of a chat completion; BridgeError
    (502) when it is not one."""
    if resp is None or isinstance(resp, (str, bytes)):
        raise BridgeError(502, "malformed response: not a chat completion")
    choices = field(resp, "choices")
    if not isinstance(choices, list) or not choices:
        raise BridgeError(502, "malformed response: no choices")
    message = field(choices[0], "message")
    if message is None:
        raise BridgeError(502, "malformed response: no message in the first choice")
    usage = field(resp, "usage")
    return message, token_count(field(usage, "prompt_tokens")), \
        token_count(field(usage, "completion_tokens"))


def first_tool_call(message):
    """(name, arguments) of the message's first tool call, or None."""
    calls = field(message, "tool_calls")
    if isinstance(calls, list) and calls:
        fn = field(calls[0], "function")
    else:
        fn = field(message, "function_call")  # the older single-call form
        if fn is None:
            return None
    name = field(fn, "name")
    if not isinstance(name, str) or not name:
        raise BridgeError(502, "malformed response: a tool call without a name")
    return name, field(fn, "arguments")


def message_text(message):
    """The message's text: a leading <think>…</think> block (reasoning
    models) and surrounding blanks dropped."""
    content = field(message, "content")
    if isinstance(content, list):  # content parts
        content = "".join(p for p in (field(x, "text") for x in content) if isinstance(p, str))
    if not isinstance(content, str):
        return ""
    return THINK_BLOCK.sub("", content, count=1).strip()


def error_detail(e):
    """The message of an endpoint's error answer, on one line (the client
    keeps the parsed body's "error" object in e.body)."""
    body = getattr(e, "body", None)
    text = field(body, "message") if isinstance(body, dict) else body
    if not isinstance(text, str) or not text.strip():
        text = str(e)
    return cut_utf8(" ".join(text.split()), 300)


class Bridge:
    """Answers device requests with an OpenAI-compatible chat-completions
    endpoint. Thread-safe: the handler threads share one instance."""

    def __init__(self, base_url, model, api_key, timeout=BRIDGE_TIMEOUT_S, retries=0,
                 max_tokens=BRIDGE_MAX_TOKENS, tools=(), system_prompt=DEFAULT_SYSTEM_PROMPT,
                 log=None):
        import openai  # here, not at the top: without the bridge no package is needed

        self.openai = openai
        self.base_url = base_url
        self.model = model
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.tools = list(tools)
        self.system_prompt = system_prompt
        self.log = log or (lambda text: None)
        self.client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout,
                                    max_retries=retries)
        self.lock = threading.Lock()
        self.sent = {}  # (prompt, tool name) -> the arg the device was given
        self.warned = set()

    def sent_arg(self, prompt, name):
        with self.lock:
            key = (prompt, name)
            return (key in self.sent), self.sent.get(key)

    def remember_call(self, prompt, name, arg):
        with self.lock:
            self.sent.pop((prompt, name), None)
            self.sent[(prompt, name)] = arg
            while len(self.sent) > CALL_MEMO_MAX:
                del self.sent[next(iter(self.sent))]

    def complete(self, params):
        """One chat completion, within self.timeout seconds in all (the
        client's own timeout bounds each connect and read; this bounds a
        server that keeps sending slowly)."""
        box = {}
        done = threading.Event()

        def run():
            try:
                box["resp"] = self.client.chat.completions.create(**params)
            except Exception as e:  # reported below, in the handler thread
                box["error"] = e
            finally:
                done.set()

        threading.Thread(target=run, daemon=True).start()
        if not done.wait(self.timeout):
            raise BridgeError(504, "no answer within %g s" % self.timeout)
        e = box.get("error")
        oa = self.openai
        if e is None:
            return box["resp"]
        if isinstance(e, oa.APITimeoutError):
            raise BridgeError(504, "no answer within %g s" % self.timeout)
        if isinstance(e, oa.APIConnectionError):
            cause = e.__cause__ or e.__context__
            raise BridgeError(502, "cannot reach %s: %s" % (
                self.base_url, cause if cause is not None else e))
        if isinstance(e, oa.APIStatusError):
            raise BridgeError(502, "the endpoint answered %d: %s" % (e.status_code, error_detail(e)))
        raise BridgeError(502, "malformed response: %s: %s" % (type(e).__name__, e))

    def answer(self, req):
        """A prompt request (with its tool_result, if any) -> (reply text,
        tokens in, tokens out). The reply is the model's text or, when the
        model calls a tool, the device's tool request for its first call."""
        registry = req["tools"] if "tools" in req else self.tools
        tools, skipped = chat_tools(registry)
        for name in skipped:
            if name not in self.warned:
                self.warned.add(name)
                self.log("tool %r not offered to the model (name not [A-Za-z0-9_-]{1,64}, "
                         "or given twice)" % name)
        params = {
            "model": self.model,
            "messages": chat_messages(req, self.system_prompt, self.sent_arg),
        }
        if tools:
            params["tools"] = tools
        if self.max_tokens:
            params["max_tokens"] = self.max_tokens
        message, tin, tout = completion_parts(self.complete(params))
        call = first_tool_call(message)
        if call is None:
            return cut_utf8(message_text(message), REPLY_MAX), tin, tout
        name, arguments = call
        arg = arg_from_arguments(arguments)
        reply = tool_call_reply(name, arg)
        self.remember_call(req["prompt"], name, json.loads(reply)["tool_call"]["arg"])
        return reply, tin, tout

    def summarize(self, lines, max_bytes):
        """A summary request -> (summary of at most max_bytes UTF-8 bytes,
        tokens in, tokens out)."""
        max_bytes = max(0, min(max_bytes, REPLY_MAX))
        if max_bytes == 0:
            return "", None, None
        params = {"model": self.model, "messages": summary_messages(lines, max_bytes)}
        if self.max_tokens:
            params["max_tokens"] = min(self.max_tokens, max(16, max_bytes))
        message, tin, tout = completion_parts(self.complete(params))
        text = message_text(message).split("\0", 1)[0]
        return cut_utf8(text, max_bytes).rstrip(), tin, tout


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
        rec["auth_ok"] = self.headers.get("apikey", "") == st.args.api_key
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
            if isinstance(req, dict) and "tools" in req:
                rec["tools"] = req["tools"]
                if problem is None and self.server.bridge is not None:
                    problem = tools_problem(req["tools"])
            rec["body_json"] = req
        except UnicodeDecodeError:
            problem = "body is not UTF-8"
        except ValueError as e:
            problem = "invalid JSON: %s" % e
        rec["valid"] = problem is None
        if self.path != CHAT_PATH:
            status, problem = 404, "no route: POST " + CHAT_PATH
        elif ctype.split(";")[0].strip().lower() != "application/json":
            status, problem = 415, "Content-Type must be application/json"
        elif not rec["auth_ok"]:
            status, problem = 401, "bad or missing apikey"
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
        self.rec = rec
        self.respond(mode, req)

    def send_reply(self, text, tokens=None):
        """A 200 answer of the protocol, with the token counts: computed from
        the bytes, or the model's (tokens_in, tokens_out) when given (a count
        that is None is left out)."""
        data = text.encode("utf-8") if isinstance(text, str) else text
        st = self.server.state
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        if st.token_headers is not None:
            for k, v in st.token_headers.items():
                self.send_header(k, v)
        elif st.tokens and tokens is not None:
            for name, count in zip(("X-Tokens-In", "X-Tokens-Out"), tokens):
                if count is not None:
                    self.send_header(name, str(count))
        elif st.tokens:
            self.send_header("X-Tokens-In", str((self.body_bytes + 3) // 4))
            self.send_header("X-Tokens-Out", str((len(data) + 3) // 4))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        self.close_connection = True

    def bridged(self, answer, *args):
        """Answers with the model (Bridge.answer or Bridge.summarize); a
        failure of the endpoint is a non-200 answer to the device."""
        st = self.server.state
        try:
            text, tokens_in, tokens_out = answer(*args)
        except Exception as e:  # a bug here must still answer the device
            status, reason = (e.status, "model endpoint: " + e.reason) if isinstance(
                e, BridgeError) else (500, "bridge error: %s: %s" % (type(e).__name__, e))
            with st.lock:
                self.rec["status"] = status
                self.rec["problem"] = reason
            sys.stderr.write("backend: %s -> %d\n" % (reason, status))
            return self.send_text(status, reason + "\n")
        return self.send_reply(text, (tokens_in, tokens_out))

    def respond(self, mode, req):
        st = self.server.state
        bridge = self.server.bridge
        if mode in ANSWERING_MODES:
            if mode == "slow":
                time.sleep(min(st.delay_ms, 600000) / 1000.0)
            if "summarize" in req:
                with st.lock:
                    fixed = st.summary
                if fixed is None and bridge is not None:
                    return self.bridged(bridge.summarize, req["summarize"],
                                        req.get("max_bytes", 255))
                if fixed is None:
                    fixed = summarize(req["summarize"], req.get("max_bytes", 255))
                return self.send_reply(fixed)
            with st.lock:
                fixed = st.replies.pop(0) if st.replies else st.reply
            if fixed is not None:
                text = fixed
            elif bridge is not None:
                return self.bridged(bridge.answer, req)
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
    bridge = None  # a Bridge when --openai-base-url is given


def make_bridge(ap, args):
    """The Bridge the options ask for, or None; exits with a message on a
    bad option or a missing openai package."""
    if args.openai_base_url is None:
        given = [o for o, v in (("--model", args.model),
                                ("--openai-api-key-env", args.openai_api_key_env),
                                ("--tool", args.tool or None)) if v is not None]
        if given:
            ap.error("%s needs --openai-base-url" % given[0])
        return None
    if not args.model:
        ap.error("--openai-base-url needs --model")
    if not args.openai_timeout > 0:
        ap.error("--openai-timeout must be > 0")
    if args.openai_retries < 0 or args.max_tokens < 0:
        ap.error("--openai-retries and --max-tokens must be >= 0")
    try:
        tools = [parse_tool_spec(t) for t in args.tool]
    except ValueError as e:
        ap.error("--tool: %s" % e)
    if args.openai_api_key_env is not None:
        key = os.environ.get(args.openai_api_key_env)
        if not key:
            ap.error("--openai-api-key-env: the environment variable %s is not set"
                     % args.openai_api_key_env)
    else:
        key = os.environ.get("OPENAI_API_KEY") or "no-key"
    try:
        bridge = Bridge(args.openai_base_url, args.model, key, timeout=args.openai_timeout,
                        retries=args.openai_retries, max_tokens=args.max_tokens,
                        tools=tools, system_prompt=args.system_prompt,
                        log=lambda text: sys.stderr.write("backend: %s\n" % text))
    except ImportError as e:
        sys.stderr.write("backend.py: --openai-base-url needs the Python package openai "
                         "(pip install openai): %s\n" % e)
        sys.exit(2)
    if not args.quiet:
        sys.stderr.write("backend: answering with model %s at %s\n"
                         % (args.model, args.openai_base_url))
    return bridge


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
    mb = ap.add_argument_group(
        "model bridge",
        "Answer with an OpenAI-compatible chat-completions endpoint instead of the "
        "rules (modes ok, slow, tools; the fault modes and /_control work as "
        "before). Needs the Python package openai (pip install openai).")
    mb.add_argument("--openai-base-url", metavar="URL",
                    help="the endpoint's base URL, e.g. http://127.0.0.1:8080/v1 "
                         "(llama-server), http://127.0.0.1:11434/v1 (Ollama), "
                         "http://127.0.0.1:8000/v1 (vLLM)")
    mb.add_argument("--model", metavar="NAME", help="the model name sent in each request")
    mb.add_argument("--openai-api-key-env", metavar="VAR",
                    help="environment variable holding the endpoint's API key "
                         "(default: OPENAI_API_KEY when set, else a placeholder "
                         "key that local servers ignore)")
    mb.add_argument("--openai-timeout", metavar="S", type=float, default=BRIDGE_TIMEOUT_S,
                    help="seconds one model request may take in all (default %(default)s, "
                         "under the device's HTTP_TIMEOUT_MS of 5 s)")
    mb.add_argument("--openai-retries", metavar="N", type=int, default=0,
                    help="retries of a failed model request within that time (default 0)")
    mb.add_argument("--max-tokens", metavar="N", type=int, default=BRIDGE_MAX_TOKENS,
                    help="max_tokens of each completion (default %(default)s; "
                         "0 sends none)")
    mb.add_argument("--tool", metavar="NAME[:RISK]", action="append", default=[],
                    help="a device tool offered to the model when the request "
                         "carries no \"tools\" (repeat it; risk 0..2, default 0)")
    mb.add_argument("--system-prompt", metavar="TEXT", default=DEFAULT_SYSTEM_PROMPT,
                    help="the instructions before the device's context")
    args = ap.parse_args()
    if not valid_mode(args.mode):
        ap.error("unknown mode %r" % args.mode)
    bridge = make_bridge(ap, args)

    server = Server((args.host, args.port), Handler)
    server.bridge = bridge
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
