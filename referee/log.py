"""The table event log and its verdicts: history is the truth.

:class:`Referee` holds the log (every line ever submitted, ``undo`` and
``amend`` lines included) and one verdict per line.  The state is a pure
function of the log: :func:`replay` of the same lines always gives the same
verdicts and the same state.

Corrections are events:

* ``undo`` retracts the latest accepted event that is still in effect; its
  line's verdict then carries ``undone: true``.
* ``amend`` replaces the event at ``index`` (0-based line number) with another
  one; everything after it is re-judged by replay, and the amend's own verdict
  lists in ``changed`` the outcomes that changed (a trick winner, a hand
  result, a verdict, the scores, the dealer, eliminations, the winners).

Whether an amend is valid does not depend on the game (its target must be an
earlier line that is not itself an amend, and its replacement must parse), so
the corrected log is known line by line; only the judging is replayed.

>>> ref = Referee()
>>> ref.submit({"event": "new_game", "game": "big-two", "players": ["Ann", "Bo"], "dealer": 0})["ok"]
True
>>> ref.submit({"event": "play", "seat": 1, "cards": ["3C"]})["code"]
'ok'
>>> v = ref.submit({"event": "play", "seat": 0, "cards": ["3D", "3H"]})
>>> v["ok"], v["code"]
(False, 'wrong_card_count')
>>> ref.submit({"event": "amend", "index": 1, "with": {"event": "play", "seat": 1, "cards": ["4C"]}})["ok"]
True
>>> ref.verdicts[1]["message"][:11]
'Bo leads 4C'
"""

from __future__ import annotations

from typing import Any, Iterable

from referee.errors import Reject
from referee.events import GAME_EVENTS, Amend, parse_event
from referee.game import Outcome
from referee.table import Table


def _verdict(index: int, kind: Any, outcome: Outcome | None = None, reject: Reject | None = None) -> dict:
    if reject is not None:
        out = {"index": index, "event": kind, "ok": False, "code": reject.code, "message": reject.message}
        for key in ("card", "option"):
            if key in reject.details:
                out[key] = reject.details[key]
        return out
    out = {"index": index, "event": kind, "ok": True, "code": "ok", "message": outcome.message if outcome else ""}
    if outcome is not None:
        if outcome.trick_winner is not None:
            out["trick_winner"] = outcome.trick_winner
        if outcome.hand_result is not None:
            out["hand_result"] = outcome.hand_result
        if outcome.game_over:
            out["game_over"] = True
        if outcome.flags:
            out["flags"] = [f.to_json() for f in outcome.flags]
    return out


