"""
The session memory and safety gates of the bentoclaw agent.

MicroPython user C module ``bentoclaw`` (mpy/modbentoclaw.c over the Rust core
``libbentoclaw.a``): a 10-message session ring and a 32-key memory store on
flash, a circuit breaker, a per-tool rate limiter and transport trust, the
``ask()`` exchange with a backend, the tool registry, and TACP, the BENTO AI
IDE's protocol. See mpy/README.md, docs/VENDOR.md, docs/SESSIONS.md,
docs/BACKEND.md, docs/TACP.md.

The vendor's module (the BENTO firmware's) has exactly 11 functions, and
this one has each of them with the same arguments, return shapes, dict keys
and exception texts: ``tools``, ``execute``, ``status``, ``version``,
``connect``, ``ask``, ``disconnect``, ``remember``, ``history``,
``session_clear``, ``safety``. Every other name is an extension of this
module, marked "Extension" below; so are the extra keys of ``status()``,
``safety()`` and ``tools()``' dicts.

Raised by every function besides what its own docstring lists:

- ``RuntimeError("bentoclaw called from inside a file operation")`` when
  called from Python code the core runs during a file operation (a block
  device or file system written in Python).
- ``KeyboardInterrupt``/``SystemExit`` raised while the core ran (in a tool,
  in a Python block device) propagate once the core has stopped cleanly.
- ``MemoryError`` when the call's buffers cannot be allocated (before the
  core runs: no state changes), or a file cannot be opened for want of heap
  while the core runs (it stops there and writes nothing more; ``ask()``
  leaves the files as they were).
- ``RuntimeError("maximum recursion depth exceeded")`` when called with less
  than 2 KiB of the stack left before MicroPython's limit (the core runs
  without the VM's stack check; on the board's 8 KiB task stack such a call
  would overflow it): before the core runs, no state changes.

Every ``str`` argument the core takes as text must not contain NUL
(``ValueError("<arg> must not contain NUL")``) and must be well-formed UTF-8
(``ValueError("<arg> must be valid UTF-8")``).
"""

# origin module: mpy/modbentoclaw.c (module table); behaviour and texts: src/agent/
# checked by: scripts/test_stubs.sh (tests/stubs/check_stub.py on the unix build, mypy)
from __future__ import annotations

from typing import Any, Callable, Final, List, Literal, Optional, Tuple, TypedDict, Union, overload

from typing_extensions import TypeAlias

# --- type-only names (not in the module; underscore so none looks importable) --

_State: TypeAlias = Literal["idle", "executing", "thinking", "error"]
_BreakerState: TypeAlias = Literal["closed", "open", "half-open"]
_Trust: TypeAlias = Literal["none", "https", "usb"]
_Role: TypeAlias = Literal["user", "assistant", "system", "tool", "summary"]
_UiEvent: TypeAlias = Literal[
    "status", "last_cmd", "last_result", "progress", "error", "clear", "stats", "user", "assistant", "tool", "led"
]
_Flag: TypeAlias = Union[bool, int]
"""A flag argument: ``bool``, or an ``int`` taken as true when non-zero."""
_ConfigFlag: TypeAlias = Union[bool, Literal[0, 1]]
"""A ``config()`` flag: ``True``/``False`` or 0/1."""
_Handler: TypeAlias = Callable[[Any], Any]
"""A Python tool: called as ``handler(arg)``; its return value is the tool's result."""

