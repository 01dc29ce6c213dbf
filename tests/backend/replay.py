"""replay.py — a loopback stand-in for an OpenAI-compatible endpoint that
answers with recorded exchanges (tests/backend/fixtures/*.json) and records
what the client sent.

A fixture is one recorded HTTP answer:
    {"source": "<where the format comes from>", "status": 200,
     "headers": {"Content-Type": "application/json", ...},
     "body": <the JSON body> | "body_text": "<a body that is not JSON>"}
Queued exchanges may add "delay_s" (sleep before answering) or "trickle_s"
(send the headers, then one body byte every trickle_s seconds).

    srv = Replay(); srv.start()
    srv.queue("llama_server_text")      # by fixture name, or a dict
    ... the client POSTs to srv.base_url + "/chat/completions" ...
    srv.requests  -> [{"path", "headers" (names in lower case), "json"}], oldest first
    srv.stop()
"""

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def fixture(name):
    with open(os.path.join(FIXTURES, name + ".json"), encoding="utf-8") as f:
        return json.load(f)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_POST(self):
        srv = self.server.replay
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw.decode("utf-8"))
        except ValueError:
            body = None
        with srv.lock:
            srv.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                                 "json": body})
            ex = srv.exchanges.pop(0) if srv.exchanges else None
        if ex is None:
            ex = {"status": 500, "headers": {"Content-Type": "application/json"},
                  "body": {"error": {"message": "replay: no exchange queued", "type": "test"}}}
        if "body" in ex:
            data = json.dumps(ex["body"], ensure_ascii=False).encode("utf-8")
        else:
            data = ex["body_text"].encode("utf-8")
        if ex.get("delay_s"):
            time.sleep(ex["delay_s"])
        try:
            self.send_response(ex["status"])
            for k, v in ex.get("headers", {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            if ex.get("trickle_s"):
                for i in range(len(data)):
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
                    if srv.stopping.wait(ex["trickle_s"]):
                        break
            else:
                self.wfile.write(data)
        except OSError:
            pass  # the client gave up
        self.close_connection = True


class Replay:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = []
        self.exchanges = []
        self.stopping = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.replay = self
        self.port = self.httpd.server_address[1]
        self.base_url = "http://127.0.0.1:%d/v1" % self.port
        self.thread = None

    def start(self):
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def queue(self, *exchanges, **extra):
        with self.lock:
            for ex in exchanges:
                ex = fixture(ex) if isinstance(ex, str) else dict(ex)
                ex.update(extra)
                self.exchanges.append(ex)

    def reset(self):
        with self.lock:
            self.requests = []
            self.exchanges = []

    def taken(self):
        """The requests received so far, and forget them."""
        with self.lock:
            out, self.requests = self.requests, []
            return out
