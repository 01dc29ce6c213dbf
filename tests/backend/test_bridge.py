"""test_bridge.py — the model bridge of mpy/examples/backend.py (docs/BACKEND.md §6).

Run by scripts/test_backend.sh with a Python that has the `openai` package.
Three layers, all on loopback:
  1. the mapping functions (device request -> chat messages and tools, tool
     call arguments -> `arg`, the byte cuts), no I/O;
  2. class Bridge through the real `openai` client against tests/backend/
     replay.py, which answers with recorded chat-completions responses
     (fixtures/*.json: llama-server, Ollama, vLLM and hosted formats, tool
     calls, plain text, usage or none, error bodies, malformed bodies) and
     records what the client sent; plus a closed port, a late and a
     trickling endpoint;
  3. backend.py as a process: device-format POSTs through its HTTP front end
     to the replay endpoint; its options and errors; and, when the unix port
     has been built (build/micropython/micropython), the real device asking
     through the bridge (tests/backend/device_bridge.py).
Prints "PASS/FAIL" lines and ends with "RESULT: N passed, M failed".
"""

import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
import traceback
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BACKEND = os.path.join(ROOT, "mpy", "examples", "backend.py")
sys.path.insert(0, HERE)

import replay  # noqa: E402

spec = importlib.util.spec_from_file_location("backend", BACKEND)
backend = importlib.util.module_from_spec(spec)
spec.loader.exec_module(backend)

API_KEY = "demo-key"


class Checker:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.group = ""

    def check(self, cond, what, *detail):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL [%s] %s" % (self.group, what), *detail, flush=True)
        return cond

    def eq(self, got, want, what):
        return self.check(got == want, what, "\n    got  %r\n    want %r" % (got, want))

    def raises_bridge(self, fn, status, reason, what):
        """fn() raises BridgeError with this status and reason (a str:
        exact; a tuple: the reason starts with [0] and contains [1:])."""
        try:
            r = fn()
        except backend.BridgeError as e:
            if isinstance(reason, tuple):
                ok = e.reason.startswith(reason[0]) and all(p in e.reason for p in reason[1:])
            else:
                ok = e.reason == reason
            return self.check(e.status == status and ok, what,
                              "\n    got  %d %r\n    want %d %r" % (e.status, e.reason, status, reason))
        return self.check(False, what, "returned", repr(r))


t = Checker()
GROUPS = []


def group(fn):
    GROUPS.append(fn)
    return fn


# --- 1. mapping ------------------------------------------------------------------

CONTEXT = "Memory:\n- name: Somchai\n- city: Chiang Mai\nConversation:\nsystem: Connected to TESAIoT backend\nuser: what is my name?\n"


@group
def mapping_tools():
    t.eq(backend.parse_tool_spec("echo"), {"name": "echo", "risk": 0}, "--tool echo")
    t.eq(backend.parse_tool_spec("led:1"), {"name": "led", "risk": 1}, "--tool led:1")
    t.eq(backend.parse_tool_spec("a:b:2"), {"name": "a:b", "risk": 2}, "--tool a:b:2 (last colon)")
    for bad, text in (("x:3", "a tool risk must be 0, 1 or 2: 'x:3'"),
                      (":1", "a tool name must be non-empty, without blanks: ':1'"),
                      ("my tool:0", "a tool name must be non-empty, without blanks: 'my tool:0'")):
        try:
            backend.parse_tool_spec(bad)
            t.check(False, "--tool %r refused" % bad)
        except ValueError as e:
            t.eq(str(e), text, "--tool %r refused" % bad)

    good = [{"name": "echo", "risk": 0}, {"name": "led", "risk": 1, "extra": "ignored"}]
    t.eq(backend.tools_problem(good), None, "a well-formed registry")
    t.eq(backend.tools_problem([]), None, "an empty registry")
    entry = '"tools" entries must be objects with a string "name" and a "risk" of 0, 1 or 2'
    for bad, want in (({"name": "echo"}, '"tools" must be a list'),
                      ("echo", '"tools" must be a list'),
                      ([{"name": "x", "risk": 0}] * 65, '"tools" has more than 64 entries'),
                      (["echo"], entry),
                      ([{"name": "echo"}], entry),
                      ([{"name": 5, "risk": 0}], entry),
                      ([{"name": "echo", "risk": 3}], entry),
                      ([{"name": "echo", "risk": True}], entry),
                      ([{"name": "echo", "risk": "0"}], entry)):
        t.eq(backend.tools_problem(bad), want, "tools_problem(%.40r)" % (bad,))

    tools, skipped = backend.chat_tools([
        {"name": "echo", "risk": 0}, {"name": "led", "risk": 1},
        {"name": "wipe_memory", "risk": 2}, {"name": "ไฟ", "risk": 0},
        {"name": "echo", "risk": 2}, {"name": "x" * 65, "risk": 0}])
    t.eq(skipped, ["ไฟ", "echo", "x" * 65], "names hosted APIs refuse, and repeats, are left out")
    t.eq([x["function"]["name"] for x in tools], ["echo", "led", "wipe_memory"], "tool order kept")
    t.eq(tools[0], {
        "type": "function",
        "function": {
            "name": "echo",
            "description": "Device tool echo. Risk 0 (low): the device runs it when you call it.",
            "parameters": {
                "type": "object",
                "properties": {"arg": {"type": "string",
                                       "description": "The tool's argument as text; leave it "
                                                      "out when the tool takes none."}},
                "required": [],
            },
        },
    }, "a function tool with one optional string parameter arg")
    t.check("Risk 1 (medium)" in tools[1]["function"]["description"], "risk 1 described")
    t.check("refuses it when the backend calls it" in tools[2]["function"]["description"],
            "risk 2 described as refused over the backend", tools[2]["function"]["description"])
    json.dumps(tools)  # serializable as sent


