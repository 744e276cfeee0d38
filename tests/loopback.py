"""A loopback HTTP server for download tests: serves given bytes, counts requests, can lie."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Served:
    """A file to serve; ``content_length`` None sends the true length, -1 sends none at all."""

    body: bytes
    content_length: int | None = None


@dataclass
class Loopback:
    base: str
    files: dict[str, Served]
    requests: list[str] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"{self.base}/{path}"


@contextmanager
def loopback_server(files: dict[str, Served]) -> Iterator[Loopback]:
    """Serve ``files`` (path -> Served) on 127.0.0.1, an ephemeral port, from a thread."""
    served = Loopback("", files)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # the body ends when the connection closes

        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            path = self.path.lstrip("/")
            served.requests.append(path)
            entry = served.files.get(path)
            if entry is None:
                self.send_error(404)
                return
            self.send_response(200)
            if entry.content_length != -1:
                length = len(entry.body) if entry.content_length is None else entry.content_length
                self.send_header("Content-Length", str(length))
            self.end_headers()
            self.wfile.write(entry.body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    served.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
