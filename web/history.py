"""A stored game replayed into hands and tricks, for the history pages.

The store keeps only the log; the referee's verdicts say where a trick ended
(``trick_winner``) and where a hand ended (``hand_result``), so replaying the
log gives the whole game trick by trick.  Only lines in effect count:
rejected and undone lines, ``undo`` and ``amend`` lines are listed in the log
view but are not part of any trick.
"""

from __future__ import annotations

from typing import Any

from referee.log import Referee, replay

from web import words
from web.snapshot import line_event, verdict_view

TRICK_EVENTS = ("play", "pass")


def replay_game(events: list[Any]) -> Referee:
    return replay(events)


def game_view(referee: Referee) -> dict[str, Any]:
    """Hands (each a list of tricks), the draw for dealer, and the full log, from a replayed game."""
    state = referee.state()
    players: list[str] = list(state.get("players") or [])
    log, draws, hands = [], [], []
    hand: dict[str, Any] | None = None
    trick: list[dict] = []

    def new_hand(number: int) -> dict[str, Any]:
        return {"number": number, "tricks": [], "open_trick": [], "other": [], "result": None, "flags": []}

    for index, verdict in enumerate(referee.verdicts):
        event = line_event(referee, index)
        if index == 0 and isinstance(event, dict) and isinstance(event.get("players"), list):
            players = [str(p) for p in event["players"]]
        view = verdict_view(players, verdict)
        log.append({"index": index, "event": event, "words": words.event_words(players, event), "verdict": view})
        if not verdict.get("ok") or verdict.get("undone") or not isinstance(event, dict):
            continue
        kind = event.get("event")
        if kind == "new_game":
            draws, hands, trick = [], [], []
            hand = new_hand(1)
            hands.append(hand)
            continue
        if hand is None:
            continue
        if kind == "draw":
            draws.append({"index": index, "seat": event.get("seat"), "card": event.get("card"),
                          "words": view["words"]})
            continue
        hand["flags"].extend(view.get("flag_words", []))
        if kind in TRICK_EVENTS:
            trick.append({"index": index, "seat": event.get("seat"), "cards": event.get("cards"),
                          "pass": kind == "pass", "who": words.seat_name(players, event.get("seat"))})
        elif kind not in ("undo", "amend"):
            hand["other"].append({"index": index, "words": view["words"]})
        if "trick_winner" in verdict and trick:
            hand["tricks"].append({"plays": trick, "winner": verdict["trick_winner"],
                                   "winner_name": words.seat_name(players, verdict["trick_winner"])})
            trick = []
        if verdict.get("hand_result") is not None:
            hand["result"] = result_rows(players, verdict["hand_result"])
            if trick:
                hand["tricks"].append({"plays": trick, "winner": None, "winner_name": None})
                trick = []
            if not verdict.get("game_over"):
                hand = new_hand(hand["number"] + 1)
                hands.append(hand)
    if hand is not None:
        hand["open_trick"] = trick
    # a hand that has not seen a single event yet is not worth a heading
    hands = [h for h in hands if h["tricks"] or h["open_trick"] or h["other"] or h["result"]]
    return {"players": players, "state": state, "draws": draws, "hands": hands, "log": log}


def result_rows(players: list[str], hand_result: Any) -> list[dict]:
    """Per-seat rows of a ``hand_result`` (whatever fields the game gives)."""
    rows = []
    if isinstance(hand_result, list):
        for seat, entry in enumerate(hand_result):
            details = entry if isinstance(entry, dict) else {"result": entry}
            rest = {k: v for k, v in details.items() if k != "points"}
            rows.append({"seat": seat, "name": words.seat_name(players, seat),
                         "points": details.get("points"), "details": rest, "text": _details_text(rest)})
    elif isinstance(hand_result, dict):
        for key, value in hand_result.items():
            rows.append({"seat": key, "name": str(key), "points": None, "details": {"result": value},
                         "text": str(value)})
    return rows


def _details_text(details: dict) -> str:
    """"cards left 1; packed" from a seat's hand result, leaving out what did not happen."""
    parts = []
    for key, value in details.items():
        label = key.replace("_", " ")
        if value is True:
            parts.append(label)
        elif value not in (False, None, 0, [], {}) or key == "cards_left":
            parts.append(f"{label} {value}")
    return "; ".join(parts)