class Referee:
    """A judged event log (see the module docstring)."""

    def __init__(self) -> None:
        self.raw: list[Any] = []          # the lines as submitted
        self.effective: list[Any] = []    # per line: its event after amends, or the Reject it parses to
        self.verdicts: list[dict] = []
        self.changed: dict[int, list[dict]] = {}   # amend line -> what it changed, when it was made
        self.table = Table()

    # -- public ----------------------------------------------------------------
    def submit(self, obj: Any) -> dict:
        """Append one line (a decoded JSON object) to the log and return its verdict."""
        index = len(self.raw)
        self.raw.append(obj)
        try:
            event = parse_event(obj)
        except Reject as rej:
            self.effective.append(rej)
            verdict = _verdict(index, obj.get("event") if isinstance(obj, dict) else None, reject=rej)
            self.verdicts.append(verdict)
            return verdict
        if event.kind == "amend":
            return self._amend(index, event)
        self.effective.append(event)
        if event.kind == "undo":
            self._judge_all()
            return self.verdicts[index]
        verdict = self._judge_one(index, event, self.table)
        self.verdicts.append(verdict)
        return verdict

    def state(self) -> dict[str, Any]:
        state = self.table.state()
        state["log_length"] = len(self.raw)
        return state

    def events_json(self) -> list[dict]:
        """The log as it finally reads (amended lines replaced), for display."""
        from referee.events import to_json
        return [to_json(e) if not isinstance(e, Reject) else self.raw[i] for i, e in enumerate(self.effective)]

    # -- judging -----------------------------------------------------------------
    @staticmethod
    def _judge_one(index: int, event: Any, table: Table) -> dict:
        try:
            outcome = table.apply(event, index)
        except Reject as rej:
            return _verdict(index, event.kind, reject=rej)
        return _verdict(index, event.kind, outcome)

    def _amend(self, index: int, amend: Amend) -> dict:
        target = amend.index
        if target >= index:
            rej = Reject("bad_index", f"amend can only replace an earlier line (0-{index - 1}), not {target}")
        elif isinstance(self.effective[target], Amend):
            rej = Reject("bad_index", f"line {target} is an amend; amend the line it replaced instead")
        else:
            rej = None
        if rej is not None:
            self.effective.append(rej)
            verdict = _verdict(index, "amend", reject=rej)
            self.verdicts.append(verdict)
            return verdict
        before = _outcomes(self.verdicts, self.table.state())
        self.effective[target] = amend.replacement
        self.effective.append(amend)
        self._judge_all(upto=index)
        after = _outcomes(self.verdicts, self.table.state())
        self.changed[index] = _diff(before, after)
        verdict = self._amend_verdict(index, amend)
        self.verdicts.append(verdict)
        return verdict

    def _amend_verdict(self, index: int, amend: Amend) -> dict:
        changes = self.changed[index]
        what = ", ".join(sorted({c["what"] for c in changes})) or "no outcome"
        verdict = _verdict(index, "amend", Outcome(f"line {amend.index} corrected; changed: {what}"))
        verdict["changed"] = changes
        return verdict

    def _judge_all(self, upto: int | None = None) -> None:
        """Re-judge lines 0..upto-1 (all lines if None) of the corrected log from scratch."""
        end = len(self.effective) if upto is None else upto
        table = Table()
        verdicts: list[dict] = []
        for i in range(end):
            event = self.effective[i]
            if isinstance(event, Reject):
                raw = self.raw[i]
                verdicts.append(_verdict(i, raw.get("event") if isinstance(raw, dict) else None, reject=event))
            elif event.kind == "amend":
                verdicts.append(self._amend_verdict(i, event))
            elif event.kind == "undo":
                target = _latest_in_effect(verdicts)
                if target is None:
                    verdicts.append(_verdict(i, "undo", reject=Reject("nothing_to_undo", "there is nothing to undo")))
                    continue
                verdicts[target]["undone"] = True
                table = self._rebuild(verdicts, i)
                verdicts.append({**_verdict(i, "undo", Outcome(f"line {target} ({verdicts[target]['event']}) undone")),
                                 "undid": target})
            else:
                verdicts.append(self._judge_one(i, event, table))
        self.verdicts = verdicts
        self.table = table

    def _rebuild(self, verdicts: list[dict], end: int) -> Table:
        """The position from the accepted, not undone events before line ``end``."""
        table = Table()
        for i in range(end):
            v = verdicts[i]
            if v["ok"] and not v.get("undone") and v["event"] in GAME_EVENTS:
                table.apply(self.effective[i], i)
        return table


def _latest_in_effect(verdicts: list[dict]) -> int | None:
    for i in range(len(verdicts) - 1, -1, -1):
        v = verdicts[i]
        if v["ok"] and not v.get("undone") and v["event"] in GAME_EVENTS:
            return i
    return None


_OUTCOME_KEYS = ("trick_winner", "hand_result", "game_over")


def _outcomes(verdicts: list[dict], state: dict) -> dict:
    per_line = {}
    for v in verdicts:
        if v["event"] == "amend":
            continue
        per_line[v["index"]] = (v["ok"] and not v.get("undone"), v["code"],
                                (v.get("trick_winner"), v.get("hand_result"), v.get("game_over")))
    final = {k: state.get(k) for k in ("scores", "dealer", "eliminated", "winners", "game_over")}
    return {"lines": per_line, "final": final, "verdicts": {v["index"]: v for v in verdicts}}


def _diff(before: dict, after: dict) -> list[dict]:
    changes: list[dict] = []
    for index, (ok_b, code_b, out_b) in before["lines"].items():
        ok_a, code_a, out_a = after["lines"].get(index, (None, None, (None,) * 3))
        vb, va = before["verdicts"][index], after["verdicts"].get(index, {})
        if (ok_b, code_b) != (ok_a, code_a):
            changes.append({"what": "verdict", "index": index, "before": code_b, "after": code_a})
        for key, b, a in zip(_OUTCOME_KEYS, out_b, out_a):
            if b != a:
                changes.append({"what": key, "index": index, "before": vb.get(key), "after": va.get(key)})
    for key, b in before["final"].items():
        a = after["final"].get(key)
        if a != b:
            changes.append({"what": key, "before": b, "after": a})
    return changes


def replay(lines: Iterable[Any]) -> Referee:
    """Judge a whole log from the start.

    >>> replay([{"event": "undo"}]).verdicts[0]["code"]
    'nothing_to_undo'
    """
    referee = Referee()
    for obj in lines:
        referee.submit(obj)
    return referee
