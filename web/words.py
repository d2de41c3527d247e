"""Verdicts, breaches and corrections in plain words, for people at the table.

The referee's own ``message`` is already a sentence ("Bo leads 4C"); this
module adds the words the referee leaves to its readers: what a flagged
breach means, and what an ``amend`` changed (its verdict's ``changed`` list).
The live page and the history page both use it, so a phone and the history
say the same thing.
"""

from __future__ import annotations

from typing import Any, Sequence

# Codes whose generic rendering ("not your turn") would read badly.
CODE_WORDS = {
    "ok": "accepted",
    "not_your_turn": "played out of turn",
    "wrong_card_count": "wrong number of cards",
    "does_not_beat": "does not beat the table",
    "unknown_card": "not a card",
    "card_already_played": "card already played",
    "highest_single_duty": "did not play the highest single when the next player had one card",
    "not_lowest_holder": "led the first hand without holding the lowest card",
    "lowest_not_led": "the first lead did not contain the lowest card dealt",
    "no_announce": "did not announce a last card",
    "revoke": "did not follow suit",
    "nothing_to_undo": "nothing to undo",
}


def code_words(code: Any) -> str:
    if code is None:
        return "nothing"
    return CODE_WORDS.get(str(code), str(code).replace("_", " "))


def seat_name(players: Sequence[str], seat: Any) -> str:
    if isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < len(players):
        return players[seat]
    return "nobody" if seat is None else f"seat {seat}"


def seats_words(players: Sequence[str], seats: Any) -> str:
    if not seats:
        return "none"
    if isinstance(seats, list):
        return ", ".join(seat_name(players, s) for s in seats)
    return str(seats)


def flag_words(players: Sequence[str], flag: dict) -> str:
    """One flagged breach: who, what, and which earlier line it was."""
    who = seat_name(players, flag.get("seat"))
    what = flag.get("message") or f"{who}: {code_words(flag.get('code'))}"
    line = flag.get("refers_to")
    return f"Breach flagged: {what}" + (f" (line {line})" if line is not None else "")


def verdict_words(players: Sequence[str], verdict: dict | None) -> str:
    if not verdict:
        return ""
    message = verdict.get("message") or code_words(verdict.get("code"))
    if not verdict.get("ok"):
        return f"Refused ({code_words(verdict.get('code'))}): {message}"
    if verdict.get("undone"):
        return f"{message} (undone)"
    return message


def _points(result: Any) -> list[Any]:
    if isinstance(result, list):
        return [r.get("points") if isinstance(r, dict) else r for r in result]
    return []


def change_words(players: Sequence[str], change: dict) -> str:
    """One entry of an amend verdict's ``changed`` list as a sentence."""
    what, before, after = change.get("what"), change.get("before"), change.get("after")
    at = f"line {change['index']}: " if change.get("index") is not None else ""
    if what == "verdict":
        return f"{at}{code_words(before)} → {code_words(after)}"
    if what == "trick_winner":
        if after is None:
            return f"{at}no longer wins a trick (was {seat_name(players, before)})"
        if before is None:
            return f"{at}now {seat_name(players, after)} wins the trick"
        return f"{at}trick won by {seat_name(players, after)} instead of {seat_name(players, before)}"
    if what == "hand_result":
        b, a = _points(before), _points(after)
        if b and a and len(b) == len(a):
            parts = [f"{seat_name(players, s)} {x}→{y}" for s, (x, y) in enumerate(zip(b, a)) if x != y]
            return f"{at}hand points changed: " + (", ".join(parts) or "details")
        return f"{at}the hand " + ("now ends here" if after else "no longer ends here")
    if what == "game_over":
        return f"{at}the game " + ("is now over" if after else "is no longer over")
    if what == "scores" and isinstance(before, list) and isinstance(after, list):
        parts = [f"{seat_name(players, s)} {x}→{y}" for s, (x, y) in enumerate(zip(before, after)) if x != y]
        return "scores: " + (", ".join(parts) or "unchanged")
    if what == "dealer":
        return f"dealer: {seat_name(players, before)} → {seat_name(players, after)}"
    if what in ("eliminated", "winners"):
        return f"{what}: {seats_words(players, before)} → {seats_words(players, after)}"
    return f"{at}{str(what).replace('_', ' ')}: {before} → {after}"


def changes_words(players: Sequence[str], changes: Any) -> list[str]:
    if not isinstance(changes, list):
        return []
    if not changes:
        return ["the correction changed no outcome"]
    return [change_words(players, c) for c in changes if isinstance(c, dict)]


def event_words(players: Sequence[str], event: Any) -> str:
    """A log line in a few words ("Bo: play 4C", "undo", "amend line 3")."""
    if not isinstance(event, dict):
        return "not an event"
    kind = event.get("event")
    who = seat_name(players, event["seat"]) + ": " if "seat" in event else ""
    if kind == "play":
        cards = event.get("cards")
        return f"{who}play " + (" ".join(map(str, cards)) if isinstance(cards, list) else "?")
    if kind == "draw":
        return f"{who}draws {event.get('card')}"
    if kind == "pass":
        return f"{who}pass"
    if kind == "bid":
        return f"{who}bids {event.get('tricks')}"
    if kind == "exchange":
        return f"{who}exchanges {event.get('count')}"
    if kind == "trump":
        return f"trump {event.get('card')}"
    if kind == "amend":
        inner = event.get("with")
        return f"correct line {event.get('index')} to " + event_words(players, inner)
    if kind == "new_game":
        return f"new game of {event.get('game')}"
    return f"{who}{kind}"
