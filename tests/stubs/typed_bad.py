# typed_bad.py — calls the stub must refuse. scripts/test_stubs.sh runs
# `mypy --strict` on it and wants exactly the errors marked `# E: <code>` on
# their lines: each one missing means the stub lets a mistake through (and
# the check cannot pass by accident); any other error means the file is
# wrong. Never run.
import bentoclaw

bentoclaw.ask(42)  # E: arg-type
bentoclaw.ask(text="hello")  # E: call-arg
bentoclaw.connect("127.0.0.1", "8080", "key")  # E: arg-type
bentoclaw.remember("k")  # E: call-arg
bentoclaw.search("k", count=3)  # E: call-arg
bentoclaw.import_memory("- a: b", True)  # E: call-arg
bentoclaw.import_memory("- a: b", skipped=[("1", "why")])  # E: list-item
bentoclaw.archive(offset="0")  # E: arg-type
bentoclaw.config(compact_keep="4")  # E: arg-type
bentoclaw.config(auto_compact=2)  # E: arg-type
bentoclaw.config(no_such_setting=1)  # E: call-arg
bentoclaw.config(80)  # E: call-arg
bentoclaw.register_tool("t", "not callable")  # E: arg-type
bentoclaw.register_tool("t", print, risk="high")  # E: arg-type
bentoclaw.tool("echo", "hi", "extra")  # E: call-arg
bentoclaw.tacp("STATUS")  # E: arg-type
bentoclaw._clock("now")  # E: call-overload
bentoclaw.reset()  # E: attr-defined
bentoclaw.PROMPT_MAX = 10  # E: misc
value: str = bentoclaw.recall("k")  # E: assignment
cooldown: str = bentoclaw.safety()["cooldown_ms"]  # E: assignment
bentoclaw.status()["no_such_key"]  # E: typeddict-item
half_open = bentoclaw.safety()["circuit_breaker"] == "half_open"  # E: comparison-overlap
role: int = bentoclaw.session()[0][0]  # E: assignment
key, value2 = bentoclaw.search("k")[0]  # E: misc
flushed: None = bentoclaw.flush()  # E: assignment
