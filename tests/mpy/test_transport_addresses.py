# test_transport_addresses.py — the unix transport does no name lookup
# (mpy/claw_transport_unix.c, "Addresses"): a lookup could wait on DNS with
# no deadline, so a failed connect()'s time would depend on the network.
#  * numeric IPv4 and IPv6 addresses connect without a lookup;
#  * "localhost" (any case, with a final dot) is 127.0.0.1, then ::1, without
#    asking /etc/hosts or DNS, and a request after it works;
#  * every other name is refused at once (connect() False, one error, trust
#    back to USB), even one that /etc/hosts maps to 127.0.0.1, where the
#    backend listens: such a name would connect if it were looked up.
# needs: backend
import claw_rig as rig
import bentoclaw


def hosts_names_on_loopback():
    """Names other than localhost that this machine's /etc/hosts maps to
    127.0.0.1 (read before "/" becomes LittleFS)."""
    names = []
    try:
        with open("/etc/hosts") as f:
            text = f.read()
    except OSError:
        return names
    for line in text.split("\n"):
        words = line.split("#")[0].split()
        if len(words) >= 2 and words[0] == "127.0.0.1":
            names += [w for w in words[1:] if w.lower().rstrip(".") != "localhost" and len(w) < 64]
    return names


LOOPBACK_NAMES = hosts_names_on_loopback()
t = rig.Checker("transport-addresses")
rig.mount_ram()
PORT = rig.backend_port()
DEAD = 1  # nothing listens on port 1 on a test machine
# A refused name fails before any socket exists; a lookup that waited on DNS
# takes seconds (5 s per try by default). A refusal is far below this bound
# on any load; the bound only catches a lookup.
REFUSE_MS = bentoclaw.HTTP_TIMEOUT_MS


def connect_ok(host, what):
    e0 = bentoclaw.status()["error_count"]
    if not t.eq(bentoclaw.connect(host, PORT, rig.API_KEY), True, what + ": connect(%r)" % host):
        return
    t.eq(bentoclaw.safety()["trust_level"], "https", what + ": trust HTTPS")
    t.eq(bentoclaw.status()["error_count"], e0, what + ": no error counted")
    r = bentoclaw.ask("via " + host)
    t.check(r.startswith("Echo: via " + host), what + ": a request goes to the same host", r)
    bentoclaw.disconnect()


def connect_refused(host, port, what):
    e0 = bentoclaw.status()["error_count"]
    t0 = rig.ticks()
    ok = bentoclaw.connect(host, port, rig.API_KEY)
    ms = rig.elapsed(t0)
    t.eq(ok, False, what + ": connect(%r) fails" % host)
    t.check(ms < REFUSE_MS, what + ": returns at once (%d ms)" % ms, ms)
    t.eq(bentoclaw.safety()["trust_level"], "usb", what + ": trust back to USB")
    t.eq(bentoclaw.status()["error_count"], e0 + 1, what + ": one error counted")
    t.eq(bentoclaw.status()["connected"], False, what + ": not connected")


rig.classic_session(bentoclaw)
connect_ok("127.0.0.1", "numeric IPv4")
connect_ok("127.1", "short numeric IPv4")
connect_ok("localhost", "localhost")
connect_ok("LocalHost", "localhost in another case")
connect_ok("localhost.", "localhost with the root dot")

connect_refused("localhost", DEAD, "localhost, nothing listening (127.0.0.1 then ::1)")
connect_refused("::1", DEAD, "numeric IPv6, nothing listening")
for host in ("nonexistent.invalid", "localhost.localdomain", "ip6-localhost", "backend",
             "127.0.0.1.example", "256.256.256.256", "localhost..", "xlocalhost"):
    connect_refused(host, PORT, "name %r" % host)
print("names /etc/hosts maps to 127.0.0.1:", LOOPBACK_NAMES)
for host in LOOPBACK_NAMES:
    connect_refused(host, PORT, "/etc/hosts name %r (would reach the backend if looked up)" % host)
t.done()