class _Status(TypedDict):
    """``status()``: the vendor's keys (``state`` .. ``connected``), then the
    library's: the error count and the session's accounting (docs/SESSIONS.md)."""

    state: _State
    """"idle", "executing" (a tool runs), "thinking" (an exchange waits for the
    backend) or "error" (the last exchange failed). The vendor's CLAW_STATE_*
    values with their right names (its own table was shifted by one)."""
    exec_count: int
    """Tool calls admitted since the soft reset (``execute()``, ``tool()``, TACP EXEC, a model's tools)."""
    error_count: int
    """Errors counted since the soft reset (refusals, failed requests, raising tools)."""
    tool_count: int
    """Tools in the registry (as ``len(tools())``)."""
    last_cmd: str
    """The last tool called (its name; a TACP EXEC's line), at most 47 bytes."""
    last_result: str
    """How the last call ended ("ok (42 bytes)", "dispatched", "tool ok", "error", ...), at most 47 bytes."""
    session_msgs: int
    """Messages in the session ring."""
    connected: bool
    """The transport is connected."""
    errors: int
    """Extension: the same count as ``error_count``."""
    dirty: bool
    """Extension: the ring holds turns not on flash yet."""
    pending_confirm: str
    """Extension: the tool whose call the model asked for waits for ``confirm()`` ("" none)."""
    bytes_in: int
    """Extension: request body bytes sent to the backend this session (what goes into the model)."""
    bytes_out: int
    """Extension: reply bytes received this session (what comes out)."""
    tokens_in: int
    """Extension: input tokens the backend reported (docs/BACKEND.md, "Token counts")."""
    tokens_out: int
    """Extension: output tokens the backend reported."""
    context_bytes: int
    """Extension: context bytes of the last request."""
    exchanges: int
    """Extension: answered requests this session."""
    last_active: int
    """Extension: RTC seconds of the last exchange (0: unknown)."""

class _Safety(TypedDict):
    """``safety()``: the vendor's keys, then the library's."""

    circuit_breaker: _BreakerState
    cooldown_ms: int
    """Cooldown left while the breaker is open, in ms."""
    trust_level: _Trust
    """The transport trust: "usb" offline, "https" while connected."""
    connected: bool
    """The transport is connected."""
    errors: int
    """Extension: errors counted since the soft reset (as ``status()["error_count"]``)."""
    trust: _Trust
    """Extension: the same as ``trust_level`` (this module's name for it before it took the vendor's)."""

class _Tool(TypedDict):
    """A ``tools()`` entry: the vendor's keys, then the library's."""

    name: str
    description: str
    risk: int
    """0 low, 1 medium, 2 high."""
    confirm: bool
    """A model's request of it waits for the person at the device (``confirm()``)."""
    rate_per_min: int
    """Extension: calls per minute."""
    builtin: bool
    """Extension: one of the board's tools (not a ``register_tool()`` one)."""

class _Executed(TypedDict):
    """``execute()``'s answer (the vendor's)."""

    tool: str
    status: Literal["ready"]
    risk: int
    confirm: bool

class _Config(TypedDict):
    """``config()``: every setting (docs/SESSIONS.md, "Configuration on flash")."""

    compact_threshold_pct: int
    compact_min_msgs: int
    compact_keep: int
    context_budget: int
    idle_timeout_s: int
    daily_reset_hour: int
    auto_compact: bool
    backend_summary: bool
    send_tools: bool
    archive: bool
    compact_before_drop: bool

# --- constants ------------------------------------------------------------------

RISK_LOW: Final[int] = 0
"""Tool risk 0: runs at any trust (``register_tool(risk=...)``, ``tools()``)."""
RISK_MEDIUM: Final[int] = 1
"""Tool risk 1: needs HTTPS or USB trust."""
RISK_HIGH: Final[int] = 2
"""Tool risk 2: needs USB trust (the REPL offline, or a TACP line)."""
HTTP_TIMEOUT_MS: Final[int] = ...
"""Timeout of one backend request, in ms (5000 unless built with ``-DBENTOCLAW_HTTP_TIMEOUT_MS``)."""
PROMPT_MAX: Final[int] = 4096
"""Longest prompt ``ask()`` takes, in bytes."""
CONTEXT_MAX: Final[int] = 4096
"""Most context bytes one request carries (``config(context_budget=...)`` lowers it)."""
REPLY_MAX: Final[int] = 4096
"""Longest backend reply accepted, in bytes; also the largest ``archive(n=...)``."""
TOOL_ROUNDS_MAX: Final[int] = 3
"""Tool rounds one ``ask()`` runs at most."""
CALL_REQUESTS_MAX: Final[int] = 16
"""Backend requests one top-level call makes at most, whatever its tools call."""
CALL_DEPTH_MAX: Final[int] = 4
"""Calls nested through tools at most, the top-level call included."""
ARCHIVE_MAX: Final[int] = 8192
"""Cap of ``/.bentoclaw_archive`` in bytes."""