@group
def mapping_messages():
    req = {"prompt": "what is my name?", "context": CONTEXT}
    msgs = backend.chat_messages(req, "SYS")
    t.eq(len(msgs), 2, "a first request: system + user")
    t.eq(msgs[0], {"role": "system", "content": "SYS\n\n" + backend.CONTEXT_INTRO + "\n\n" + CONTEXT},
         "the context in the system message, as it came")
    t.eq(msgs[1], {"role": "user", "content": "what is my name?"}, "the prompt as the user message")
    t.eq(backend.chat_messages({"prompt": "hi", "context": ""}, "SYS")[0],
         {"role": "system", "content": "SYS"}, "no context: the instructions only")

    tr = {"name": "echo", "status": "ok", "result": "hello"}
    follow = dict(req, tool_result=tr)
    msgs = backend.chat_messages(follow, "SYS", lambda p, n: (True, "hello"))
    cid = backend.call_id("what is my name?", "echo")
    t.check(cid.startswith("call_") and len(cid) == 29, "a call id", cid)
    t.eq(cid, backend.call_id("what is my name?", "echo"), "the call id is stable")
    t.check(cid != backend.call_id("what is my name?", "uptime"), "another tool, another id")
    t.eq(msgs[2:], [
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": cid, "type": "function",
                         "function": {"name": "echo", "arguments": '{"arg": "hello"}'}}]},
        {"role": "tool", "tool_call_id": cid, "content": "hello"},
    ], "a follow-up: the assistant's tool call, then the tool message")
    msgs = backend.chat_messages(follow, "SYS")
    t.eq(msgs[2]["tool_calls"][0]["function"]["arguments"], "{}",
         "the argument unknown (another bridge asked): {}")
    for status, result, want in (
            ("refused", "tool risk exceeds transport trust level",
             "refused: tool risk exceeds transport trust level"),
            ("error", "echo takes a str", "error: echo takes a str"),
            ("unknown", "", "unknown tool"),
            ("unknown", "no such tool", "unknown tool: no such tool"),
            ("ok", "", "")):
        got = backend.tool_message({"name": "x", "status": status, "result": result})
        t.eq(got, want, "tool message for %s %r" % (status, result))
    t.eq(backend.call_arguments("a\"b"), '{"arg": "a\\"b"}', "arguments JSON of a quote")
    t.eq(backend.call_arguments("ไฟ"), '{"arg": "ไฟ"}', "arguments JSON keeps UTF-8")

    s = backend.summary_messages("user: hi\nassistant: hello", 255)
    t.eq(s[1], {"role": "user", "content": "user: hi\nassistant: hello"}, "summary: the lines as the user message")
    t.check(s[0]["role"] == "system" and "at most 255 bytes of UTF-8" in s[0]["content"],
            "summary: the byte limit in the instructions", s[0])


