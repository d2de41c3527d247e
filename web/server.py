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

from waitress import create_server, wasyncore

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
        self._stop = threading.Event()
        self._shutdown_timeout = 5.0
        self._running = threading.Event()
        self._stopped = threading.Event()

    @property
    def url(self) -> str:
        host = self.host if self.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        return f"http://{host}:{self.port}"

    def run(self) -> None:
        """Serve in the calling thread until :meth:`close` (or KeyboardInterrupt / SystemExit)."""
        server = self._server
        self._running.set()
        try:
            # waitress' own run() loops until its map is empty; this loop also
            # stops when asked, so that the sockets are closed here, in the
            # loop's thread, never under a select() running in another one.
            while not self._stop.is_set():
                server.asyncore.loop(timeout=server.adj.asyncore_loop_timeout, map=server._map,
                                     use_poll=server.adj.asyncore_use_poll, count=1)
        except (SystemExit, KeyboardInterrupt):
            pass
        finally:
            # Workers first: a worker that finishes a stream pulls the trigger,
            # which must still be open then.  The streams have ended already
            # (close() and the CLI's SIGTERM handler close the broker first).
            self._stop.set()
            self._server.task_dispatcher.shutdown(timeout=self._shutdown_timeout)
            self._close_channels()
            self._running.clear()
            self._stopped.set()

    def start(self) -> "Server":
        self._thread = threading.Thread(target=self.run, name=f"waitress:{self.port}", daemon=True)
        self._thread.start()
        return self

    def close(self, timeout: float = 5.0) -> None:
        """End the streams, stop accepting, close every connection, stop the workers."""
        if self._closed:
            return
        self._closed = True
        self._shutdown_timeout = timeout
        dash = getattr(self.app, "extensions", {}).get("cardtable")
        if dash is not None:
            # Wakes every worker blocked in an SSE stream, so shutdown can join them.
            dash.broker.close()
        logging.getLogger("waitress").setLevel(logging.CRITICAL)   # no tracebacks for cut connections
        self._stop.set()
        if self._running.is_set() and threading.current_thread() is not self._thread:
            try:
                self._server.pull_trigger()         # wake the select() at once
            except OSError:
                pass                                # it wakes up within its timeout anyway
            self._stopped.wait(timeout)
        else:
            self._close_channels()
        self._server.task_dispatcher.shutdown(timeout=timeout)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _close_channels(self) -> None:
        """Close every dispatcher in the map: the listener, the trigger and each open connection."""
        server_map = self._server._map
        while server_map:
            for fd, channel in list(server_map.items()):
                try:
                    # the listener's handle_close is asyncore's "unhandled close event" warning
                    if type(channel).handle_close is wasyncore.dispatcher.handle_close:
                        channel.close()
                    else:
                        channel.handle_close()
                except Exception:
                    pass
                if server_map.get(fd) is channel:      # make sure every round makes progress
                    del server_map[fd]

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def serve(app: Any, host: str = "127.0.0.1", port: int = 8000, *, threads: int = THREADS,
          **adjustments: Any) -> Server:
    """Serve ``app`` in a background thread; returns the running :class:`Server` (``.close()`` stops it)."""
    return Server(app, host, port, threads=threads, **adjustments).start()