# --- connection and exchange ------------------------------------------------------

def connect(host: str, port: int, api_key: str) -> bool:
    """
    Connect to the backend; ``True`` when connected.

    Trust goes to HTTPS first; on success a SYSTEM turn "Connected to TESAIoT
    backend" is added, on failure trust goes back to USB and ``errors`` +1.
    ``host`` and ``api_key`` go into HTTP header lines: printable ASCII only.

    Raises:
        TypeError: ``host must be str``, ``port must be int``, ``api_key must be str``.
        ValueError: ``host must be 1..63 bytes of printable ASCII``,
            ``port must be 1..65535``, ``api_key must be 1..127 bytes of printable ASCII``.
        RuntimeError: ``calls nested too deep through tools (4, CALL_DEPTH_MAX)``.
    """
    ...

def disconnect() -> None:
    """
    Disconnect from the backend; trust back to USB.

    Adds a SYSTEM turn "Disconnected from backend".

    Raises:
        RuntimeError: ``calls nested too deep through tools (4, CALL_DEPTH_MAX)``.
    """
    ...

def ask(prompt: str) -> str:
    """
    Send ``prompt`` with the context to the backend and return its reply.

    Adds the USER turn and, on success, the ASSISTANT turn; a reply that is
    exactly ``{"tool_call":{"name":...,"arg":...}}`` runs that tool at HTTPS
    trust and posts its result back, at most ``TOOL_ROUNDS_MAX`` rounds
    (docs/BACKEND.md). The prompts ``/new``, ``/reset`` (a fresh session:
    ``"new session"``) and ``/compact`` (``"compacted N turns"``) are commands
    that work offline (docs/SESSIONS.md).

    Raises:
        TypeError: ``prompt must be str``.
        ValueError: ``prompt must be 1..4096 bytes (PROMPT_MAX)``.
        RuntimeError: ``not connected — call bentoclaw.connect() first``,
            ``circuit breaker open``, ``HTTPS request failed``,
            ``reply too long (over REPLY_MAX = 4096 bytes)`` (a 200 answer
            over ``REPLY_MAX``, where the transport can tell: the unix port's
            does; on the board the vendor's transport gives
            ``HTTPS request failed`` for it too; both are a breaker failure),
            ``tool round limit reached``,
            ``backend request limit reached (16 per top-level call, CALL_REQUESTS_MAX)``,
            ``calls nested too deep through tools (4, CALL_DEPTH_MAX)``.
        OSError: ``archive write failed: session kept (session_clear() drops it)`` (``/new``,
            ``/reset``), ``archive write failed: nothing compacted`` (``/compact``).
    """
    ...

# --- memory -------------------------------------------------------------------------

def remember(key: str, value: str) -> bool:
    """
    Store ``value`` under ``key`` in the memory store on flash.

    ``False`` when the store is full (32 keys) or the write failed; the old
    store is kept then.

    Raises:
        TypeError: ``key must be str``, ``value must be str``.
        ValueError: ``key must be 1..31 bytes (CLAW_MEM_KEY_MAX)``,
            ``value must be 0..127 bytes (CLAW_MEM_VAL_MAX)``.
        OSError: ``memory not saved: <path>: <cause>`` where the files
            cannot be: ``a directory is in the way``, ``no writable file
            system there`` (nothing mounted at the store's directory, or
            read-only), ``no such file or directory``, ``not a
            directory``; ``e.errno`` is the file
            system's.
    """
    ...

def recall(key: str) -> Optional[str]:
    """
    Extension: the value stored under ``key``, or ``None``.

    Raises:
        TypeError: ``key must be str``.
        ValueError: ``key must be 1..31 bytes (CLAW_MEM_KEY_MAX)``.
    """
    ...