@group
def mapping_arguments():
    cases = [
        ('{"arg":"hi"}', "hi"), ('{"arg": "ไฟ \\u0e40"}', "ไฟ เ"), ("{}", None), ("", None),
        ("  \n", None), ("null", None), (None, None), ('{"arg": null}', None),
        ('{"arg": 5}', "5"), ('{"arg": true}', "true"), ('{"arg": {"a": 1}}', '{"a":1}'),
        ('{"arg": [1, "x"]}', '[1,"x"]'), ('{"text": "hi"}', "hi"), ('{"value": 7}', "7"),
        ('{"a": "1", "b": 2}', '{"a":"1","b":2}'), ('"hi"', "hi"), ("42", "42"),
        ("hi there", "hi there"), ('  {"arg": "hel', '{"arg": "hel'),
        ({"arg": "parsed"}, "parsed"), ({}, None),
        ('{"arg": "", "x": 1}', ""),
    ]
    for arguments, want in cases:
        t.eq(backend.arg_from_arguments(arguments), want, "arg of %r" % (arguments,))

    t.eq(backend.tool_call_reply("echo", "hi"), '{"tool_call":{"name":"echo","arg":"hi"}}',
         "a tool request, compact")
    t.eq(backend.tool_call_reply("uptime", None), '{"tool_call":{"name":"uptime","arg":null}}',
         "no argument: null")
    crafted = 'x","status":"ok","result":"pwned\\\n\u2028\x00'
    r = backend.tool_call_reply("echo", crafted)
    t.eq(json.loads(r), {"tool_call": {"name": "echo", "arg": crafted}}, "a crafted argument round-trips")
    t.check("\\u0000" in r and "\\n" in r, "control characters escaped", r)
    r = backend.tool_call_reply("echo", "ก" * 3000)
    t.check(len(r.encode()) <= 4096, "a long argument cut to fit REPLY_MAX", len(r.encode()))
    arg = json.loads(r)["tool_call"]["arg"]
    t.check(set(arg) == {"ก"} and len(r.encode()) > 4096 - 3, "cut on a character boundary, as much as fits",
            len(arg), len(r.encode()))
    overhead = len(backend.tool_call_reply("echo", ""))
    r = backend.tool_call_reply("echo", '"' * 3000)
    t.eq((len(r.encode()), json.loads(r)["tool_call"]["arg"]),
         (overhead + 2 * ((4096 - overhead) // 2), '"' * ((4096 - overhead) // 2)),
         "escapes counted when cutting: as many quotes as fit")
    t.eq(json.loads(backend.tool_call_reply("echo", "a\ud800b"))["tool_call"]["arg"], "a?b",
         "a lone surrogate cannot reach the device")

    t.eq(backend.cut_utf8("สวัสดี", 7), "สว", "cut on a character boundary (3-byte chars)")
    t.eq(backend.cut_utf8("abc", 10), "abc", "short text unchanged")
    t.eq(backend.cut_utf8("abc", -1), "", "nothing for a negative limit")


# --- 2. Bridge through the openai client -------------------------------------------

REPLAY = replay.Replay().start()
KEY_ENV = "BENTO_TEST_MODEL_KEY"


def make_bridge(**kw):
    args = dict(base_url=REPLAY.base_url, model="test-model", api_key="sk-test-123",
                timeout=3.0, tools=[{"name": "echo", "risk": 0}, {"name": "wipe_memory", "risk": 2}],
                system_prompt="SYS")
    args.update(kw)
    return backend.Bridge(**args)


def one_request():
    got = REPLAY.taken()
    t.eq(len(got), 1, "one request to the endpoint")
    return got[0] if got else {"path": None, "headers": {}, "json": {}}


@group
def client_text_and_usage():
    b = make_bridge()
    REPLAY.reset()
    REPLAY.queue("llama_server_text")
    req = {"prompt": "what is my name?", "context": CONTEXT}
    t.eq(b.answer(req), ("Your name is Somchai.", 118, 7), "llama-server text and usage")
    r = one_request()
    t.eq(r["path"], "/v1/chat/completions", "POST to <base>/chat/completions")
    t.eq(r["headers"].get("authorization"), "Bearer sk-test-123", "the API key as bearer")
    t.eq(sorted(r["json"]), ["max_tokens", "messages", "model", "tools"], "the request's members")
    t.eq(r["json"]["model"], "test-model", "the model name")
    t.eq(r["json"]["max_tokens"], 512, "max_tokens")
    t.eq(r["json"]["messages"], backend.chat_messages(req, "SYS"), "the messages as mapped")
    t.eq(r["json"]["tools"], backend.chat_tools(b.tools)[0], "the --tool registry as tools")

    REPLAY.queue("openai_text")
    t.eq(make_bridge(max_tokens=0, tools=[]).answer(req), ("It is 24 degrees in Chiang Mai.", 153, 10),
         "hosted format with detailed usage")
    r = one_request()
    t.eq(sorted(r["json"]), ["messages", "model"], "no tools, max_tokens 0: neither member sent")

    REPLAY.queue("text_no_usage")
    t.eq(b.answer(req), ("Hello.", None, None), "no usage: no counts; blanks around the text dropped")
    one_request()

    REPLAY.queue("ollama_text_think")
    t.eq(b.answer(req), ("สวัสดีครับ สมชาย", 96, 41), "a leading <think> block dropped")
    one_request()

    dev_tools = [{"name": "led", "risk": 1}]
    REPLAY.queue("llama_server_text")
    b.answer(dict(req, tools=dev_tools))
    t.eq([x["function"]["name"] for x in one_request()["json"]["tools"]], ["led"],
         "the device's own tools win over --tool")
    REPLAY.queue("llama_server_text")
    b.answer(dict(req, tools=[]))
    t.check("tools" not in one_request()["json"], "an empty device registry: no tools sent")

    long = dict(replay.fixture("llama_server_text"))
    long["body"] = json.loads(json.dumps(long["body"]))
    long["body"]["choices"][0]["message"]["content"] = "ก" * 2000
    REPLAY.queue(long)
    text, _, _ = b.answer(req)
    t.eq(text, "ก" * 1365, "a reply over REPLY_MAX cut to 4096 bytes on a character boundary")
    one_request()


@group
def client_tool_calls():
    b = make_bridge()
    REPLAY.reset()
    req = {"prompt": "say hello", "context": CONTEXT}
    REPLAY.queue("llama_server_tool_call")
    t.eq(b.answer(req), ('{"tool_call":{"name":"echo","arg":"hello from the model"}}', 402, 21),
         "llama-server tool call -> tool request")
    one_request()
    REPLAY.queue("llama_server_after_tool")
    follow = dict(req, tool_result={"name": "echo", "status": "ok", "result": "hello from the model"})
    t.eq(b.answer(follow), ("The device echoed: hello from the model", 447, 9), "the follow-up answered")
    msgs = one_request()["json"]["messages"]
    cid = backend.call_id("say hello", "echo")
    t.eq(msgs[2:], [
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": cid, "type": "function",
                         "function": {"name": "echo", "arguments": '{"arg": "hello from the model"}'}}]},
        {"role": "tool", "tool_call_id": cid, "content": "hello from the model"},
    ], "the follow-up carries the call (with the argument the device got) and its result")

    REPLAY.queue("ollama_tool_call")
    t.eq(b.answer(req), ('{"tool_call":{"name":"uptime","arg":null}}', 231, 15),
         "Ollama tool call without arguments -> arg null")
    one_request()
    REPLAY.queue("vllm_two_tool_calls")
    t.eq(b.answer(req), ('{"tool_call":{"name":"led","arg":"on"}}', 312, 49),
         "vLLM: two calls -> the first only")
    one_request()
    REPLAY.queue("llama_server_tool_call_truncated_args")
    t.eq(b.answer(req), ('{"tool_call":{"name":"echo","arg":"{\\"arg\\": \\"hel"}}', 402, 16),
         "arguments that are not JSON -> given as they came")
    one_request()

    nameless = replay.fixture("llama_server_tool_call")
    nameless["body"]["choices"][0]["message"]["tool_calls"][0]["function"]["name"] = ""
    REPLAY.queue(nameless)
    t.raises_bridge(lambda: b.answer(req), 502, "malformed response: a tool call without a name",
                    "a tool call without a name")
    one_request()


