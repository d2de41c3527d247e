"""Serving the app with waitress, in-process, with enough threads for a table of phones.

Every open SSE stream holds one waitress worker thread for as long as the
phone watches, so the pool must be larger than the number of phones (waitress'
default of 4 starves with 6 streams; platform notes 3.1).  48 threads serve
20 phones with room for their page loads and POSTs.

:func:`serve` starts a server in a background thread (``cardtable run``, the
tests, the benchmark); :meth:`Server.close` ends every stream, closes the
listening socket and joins the thread, so the port is free again at once.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from waitress import create_server

THREADS = 48


class Server:
    """A waitress server bound to ``host:port`` (``port`` 0 picks a free one)."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 8000, *, threads: int = THREADS,
                 **adjustments: Any) -> None:
        self.app = app
        self._server = create_server(app, host=host, port=port, threads=threads,
                                     connection_limit=max(100, threads * 4),
                                     channel_timeout=120, ident="cardtable", **adjustments)
        self.host = host
        self.port = int(self._server.effective_port)
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def url(self) -> str:
        host = self.host if self.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        return f"http://{host}:{self.port}"

    def run(self) -> None:
        """Serve in the calling thread until :meth:`close` (or KeyboardInterrupt)."""
        self._server.run()

    def start(self) -> "Server":
        self._thread = threading.Thread(target=self.run, name=f"waitress:{self.port}", daemon=True)
        self._thread.start()
        return self

    def close(self, timeout: float = 5.0) -> None:
        """End the streams, stop accepting, close every connection, stop the workers."""
        if self._closed:
            return
        self._closed = True
        dash = getattr(self.app, "extensions", {}).get("cardtable")
        if dash is not None:
            # Wakes every worker blocked in an SSE stream, so shutdown can join them.
            dash.broker.close()
        server = self._server
        logging.getLogger("waitress").setLevel(logging.CRITICAL)   # no tracebacks for cut connections
        # Closing every dispatcher in the map (the listener, the trigger and
        # each open connection) empties it, which ends the asyncore loop.
        while server._map:
            for channel in list(server._map.values()):
                try:
                    channel.handle_close()
                except Exception:
                    channel.close()
        server.task_dispatcher.shutdown(timeout=timeout)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def serve(app: Any, host: str = "127.0.0.1", port: int = 8000, *, threads: int = THREADS,
          **adjustments: Any) -> Server:
    """Serve ``app`` in a background thread; returns the running :class:`Server` (``.close()`` stops it)."""
    return Server(app, host, port, threads=threads, **adjustments).start()
