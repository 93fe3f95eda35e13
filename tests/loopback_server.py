"""A threaded HTTP server on 127.0.0.1 for the tests' protocol doubles (started and stopped as a
context manager, on a free port)."""

from __future__ import annotations

import http.server
import threading


class LoopbackServer:
    """Serve ``handler`` (a ``BaseHTTPRequestHandler`` subclass) on 127.0.0.1; ``url`` is its base."""

    def __init__(self, handler: type[http.server.BaseHTTPRequestHandler]):
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