@group
def client_summary():
    b = make_bridge(max_tokens=512)
    REPLAY.reset()
    REPLAY.queue("summary_long")
    lines = "summary: Earlier: the user is Somchai\nuser: my cat is Mali\nassistant: noted"
    text, tin, tout = b.summarize(lines, 255)
    full = replay.fixture("summary_long")["body"]["choices"][0]["message"]["content"]
    t.check(len(text.encode()) <= 255 and full.startswith(text) and len(text.encode()) >= 253,
            "the summary cut to max_bytes on a character boundary", len(text.encode()), text)
    t.eq((tin, tout), (164, 88), "summary usage")
    r = one_request()["json"]
    t.eq(r["messages"], backend.summary_messages(lines, 255), "summary messages")
    t.eq(r["max_tokens"], 255, "summary max_tokens: at most max_bytes")
    t.check("tools" not in r, "no tools for a summary")
    REPLAY.queue("summary_long")
    t.eq(b.summarize(lines, 40)[0], "The user is Somchai from Chiang Mai; his",
         "max_bytes 40")
    t.eq(one_request()["json"]["max_tokens"], 40, "max_tokens 40")
    t.eq(b.summarize(lines, 0), ("", None, None), "max_bytes 0: nothing asked")
    t.eq(REPLAY.taken(), [], "max_bytes 0: no request")


