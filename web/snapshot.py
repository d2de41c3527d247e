"""The snapshot every phone renders: state, the last verdict, the recent log.

A snapshot is what ``/api/stream`` sends on every (re)connect and after every
event, so a page never needs to replay anything: it draws whatever the latest
snapshot says.  It holds the referee's ``state`` (``events.md``, plus
``game_id``) and, for people, the plain words of the last verdict, its
breaches and corrections, and the last log lines (with their line index, so a
tap on a played card can send an ``amend`` of exactly that line).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from referee.errors import Reject
from referee.events import to_json
from referee.games import GAMES

from web import words


def line_event(referee: Any, index: int) -> Any:
    """The event at line ``index`` as it now reads (after amends), as JSON."""
    effective = referee.effective[index]
    if isinstance(effective, Reject):
        return referee.raw[index]
    return to_json(effective)


def verdict_view(players: list[str], verdict: dict) -> dict:
    """A verdict with its plain words attached (``words``, ``flag_words``, ``change_words``)."""
    out = dict(verdict)
    out["words"] = words.verdict_words(players, verdict)
    if verdict.get("flags"):
        out["flag_words"] = [words.flag_words(players, f) for f in verdict["flags"]]
    if "changed" in verdict:
        out["change_words"] = words.changes_words(players, verdict["changed"])
    return out


def build(session: Any, *, signals: Any = None, recent_lines: int = 16) -> dict[str, Any]:
    # The session's lock makes state, verdicts and log one consistent view;
    # listeners already run under it (it is re-entrant).
    with getattr(session, "lock", None) or nullcontext():
        state = session.state()
        referee = session.referee
        players = list(state.get("players") or [])
        n = len(referee.verdicts)
        recent = []
        for index in range(n - 1, max(-1, n - 1 - recent_lines), -1):
            event = line_event(referee, index)
            recent.append({"index": index, "event": event, "words": words.event_words(players, event),
                           "verdict": verdict_view(players, referee.verdicts[index])})
    game_cls = GAMES.get(state.get("game") or "")
    snapshot: dict[str, Any] = {
        "game_id": state.get("game_id"),
        "title": game_cls.title if game_cls else None,
        "state": state,
        "last": recent[0] if recent else None,
        "recent": recent,
        "breaches": [w for line in recent for w in line["verdict"].get("flag_words", [])],
    }
    if signals is not None and hasattr(signals, "describe"):
        snapshot["signals"] = describe_signals(signals)
    return snapshot


def describe_signals(signals: Any) -> dict | None:
    """``signals.describe()``, or None when the signals cannot say (closed, failing)."""
    try:
        return signals.describe()
    except Exception:      # the LEDs must never take the dashboard down with them
        return None
