"""The live table: the referee, its durable log, and whoever listens.

A :class:`Session` is what the camera pipeline, the dashboard and the
buttons all talk to.  :meth:`Session.submit` writes the event to the store
*first*, then judges it, then tells the listeners (dashboard pushes, LEDs)
and returns the verdict.  A valid ``new_game`` starts a new log in the store;
everything else goes into the current one.  After a crash,
:meth:`Session.resume` replays the last stored game.

>>> s = Session(Store(":memory:"))
>>> s.submit({"event": "new_game", "game": "big-two", "players": ["A", "B"], "dealer": 0})["ok"]
True
>>> s.submit({"event": "play", "seat": 1, "cards": ["3c"]})["message"]
'B leads 3C'
>>> Session.resume(s.store).referee.state()["to_act"]
0
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from referee.log import Referee, replay

from cardtable.store import Store

Listener = Callable[[dict, dict], None]     # (verdict, state)


class Session:
    """One table: the current game's judged log, kept durable (thread-safe)."""

    def __init__(self, store: Store, game_id: int | None = None, referee: Referee | None = None):
        self.store = store
        self.game_id = game_id
        self.referee = referee or Referee()
        self._lock = threading.RLock()
        self._listeners: list[Listener] = []

    @classmethod
    def resume(cls, store: Store, game_id: int | None = None) -> "Session":
        """The session of a stored game (the last one by default), replayed from its log."""
        if game_id is None:
            last = store.last_game()
            if last is None:
                return cls(store)
            game_id = last["id"]
        return cls(store, game_id, replay(store.events(game_id)))

    @property
    def lock(self) -> threading.RLock:
        """Hold it to read state, verdicts and log as one consistent view (re-entrant)."""
        return self._lock

    def listen(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(verdict, state)`` after every event; returns an unsubscribe function."""
        with self._lock:
            self._listeners.append(listener)
        return lambda: self._remove(listener)

    def _remove(self, listener: Listener) -> None:
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def submit(self, event: Any) -> dict:
        """Store, judge and announce one event; returns its verdict."""
        with self._lock:
            if isinstance(event, dict) and event.get("event") == "new_game":
                trial = Referee()
                if trial.submit(event)["ok"] or self.game_id is None:
                    self.game_id = self.store.create_game(event)
                    self.referee = Referee()
                    verdict = self.referee.submit(event)
                    self._after(verdict)
                    return verdict
            if self.game_id is None:
                # no game yet: nothing to store it in, and nothing it could change
                return Referee().submit(event)
            self.store.append(self.game_id, len(self.referee.raw), event)
            verdict = self.referee.submit(event)
            self._after(verdict)
            return verdict

    def _after(self, verdict: dict) -> None:
        state = self.state()
        if verdict.get("hand_result") or verdict.get("game_over") or verdict["event"] == "new_game":
            self.store.set_summary(self.game_id, {k: state.get(k) for k in ("scores", "winners", "game_over",
                                                                            "hand_number")})
        for listener in list(self._listeners):
            listener(verdict, state)

    def state(self) -> dict:
        with self._lock:
            state = self.referee.state()
            state["game_id"] = self.game_id
            return state