@group
def client_errors():
    b = make_bridge()
    REPLAY.reset()
    req = {"prompt": "hi", "context": ""}
    for name, status, detail in (
            ("error_openai_401", 401, "Incorrect API key provided: no-key. You can find your API key in your account settings."),
            ("error_ollama_404_model", 404, 'model "llama3.2:1b" not found, try pulling it first'),
            ("error_llama_400_context", 400, "the request exceeds the available context size, try increasing it"),
            ("error_vllm_500", 500, "EngineCore encountered an issue. See stack trace (above) for the root cause."),
            ("error_ollama_wrong_path", 404, "404 page not found")):
        REPLAY.queue(name)
        t.raises_bridge(lambda: b.answer(req), 502, "the endpoint answered %d: %s" % (status, detail),
                        "%s -> 502" % name)
        t.eq(len(REPLAY.taken()), 1, "%s: asked once (no retries by default)" % name)
    for name in ("malformed_html_200", "malformed_truncated_json"):
        REPLAY.queue(name)
        t.raises_bridge(lambda: b.answer(req), 502, ("malformed response: ",), "%s -> 502" % name)
        REPLAY.taken()
    REPLAY.queue("malformed_no_choices")
    t.raises_bridge(lambda: b.answer(req), 502, "malformed response: no choices", "no choices -> 502")
    no_msg = replay.fixture("llama_server_text")
    del no_msg["body"]["choices"][0]["message"]
    REPLAY.queue(no_msg)
    t.raises_bridge(lambda: b.answer(req), 502, "malformed response: no message in the first choice",
                    "a choice without a message -> 502")
    REPLAY.queue("malformed_html_200")
    t.raises_bridge(lambda: b.summarize("user: hi", 255), 502, ("malformed response: ",),
                    "a summary request fails the same way")
    REPLAY.taken()

    b2 = make_bridge(retries=1)
    REPLAY.queue("error_vllm_500", "llama_server_text")
    t.eq(b2.answer(req)[0], "Your name is Somchai.", "--openai-retries 1: a 500 then an answer")
    t.eq(len(REPLAY.taken()), 2, "two requests")

    # A port nobody listens on: connection refused, at once.
    closed = replay.Replay()
    port = closed.port
    closed.httpd.server_close()
    b3 = make_bridge(base_url="http://127.0.0.1:%d/v1" % port)
    t0 = time.monotonic()
    t.raises_bridge(lambda: b3.answer(req), 502,
                    ("cannot reach http://127.0.0.1:%d/v1: " % port, "onnect"), "connection refused -> 502")
    t.check(time.monotonic() - t0 < 2.0, "refused at once", time.monotonic() - t0)

    # An endpoint that answers too late, and one that trickles its answer.
    for extra, what in (({"delay_s": 3}, "late"), ({"trickle_s": 0.25}, "trickling")):
        REPLAY.queue("llama_server_text", **extra)
        b4 = make_bridge(timeout=1.0)
        t0 = time.monotonic()
        t.raises_bridge(lambda: b4.answer(req), 504, "no answer within 1 s", "%s endpoint -> 504" % what)
        took = time.monotonic() - t0
        t.check(0.9 <= took < 2.5, "%s endpoint: given up after the timeout" % what, took)
        REPLAY.taken()


# --- 3. backend.py as a process ----------------------------------------------------


