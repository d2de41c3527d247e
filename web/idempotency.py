"""Retries that do not play a card twice.

A phone on venue Wi-Fi may send a POST, lose the answer, and send it again.
A client that names each change with an ``Idempotency-Key`` header gets the
first answer back for a repeat instead of a second event in the log.  Keys
are remembered for the last ``size`` changes, in memory (a restart forgets
them, which only matters for a retry that spans the restart).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable


class Replies:
    def __init__(self, size: int = 512) -> None:
        self.size = size
        self._seen: OrderedDict[str, Any] = OrderedDict()
        # One lock for check-then-submit: two copies of one request arriving
        # together must not both reach the log.  Events are judged one at a
        # time by the session anyway, so this costs no parallelism.
        self._lock = threading.Lock()

    def once(self, key: str | None, produce: Callable[[], Any]) -> tuple[Any, bool]:
        """``(reply, repeated)``: ``produce()``'s reply, or the stored one for a key seen before."""
        if not key:
            return produce(), False
        with self._lock:
            if key in self._seen:
                self._seen.move_to_end(key)
                return self._seen[key], True
            reply = produce()
            self._seen[key] = reply
            while len(self._seen) > self.size:
                self._seen.popitem(last=False)
            return reply, False
