"""Fan-out of the table snapshot to every open SSE stream.

One :class:`Broker` per app.  Publishers (the session listener, the signals'
``when_changed``) hand it a new snapshot; it serialises the JSON once and
puts it in every subscriber's bounded queue.  A phone that falls behind is
dropped rather than slowing the table down: its browser reconnects and, like
every (re)connect, first receives the whole current snapshot.
"""

from __future__ import annotations

import itertools
import json
import queue
import threading
from typing import Any, Iterator

_CLOSED = object()


class Broker:
    def __init__(self, queue_size: int = 64) -> None:
        self._lock = threading.Lock()
        self._subs: set[queue.Queue] = set()
        self._ids = itertools.count(1)
        self._queue_size = queue_size
        self._closed = False
        self.seq = 0
        self.latest: dict[str, Any] = {}
        self.current: str = "{}"          # the latest snapshot, as JSON text

    # -- publishing ---------------------------------------------------------
    def publish(self, snapshot: dict[str, Any]) -> int:
        """Make ``snapshot`` the current one and send it to every stream; returns its id."""
        with self._lock:
            return self._publish(dict(snapshot))

    def merge(self, **fields: Any) -> int:
        """Replace some fields of the current snapshot (e.g. ``signals``) and send it.

        Done under the broker's lock, so a merge never resurrects an older
        snapshot that a concurrent :meth:`publish` has replaced.
        """
        with self._lock:
            return self._publish({**self.latest, **fields})

    def _publish(self, snapshot: dict[str, Any]) -> int:
        # called with the lock held
        self.seq = next(self._ids)
        snapshot["seq"] = self.seq
        self.latest = snapshot
        # serialised once, shared by every stream
        # default=str: a game field JSON cannot hold (a set, a Card) is shown as text, not a crash
        self.current = json.dumps(snapshot, separators=(",", ":"), default=str)
        message = (self.seq, self.current)
        for q in list(self._subs):
            try:
                q.put_nowait(message)
            except queue.Full:
                self._subs.discard(q)
                _force_put(q, _CLOSED)
        return self.seq

    # -- subscribing ---------------------------------------------------------
    def subscribe(self) -> queue.Queue:
        """A queue that first holds the current snapshot, then every later one."""
        q: queue.Queue = queue.Queue(maxsize=self._queue_size)
        with self._lock:
            # The snapshot goes in under the lock, so no publish can slip
            # between "what the client has" and "what it will be sent".
            q.put_nowait(_CLOSED if self._closed else (self.seq, self.current))
            if not self._closed:
                self._subs.add(q)
        return q

    def unsubscribe(self, q: queue.Queue) -> None:
        with self._lock:
            self._subs.discard(q)

    @property
    def subscribers(self) -> int:
        with self._lock:
            return len(self._subs)

    def close(self) -> None:
        """End every stream (server shutdown) so no worker thread stays blocked."""
        with self._lock:
            self._closed = True
            subs, self._subs = self._subs, set()
        for q in subs:
            _force_put(q, _CLOSED)

    def messages(self, q: queue.Queue, timeout: float) -> Iterator[tuple[int, str] | None]:
        """Yield queued snapshots, or None after ``timeout`` seconds of quiet; stops when closed."""
        while True:
            try:
                item = q.get(timeout=timeout)
            except queue.Empty:
                yield None
                continue
            if item is _CLOSED:
                return
            yield item


def _force_put(q: queue.Queue, item: Any) -> None:
    """Put ``item`` even into a full queue by dropping its oldest entries."""
    while True:
        try:
            q.put_nowait(item)
            return
        except queue.Full:
            try:
                q.get_nowait()
            except queue.Empty:
                pass