class Backend:
    """backend.py on a free loopback port (stopped by stop())."""

    def __init__(self, *args, env=None, python=None, prelude=None):
        cmd = [python or sys.executable]
        if prelude:  # code run before backend.py, e.g. to hide a package
            cmd += ["-c", prelude + "\nimport runpy, sys\nsys.argv = sys.argv[1:]\n"
                    "runpy.run_path(sys.argv[0], run_name='__main__')", BACKEND]
        else:
            cmd.append(BACKEND)
        cmd += ["--port", "0", "--stdin-exit", "--quiet", "--api-key", API_KEY] + list(args)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, text=True)
        line = self.proc.stdout.readline()
        self.port = int(line.split()[1]) if line.startswith("PORT ") else None
        if self.port is None:
            self.stop()

    def post(self, body, path="/ai/v1/chat", ctype="application/json"):
        data = json.dumps(body, ensure_ascii=False).encode() if not isinstance(body, bytes) else body
        rq = urllib.request.Request("http://127.0.0.1:%d%s" % (self.port, path), data=data,
                                    headers={"Content-Type": ctype,
                                             "apikey": API_KEY})
        try:
            with urllib.request.urlopen(rq, timeout=15) as r:
                return r.status, r.read().decode(), dict(r.headers.items())
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(), dict(e.headers.items())

    def get(self, path):
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.port, path), timeout=15) as r:
            return json.loads(r.read().decode())

    def stop(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            self.proc.wait(timeout=5)
        self.stderr = self.proc.stderr.read()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return self.proc.returncode


def run_backend(*args, env=None, prelude=None):
    """(exit code, stderr) of backend.py that is expected to exit by itself."""
    cmd = [sys.executable]
    if prelude:
        cmd += ["-c", prelude + "\nimport runpy, sys\nsys.argv = sys.argv[1:]\n"
                "runpy.run_path(sys.argv[0], run_name='__main__')", BACKEND]
    else:
        cmd.append(BACKEND)
    p = subprocess.run(cmd + ["--port", "0", "--stdin-exit"] + list(args), input="",
                       capture_output=True, text=True, timeout=30, env=env)
    return p.returncode, p.stderr


def bridge_env():
    env = dict(os.environ)
    env[KEY_ENV] = "sk-from-env"
    return env


HIDE_OPENAI = "import sys\nsys.modules['openai'] = None"


@group
def process_front_end():
    REPLAY.reset()
    be = Backend("--openai-base-url", REPLAY.base_url, "--model", "m1", "--openai-api-key-env", KEY_ENV,
                 "--tool", "echo:0", "--tool", "wipe_memory:2", "--openai-timeout", "2", env=bridge_env())
    if not t.check(be.port is not None, "backend.py with the bridge starts"):
        return
    try:
        REPLAY.queue("llama_server_text")
        req = {"prompt": "what is my name?", "context": CONTEXT}
        st, body, hdr = be.post(req)
        t.eq((st, body), (200, "Your name is Somchai."), "a device request answered by the model")
        t.eq((hdr.get("X-Tokens-In"), hdr.get("X-Tokens-Out")), ("118", "7"), "usage as X-Tokens-*")
        r = one_request()
        t.eq(r["headers"].get("authorization"), "Bearer sk-from-env", "the key from --openai-api-key-env")
        t.eq(r["json"]["model"], "m1", "--model")
        t.eq(r["json"]["messages"][1], {"role": "user", "content": "what is my name?"}, "the prompt")
        t.check(r["json"]["messages"][0]["content"].endswith(CONTEXT), "the context")
        t.eq([x["function"]["name"] for x in r["json"]["tools"]], ["echo", "wipe_memory"], "--tool list")

        REPLAY.queue("llama_server_tool_call", "llama_server_after_tool")
        req = {"prompt": "say hello", "context": CONTEXT}
        st, body, hdr = be.post(dict(req, tools=[{"name": "echo", "risk": 0}, {"name": "uptime", "risk": 0}]))
        t.eq((st, body), (200, '{"tool_call":{"name":"echo","arg":"hello from the model"}}'),
             "a tool call -> the device's tool request, exactly")
        t.eq((hdr.get("X-Tokens-In"), hdr.get("X-Tokens-Out")), ("402", "21"), "its usage")
        t.eq([x["function"]["name"] for x in one_request()["json"]["tools"]], ["echo", "uptime"],
             "the device's registry as tools")
        follow = dict(req, context=CONTEXT + "tool: echo: hello from the model\n",
                      tool_result={"name": "echo", "status": "ok", "result": "hello from the model"})
        st, body, hdr = be.post(follow)
        t.eq((st, body), (200, "The device echoed: hello from the model"), "the follow-up answered")
        msgs = one_request()["json"]["messages"]
        t.eq([m["role"] for m in msgs], ["system", "user", "assistant", "tool"], "follow-up messages")
        t.eq(msgs[2]["tool_calls"][0]["function"]["arguments"], '{"arg": "hello from the model"}',
             "the bridge remembered the argument it asked for")
        t.eq(msgs[3]["tool_call_id"], msgs[2]["tool_calls"][0]["id"], "the tool message answers the call")

        REPLAY.queue("summary_long")
        st, body, hdr = be.post({"summarize": "user: my cat is Mali", "max_bytes": 60})
        t.eq((st, body), (200, "The user is Somchai from Chiang Mai; his cat is called Mali"),
             "a summary request, cut to max_bytes")
        t.eq((hdr.get("X-Tokens-In"), hdr.get("X-Tokens-Out")), ("164", "88"), "summary usage")
        t.eq(one_request()["json"]["max_tokens"], 60, "summary max_tokens")

        REPLAY.queue("text_no_usage")
        st, body, hdr = be.post({"prompt": "hi", "context": ""})
        t.eq((st, body, "X-Tokens-In" in hdr, "X-Tokens-Out" in hdr), (200, "Hello.", False, False),
             "no usage: no token headers")
        REPLAY.taken()

        for tools in ({"name": "echo"}, [{"name": "echo", "risk": 5}]):
            st, body, _ = be.post({"prompt": "hi", "context": "", "tools": tools})
            t.eq(st, 400, "malformed tools %r -> 400" % (tools,))
        t.eq(body, '"tools" entries must be objects with a string "name" and a "risk" of 0, 1 or 2\n',
             "the 400's text")
        t.eq(REPLAY.taken(), [], "a malformed request never reaches the model")

        REPLAY.queue("error_ollama_404_model")
        st, body, hdr = be.post({"prompt": "hi", "context": ""})
        t.eq((st, body), (502, 'model endpoint: the endpoint answered 404: model "llama3.2:1b" not found, '
                               'try pulling it first\n'), "an endpoint error -> 502 to the device")
        last = be.get("/_last")
        t.eq((last["status"], last["problem"]),
             (502, 'model endpoint: the endpoint answered 404: model "llama3.2:1b" not found, try pulling it first'),
             "/_last shows the failure")
        REPLAY.queue("malformed_no_choices")
        st, body, _ = be.post({"summarize": "user: hi", "max_bytes": 255})
        t.eq((st, body), (502, "model endpoint: malformed response: no choices\n"), "a failed summary -> 502")
        REPLAY.queue("llama_server_text", delay_s=6)
        t0 = time.monotonic()
        st, body, _ = be.post({"prompt": "hi", "context": ""})
        t.eq((st, body), (504, "model endpoint: no answer within 2 s\n"), "a late endpoint -> 504")
        t.check(time.monotonic() - t0 < 4.5, "within --openai-timeout", time.monotonic() - t0)
        REPLAY.taken()

        # The test machinery still works around the model.
        with urllib.request.urlopen(urllib.request.Request(
                "http://127.0.0.1:%d/_control" % be.port, data=b'{"mode": "status503", "count": 1}',
                headers={"Content-Type": "application/json"}), timeout=5) as r:
            r.read()
        st, body, _ = be.post({"prompt": "hi", "context": ""})
        t.eq((st, body), (503, "backend says 503\n"), "a fault mode applies before the model")
        with urllib.request.urlopen(urllib.request.Request(
                "http://127.0.0.1:%d/_control" % be.port, data=b'{"replies": ["fixed one"]}',
                headers={"Content-Type": "application/json"}), timeout=5) as r:
            r.read()
        st, body, _ = be.post({"prompt": "hi", "context": ""})
        t.eq((st, body), (200, "fixed one"), "a queued reply wins over the model")
        t.eq(REPLAY.taken(), [], "neither reached the model")
    finally:
        be.stop()
    t.eq(be.proc.returncode, 0, "backend.py exits on stdin EOF")

    # The endpoint down: every request fails, none hangs.
    closed = replay.Replay()
    port = closed.port
    closed.httpd.server_close()
    be = Backend("--openai-base-url", "http://127.0.0.1:%d/v1" % port, "--model", "m")
    try:
        st, body, _ = be.post({"prompt": "hi", "context": ""})
        t.check(st == 502 and body.startswith("model endpoint: cannot reach http://127.0.0.1:%d/v1: " % port),
                "endpoint down -> 502", st, body)
    finally:
        be.stop()


@group
def process_options():
    # Without the bridge nothing needs openai, and the rules answer as before.
    be = Backend(prelude=HIDE_OPENAI)
    try:
        if t.check(be.port is not None, "backend.py starts without the openai package"):
            st, body, hdr = be.post({"prompt": "what is my name?", "context": CONTEXT})
            t.eq((st, body), (200, "Your name is Somchai."), "mode ok answers by the rules")
            st, body, _ = be.post({"prompt": "hello", "context": ""})
            t.eq(body, "Echo: hello (context: 0 bytes, 0 lines)", "mode ok echo unchanged")
            st, body, _ = be.post({"prompt": "hi", "context": "", "tools": "not checked"})
            t.eq(st, 200, "without the bridge \"tools\" is only recorded")
            t.eq(be.get("/_last")["tools"], "not checked", "/_last shows the tools")
    finally:
        be.stop()

    rc, err = run_backend("--openai-base-url", "http://127.0.0.1:9/v1", "--model", "m", prelude=HIDE_OPENAI)
    t.eq(rc, 2, "the bridge without openai: exit 2")
    t.check(err.startswith("backend.py: --openai-base-url needs the Python package openai "
                           "(pip install openai): "), "a clear message", err)
    for args, want in (
            (["--model", "m"], "--model needs --openai-base-url"),
            (["--tool", "echo"], "--tool needs --openai-base-url"),
            (["--openai-base-url", "http://127.0.0.1:9/v1"], "--openai-base-url needs --model"),
            (["--openai-base-url", "http://127.0.0.1:9/v1", "--model", "m", "--tool", "echo:7"],
             "--tool: a tool risk must be 0, 1 or 2: 'echo:7'"),
            (["--openai-base-url", "http://127.0.0.1:9/v1", "--model", "m", "--openai-timeout", "0"],
             "--openai-timeout must be > 0"),
            (["--openai-base-url", "http://127.0.0.1:9/v1", "--model", "m",
              "--openai-api-key-env", "BENTO_NO_SUCH_VARIABLE"],
             "--openai-api-key-env: the environment variable BENTO_NO_SUCH_VARIABLE is not set")):
        env = dict(os.environ)
        env.pop("BENTO_NO_SUCH_VARIABLE", None)
        rc, err = run_backend(*args, env=env)
        t.check(rc == 2 and err.rstrip().endswith("error: " + want), "option error: " + want, rc, err)


# --- the real device through the bridge ------------------------------------------------


@group
def device_through_the_bridge():
    mpy = os.environ.get("BENTOCLAW_MPY") or os.path.join(ROOT, "build", "micropython", "micropython")
    if not os.access(mpy, os.X_OK):
        print("SKIP device through the bridge: no %s (scripts/build_micropython.sh builds it)" % mpy)
        return
    REPLAY.reset()
    be = Backend("--openai-base-url", REPLAY.base_url, "--model", "m", "--tool", "echo:0",
                 "--tool", "uptime:0", "--tool", "led:1", "--tool", "wipe_memory:2")
    try:
        REPLAY.queue("llama_server_text", "llama_server_tool_call", "llama_server_after_tool",
                     "summary_long")
        env = dict(os.environ, BENTOCLAW_PORT=str(be.port), BENTOCLAW_ROOT=ROOT)
        p = subprocess.run([mpy, os.path.join(HERE, "device_bridge.py")], capture_output=True,
                           text=True, timeout=120, env=env, cwd=ROOT)
        out = p.stdout
        for line in out.splitlines():
            if line.startswith("RESULT:"):
                n_pass, n_fail = [int(w) for w in line.split() if w.isdigit()]
                t.passed += n_pass
                t.failed += n_fail
            elif line.startswith("FAIL"):
                print(line)
        t.check(p.returncode == 0 and "RESULT:" in out, "the device script ran", p.returncode,
                out[-2000:], p.stderr[-2000:])
        got = REPLAY.taken()
        t.eq(len(got), 4, "the device made 4 model requests (answer, tool call, follow-up, summary)")
        if len(got) == 4:
            m0 = got[0]["json"]["messages"]
            t.check("- name: Somchai\n" in m0[0]["content"], "the device's memory reached the model",
                    m0[0]["content"])
            t.eq(m0[1], {"role": "user", "content": "what is my name?"}, "the device's prompt")
            m2 = got[2]["json"]["messages"]
            t.eq([m["role"] for m in m2], ["system", "user", "assistant", "tool"], "the follow-up")
            t.eq(m2[3]["content"], "hello from the model", "the device's echo result reached the model")
            t.check("tool: echo: hello from the model" in m2[0]["content"],
                    "the device's TOOL turn in the context", m2[0]["content"])
            t.check("messages" in got[3]["json"] and "user: what is my name?" in got[3]["json"]["messages"][1]["content"],
                    "the summary request carried the folded turns", got[3]["json"])
    finally:
        be.stop()


def main():
    try:
        for fn in GROUPS:
            t.group = fn.__name__
            before = (t.passed, t.failed)
            try:
                fn()
            except Exception:
                t.check(False, "raised", traceback.format_exc())
            print("%s %s (%d checks)" % ("PASS" if t.failed == before[1] else "FAIL", fn.__name__,
                                         t.passed + t.failed - sum(before)), flush=True)
    finally:
        REPLAY.stop()
    print("RESULT: %d passed, %d failed" % (t.passed, t.failed))
    return 1 if t.failed or not t.passed else 0


if __name__ == "__main__":
    sys.exit(main())