def search(query: str, n: int = 5) -> List[Tuple[str, str, int]]:
    """
    Extension: the stored pairs most relevant to ``query``, as ``(key, value, score)``, best first.

    Lexical ranking (Thai and English), score 1..1000, only pairs above 0; at
    most ``n`` hits, capped at 32 (docs/SESSIONS.md, "Vector search").

    Raises:
        TypeError: ``query must be str``, ``n must be int``.
        ValueError: ``n must be >= 1``.
    """
    ...

def forget(key: str) -> bool:
    """
    Extension: remove ``key`` from the memory store; ``False`` when absent or the write failed.

    Raises:
        TypeError: ``key must be str``.
        ValueError: ``key must be 1..31 bytes (CLAW_MEM_KEY_MAX)``.
    """
    ...

def pin(key: str, on: _Flag = True) -> bool:
    """
    Extension: pin (or with ``on=False`` unpin) ``key``: pinned keys reach the context first.

    ``False`` when the key is absent or the write failed.

    Raises:
        TypeError: ``key must be str``, ``on must be bool``.
        ValueError: ``key must be 1..31 bytes (CLAW_MEM_KEY_MAX)``.
    """
    ...

def export_memory() -> str:
    """
    Extension: the memory store as MEMORY.md markdown (``# Memory``, ``- **key**: value``).

    Raises:
        OSError: ``memory store unreadable``.
    """
    ...

def import_memory(text: str, *, strict: _Flag = False, skipped: Optional[List[Tuple[int, str]]] = None) -> int:
    """
    Extension: merge MEMORY.md-style ``text`` into the store; the number of distinct keys imported.

    Lines that are not ``- key: value`` items are skipped; with a list as
    ``skipped`` each is appended as ``(line_number, reason)``. With
    ``strict=True`` the first bad line raises instead and nothing is written
    (docs/SESSIONS.md, "Import").

    Raises:
        TypeError: ``text must be str``, ``strict must be bool``,
            ``skipped must be a list or None``.
        ValueError: ``line N: <reason>`` (strict),
            ``memory full: the store and the text hold more than 32 keys (CLAW_MEM_MAX_ENTRIES)``.
        OSError: ``memory write failed at line N (M pairs stored before it)``,
            ``memory store unreadable``.
    """
    ...

# --- session ----------------------------------------------------------------------

def session_clear() -> None:
    """
    Empty the session ring and its file (memory is kept); clears the UI chat panel.
    """
    ...

def flush() -> bool:
    """
    Extension: write the session ring to flash if it changed; ``False`` when the write failed.
    """
    ...

def session() -> List[Tuple[_Role, str]]:
    """
    Extension: the session ring as ``(role, text)`` pairs, oldest first.
    """
    ...

def history() -> str:
    """
    The context text (memory, then the conversation) as ``claw_session_build_context``
    renders it into 3072 bytes: the vendor's ``history()``.
    """
    ...

def version() -> str:
    """
    The vendor API level this module implements (the BENTO firmware's
    ``BENTOCLAW_VERSION``, "1.11.0" unless built with ``-DBENTOCLAW_VERSION``);
    it is also the ``fw`` of TACP's READY.
    """
    ...

def archive(offset: int = 0, n: int = 1024) -> bytes:
    """
    Extension: up to ``n`` bytes of ``/.bentoclaw_archive`` from byte ``offset``; ``b""`` at the end.

    The archive holds the turns folded by compactions and retired sessions,
    as JSON Lines. A chunk may end inside a UTF-8 character: join before decoding.

    Raises:
        TypeError: ``offset must be int``, ``n must be int``.
        ValueError: ``offset must be 0..1073741823``, ``n must be 1..4096``.
    """
    ...

