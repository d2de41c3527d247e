"""``cardtable replay LOG.jsonl [--json]``: judge a recorded table event log.

With ``--json`` it prints exactly the document of ``shared/events.md``:
``{"verdicts": [...], "state": {...}}``.  Without it, a readable account:
every event with its verdict, trick winners, flagged breaches, and the
scores after each hand.

Exit status 0 when the log could be read, whatever the verdicts; 2 with
``FILE:LINE: reason`` on stderr when a line is not JSON, not an object, or
has no ``event`` field.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from referee.log import Referee, replay


class LogFormatError(ValueError):
    """A log file that cannot be read as a table event log."""


def read_log(path: str) -> list[dict]:
    """Read a JSON Lines log; raise :class:`LogFormatError` naming file and line."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise LogFormatError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise LogFormatError(f"{path}: not UTF-8 text") from None
    lines = text.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    events = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            raise LogFormatError(f"{path}:{number}: empty line (every line of the log is one event)")
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LogFormatError(f"{path}:{number}: not JSON: {exc.msg} (column {exc.colno})") from None
        if not isinstance(obj, dict):
            raise LogFormatError(f"{path}:{number}: not a JSON object")
        if "event" not in obj:
            raise LogFormatError(f"{path}:{number}: the object has no 'event' field")
        events.append(obj)
    return events


def account(referee: Referee) -> str:
    """A readable account of a judged log: trick by trick, scores after each hand."""
    out: list[str] = []
    players: list[str] = []
    for raw, verdict in zip(referee.raw, referee.verdicts):
        kind = verdict["event"] or "?"
        if kind == "new_game" and verdict["ok"]:
            players = list(raw.get("players", []))
            out.append("")
            out.append(f"== {raw.get('game')}: {', '.join(players)}")
        mark = "ok " if verdict["ok"] else "NO "
        if verdict.get("undone"):
            mark = "(undone) "
        line = f"{verdict['index']:>5}  {mark}{kind:<9} {verdict['message']}"
        if not verdict["ok"]:
            line += f"  [{verdict['code']}]"
        out.append(line)
        for flag in verdict.get("flags", []):
            out.append(f"        breach proven: {flag['code']} by seat {flag['seat']} at line {flag['refers_to']}"
                       + (f" ({flag['message']})" if flag.get("message") else ""))
        for change in verdict.get("changed", []):
            where = f" at line {change['index']}" if "index" in change else ""
            out.append(f"        changed {change['what']}{where}: {change['before']} -> {change['after']}")
        if "trick_winner" in verdict and "hand_result" not in verdict and not verdict.get("undone"):
            out.append(f"        trick to {_name(players, verdict['trick_winner'])}")
        if "hand_result" in verdict and not verdict.get("undone"):
            points = ", ".join(f"{_name(players, s)} {r.get('points', 0):+d}"
                               for s, r in enumerate(verdict["hand_result"]))
            out.append(f"        hand over: {points}")
        if verdict.get("game_over") and not verdict.get("undone"):
            out.append("        game over")
    state = referee.state()
    if state.get("game"):
        out.append("")
        scores = ", ".join(f"{name} {score}" for name, score in zip(state["players"], state["scores"]))
        out.append(f"scores: {scores}")
        if state["game_over"]:
            out.append("winners: " + ", ".join(state["players"][s] for s in state["winners"]))
        else:
            out.append(f"hand {state['hand_number']}, dealer {_name(state['players'], state['dealer'])}, "
                       f"to act {_name(state['players'], state['to_act'])}")
    return "\n".join(out).lstrip("\n")


def _name(players: list[str], seat: Any) -> str:
    if isinstance(seat, int) and 0 <= seat < len(players):
        return players[seat]
    return "anyone" if seat is None else str(seat)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="cardtable replay", description=__doc__.split("\n\n")[0])
    parser.add_argument("log", help="the event log, one JSON object per line")
    parser.add_argument("--json", action="store_true", help="print the verdicts and state as one JSON document")
    args = parser.parse_args(argv)
    try:
        events = read_log(args.log)
    except LogFormatError as exc:
        print(f"cardtable replay: {exc}", file=sys.stderr)
        return 2
    referee = replay(events)
    if args.json:
        json.dump({"verdicts": referee.verdicts, "state": referee.state()}, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(account(referee))
    return 0
