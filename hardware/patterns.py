"""Timed on/off patterns and the small player that runs them off the caller's thread.

A *pattern* is a list of steps ``(value, seconds)``: the value is written, then
the player waits that long.  After the last step the output goes back to its
*rest* value (e.g. the dealer's LED back to steady on).  Changing the rest value
while a pattern plays does not cut the pattern short; it only changes where the
pattern ends.  Starting a new pattern on the same output cancels the old one.

>>> trick_pattern(Timings())
[(True, 0.15), (False, 0.15), (True, 0.15), (False, 0.15), (True, 0.15), (False, 0.15)]
>>> [v for v, _ in buzzer_pattern("error", Timings())]
['A4', None, 'A4']
>>> Timings().scaled(0).trick_on
0.0
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, fields, replace
from typing import Any, Callable

__all__ = [
    "Timings",
    "trick_pattern",
    "eliminated_pattern",
    "winner_pattern",
    "buzzer_pattern",
    "BUZZER_PATTERNS",
    "Player",
]

log = logging.getLogger(__name__)

Step = tuple[Any, float]


@dataclass(frozen=True)
class Timings:
    """Every duration the signals use, in seconds (counts are plain numbers).

    ``Timings().scaled(0.5)`` plays everything twice as fast; ``scaled(0)``
    makes every pattern instantaneous (the pin still goes through every
    state, which is what the tests check).
    """

    trick_on: float = 0.15
    trick_off: float = 0.15
    trick_blinks: int = 3
    eliminated_on: float = 0.6
    eliminated_off: float = 0.6
    eliminated_blinks: int = 2
    winner_on: float = 0.25
    winner_off: float = 0.25
    winner_blinks: int = 5
    beep_short: float = 0.08
    beep_gap: float = 0.08
    beep_long: float = 0.6
    pattern_gap: float = 0.3

    def scaled(self, factor: float) -> "Timings":
        """The same timings with every duration multiplied by ``factor``."""
        if factor < 0:
            raise ValueError("factor must be >= 0")
        return replace(self, **{f.name: getattr(self, f.name) * factor
                                for f in fields(self) if f.type in ("float", float)})


def _blinks(on: float, off: float, n: int) -> list[Step]:
    return [step for _ in range(n) for step in ((True, on), (False, off))]


def trick_pattern(t: Timings) -> list[Step]:
    """The trick winner's LED: ``trick_blinks`` quick blinks."""
    return _blinks(t.trick_on, t.trick_off, t.trick_blinks)


def eliminated_pattern(t: Timings) -> list[Step]:
    """A seat going out: ``eliminated_blinks`` slow blinks, then dark for the rest of the game."""
    return _blinks(t.eliminated_on, t.eliminated_off, t.eliminated_blinks)


def winner_pattern(t: Timings) -> list[Step]:
    """The game's winners: ``winner_blinks`` blinks, then steady on."""
    return _blinks(t.winner_on, t.winner_off, t.winner_blinks)


# Buzzer patterns as notes (a passive buzzer plays them; an active buzzer
# sounds while the note is not None).  All notes lie in A4..A6, the range of
# the TonalBuzzer the signals create (mid_tone A5, one octave either side).
#   error      two short low beeps             (rejected play or flagged breach)
#   eliminated one long beep (falling notes)   (a seat is out)
#   game_over  three short beeps and a long one, rising (the game is over)
BUZZER_PATTERNS = ("error", "eliminated", "game_over")


def buzzer_pattern(name: str, t: Timings) -> list[Step]:
    """The notes of one buzzer pattern (``None`` = silence)."""
    s, g, long = t.beep_short, t.beep_gap, t.beep_long
    if name == "error":
        return [("A4", s), (None, g), ("A4", s)]
    if name == "eliminated":
        return [("E5", long / 3), ("C#5", long / 3), ("A4", long / 3)]
    if name == "game_over":
        return [("A4", s), (None, g), ("C#5", s), (None, g), ("E5", s), (None, g), ("A5", long)]
    raise ValueError(f"unknown buzzer pattern {name!r}: expected one of {', '.join(BUZZER_PATTERNS)}")


class Player:
    """Plays patterns on one output through ``write(value)``.

    With ``background=True`` a pattern runs in a daemon thread and
    :meth:`play` returns at once; with ``background=False`` it runs in the
    caller's thread (tests, scripts).  ``on_change`` is called when a pattern
    starts or ends and when the rest value changes.

    >>> out = []
    >>> p = Player(out.append, rest=False, background=False)
    >>> p.play("blink", [(True, 0), (False, 0)]); out
    [False, True, False, False]
    >>> p.rest = True; out[-1]
    True
    """

    def __init__(self, write: Callable[[Any], None], *, rest: Any = None, background: bool = True,
                 on_change: Callable[[], None] | None = None, name: str = "player"):
        self._write = write
        self._rest = rest
        self._background = background
        self._on_change = on_change
        self._name = name
        self._lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self._stopping: threading.Event | None = None
        self._pattern: str | None = None
        self.last_pattern: str | None = None
        write(rest)

    @property
    def pattern(self) -> str | None:
        """Name of the pattern playing now, or None."""
        return self._pattern

    @property
    def rest(self) -> Any:
        """The value the output shows when no pattern plays."""
        return self._rest

    @rest.setter
    def rest(self, value: Any) -> None:
        with self._lock:
            changed = value != self._rest
            self._rest = value
            if self._pattern is None:
                self._write(value)
        if changed:
            self._changed()

    def play(self, name: str, steps: list[Step]) -> None:
        """Play ``steps`` then return to the rest value; cancels a running pattern."""
        self.cancel()
        stop = threading.Event()
        with self._lock:
            self._pattern = name
            self.last_pattern = name
            self._stopping = stop
            thread = None
            if self._background:
                thread = self._thread = threading.Thread(
                    target=self._run, args=(steps, stop), daemon=True, name=f"cardtable-{self._name}")
        self._changed()
        if thread is not None:
            thread.start()
        else:
            self._run(steps, stop)

    def _run(self, steps: list[Step], stop: threading.Event) -> None:
        # Every write happens under the lock after checking ``stop``: once
        # cancel() has set it, this pattern never touches the output again,
        # so cancel() need not wait for the thread.
        try:
            for value, seconds in steps:
                with self._lock:
                    if stop.is_set():
                        return
                    self._write(value)
                if seconds > 0 and stop.wait(seconds):
                    return
            with self._lock:
                if stop.is_set():
                    return
                self._finish(stop)
                self._write(self._rest)
        except Exception:  # a failing pin must not leave a zombie pattern behind
            log.exception("pattern on %s failed", self._name)
            with self._lock:
                self._finish(stop)
        self._changed()

    def _finish(self, stop: threading.Event) -> None:
        if self._stopping is stop:
            self._pattern = None
            self._stopping = None
            self._thread = None

    def cancel(self) -> None:
        """Stop a running pattern where it is (the output keeps its last value).

        Returns at once: the pattern's thread, if any, ends by itself and
        writes nothing more.
        """
        with self._lock:
            if self._stopping is not None:
                self._stopping.set()
                self._finish(self._stopping)

    def stop(self) -> None:
        """Stop a running pattern and show the rest value."""
        with self._lock:
            self.cancel()
            self._write(self._rest)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no pattern plays; True if none is playing on return."""
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        return self._pattern is None

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()