def config(
    *,
    compact_threshold_pct: int = 80,
    compact_min_msgs: int = 4,
    compact_keep: int = 4,
    context_budget: int = 4096,
    idle_timeout_s: int = 0,
    daily_reset_hour: int = 4,
    auto_compact: _ConfigFlag = True,
    backend_summary: _ConfigFlag = False,
    send_tools: _ConfigFlag = False,
    archive: _ConfigFlag = False,
    compact_before_drop: _ConfigFlag = False,
) -> _Config:
    """
    Extension: change the given settings (none: only read them); every setting, after the change.

    A change is written to ``/.bentoclaw_config`` at once. The defaults shown
    are the settings' defaults: a keyword left out keeps its current value.
    Ranges: ``compact_threshold_pct`` 1..100, ``compact_min_msgs`` 1..10,
    ``compact_keep`` 0..7, ``context_budget`` 256..``CONTEXT_MAX``,
    ``idle_timeout_s`` 0..2592000 (0 off), ``daily_reset_hour`` -1..23 (-1 off).
    ``backend_summary``: the backend writes compaction summaries;
    ``send_tools``: requests list the tool registry (both opt-in, docs/BACKEND.md);
    ``archive``: compacted and retired turns are kept in ``/.bentoclaw_archive``;
    ``compact_before_drop``: compact before the ring would drop a turn (both
    opt-in, docs/SESSIONS.md).
    An ``int`` setting does not take ``True``/``False``.

    Raises:
        TypeError: ``config() takes keyword arguments only``,
            ``unknown config key 'K' (keys: ...)``, ``K must be int``, ``K must be bool``.
        ValueError: ``K must be LO..HI``.
        OSError: ``[Errno N] config not saved: /.bentoclaw_config`` (the settings are kept).
    """
    ...

def status() -> _Status:
    """
    The agent's state and counts (the vendor's keys), then the session's accounting.
    """
    ...

def safety() -> _Safety:
    """
    The circuit breaker's state and cooldown, the transport trust and the error count.
    """
    ...

# --- tools ------------------------------------------------------------------------

def tool(name: str, arg: Any = None) -> Any:
    """
    Extension: run the registry tool ``name`` with ``arg`` through the gates; its result.

    Gates: breaker, trust (the tool's risk against the current trust), rate
    check, rate record; a refusal counts one error. A Python tool's
    exception propagates and is a breaker failure. The board's C tools
    (``fs_read``, ``py_exec``, ..., VENDOR-SDK §4.1) take a ``str`` (their
    text or JSON argument; another object is sent as JSON) and return their
    answer as a ``str`` (the vendor's JSON). Built-ins: ``echo`` (a ``str``
    or ``None``) returns the ``str``, ``uptime`` the ms tick ``int``, ``led``
    (``None``, a ``bool``/``int`` or ``"toggle"``) the LED state ``bool``,
    ``wipe_memory`` ``True``, ``ui_notify`` (a ``str``) its JSON answer.

    Raises:
        TypeError: ``name must be str``, ``echo takes a str``, ``ui_notify takes a str``,
            ``led takes None, a bool or 'toggle'``, ``this tool takes no argument``.
        ValueError: ``unknown tool``,
            ``tool name must be 1..31 bytes (CLAW_RATE_NAME_MAX)``,
            ``arg must not contain NUL``, ``arg must be valid UTF-8``.
        RuntimeError: ``circuit breaker open — cooldown active``,
            ``tool risk exceeds transport trust level``, ``rate limit exceeded for this tool``,
            ``calls nested too deep through tools (4, CALL_DEPTH_MAX)``.
    """
    ...

def execute(name: str, params: Any, /) -> _Executed:
    """
    The vendor's ``execute()``: the tool ``name`` passes the gates and is
    recorded (counted, the last command, a TOOL turn "execute: NAME", a
    breaker success) but does not run; ``params`` is not read.

    Raises:
        TypeError: ``name must be str``.
        ValueError: ``unknown tool``.
        RuntimeError: ``circuit breaker open — cooldown active``,
            ``tool risk exceeds transport trust level``, ``rate limit exceeded for this tool``
            (each counts an error).
    """
    ...

def register_tool(
    name: str,
    handler: _Handler,
    risk: int = 0,
    rate_per_min: int = 0,
    description: str = "",
    confirm: _Flag = False,
) -> None:
    """
    Extension: add (or replace) the Python tool ``name``, called as ``handler(arg)``.

    ``risk``: ``RISK_LOW``..``RISK_HIGH``; ``rate_per_min``: calls per minute,
    0 = the default (10); ``description`` what ``tools()`` says it does;
    ``confirm``: a model's request of it waits for the person at the device.
    At most 12 tools besides the registry's names (the vendor's, which a
    Python tool may take when the board has no handler for it: it keeps that
    tool's risk, flag and limit).

    Raises:
        TypeError: ``name must be str``, ``handler must be callable``,
            ``risk must be int``, ``rate_per_min must be int``,
            ``description must be str``, ``confirm must be bool``.
        ValueError: ``tool name must be 1..31 bytes (CLAW_RATE_NAME_MAX)``,
            ``risk must be 0..2``, ``rate_per_min must be 0..65535``,
            ``description must be 0..127 bytes``, ``cannot replace a built-in tool``.
        RuntimeError: ``tool registry full (CLAW_RATE_MAX_TOOLS)``.
    """
    ...

def confirm(yes: _Flag = True) -> Any:
    """
    Extension: the person at the device's answer to the tool call the model asked
    for and the device holds (a tool whose ``confirm`` flag is set,
    docs/VENDOR.md): with ``yes`` it runs through the gates at the trust the
    model's request had and its result is returned; without, it is refused
    and ``None`` is returned. The call waits 60 s at most
    (``CLAW_CONFIRM_TIMEOUT_MS``); then it is refused.

    Raises:
        TypeError: ``yes must be bool``.
        RuntimeError: ``no tool waits for confirmation``,
            ``confirmation too late: the tool was refused (60 s, CLAW_CONFIRM_TIMEOUT_MS)``,
            the gate texts of ``tool()``.
        ValueError: ``unknown tool`` (the tool is gone meanwhile).
    """
    ...

def tools() -> List[_Tool]:
    """
    The tool registry: the board's tools in the vendor's order, then the Python ones.
    """
    ...

def tacp(data: Union[bytes, bytearray, memoryview], /) -> bytes:
    """
    Feed bytes as received from the USB host (the BENTO AI IDE) and return the
    bytes the device sends back: TACP v2 frames ``AA 55 30 | sub | seq | len |
    payload | CRC`` (docs/TACP.md). A frame may arrive split across calls;
    each whole one is answered (its ``seq`` echoed). Bytes that are not TACP
    are REPL input and are dropped here; a bad frame (bad CRC, length over
    3072, cut short for 5 s) is dropped unanswered. EXEC runs at USB trust.
    Refusals and errors are error frames (sub 0xFF), not exceptions.
    Extension (the vendor's binding has no ``tacp()``; its firmware frames
    the console UART itself).

    Raises:
        TypeError: ``data must be bytes`` (a ``str``), or not a buffer.
        KeyboardInterrupt: the bytes held a TERMINATE (``AA 55 01``); the
            answers of this call are dropped.
    """
    ...

def tacp_ready() -> bytes:
    """
    The READY frame (sub 0, seq 0) the board sends once it is up:
    ``{"fw":version(),"board":<board name>,"tools":<count>,"proto":2}``.
    Extension.
    """
    ...

# --- test hooks of the unix port ----------------------------------------------------

def _ui_events() -> List[Tuple[Union[_UiEvent, int], str]]:
    """
    The UI messages since the last call, as ``(type, text)``; clears them.

    Availability: unix port only (a test hook; not in a firmware build).
    """
    ...

def _context() -> bytes:
    """
    The context the next ``ask()`` would send; sends nothing, adds no turn.

    Availability: unix port only (a test hook; not in a firmware build).
    """
    ...

@overload
def _clock() -> int:
    """
    The RTC seconds bentoclaw sees (0: not set).

    Availability: unix port only (a test hook; not in a firmware build).
    """

@overload
def _clock(s: Optional[int], /) -> int:
    """
    Fix the RTC bentoclaw sees at ``s`` seconds (``None``: the real clock again); the RTC seconds.

    Availability: unix port only (a test hook; not in a firmware build).

    Raises:
        TypeError: ``can't convert X to int``.
    """
