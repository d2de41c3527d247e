"""The events of the table event log (``shared/events.md``), parsed and checked.

Each line of the log is a JSON object with an ``event`` field.  :func:`parse_event`
turns one into a small immutable value, or raises :class:`~referee.errors.Reject`
with a stable code (``malformed_event``, ``unknown_event``, ``unknown_card``)
and a message naming the field.

>>> parse_event({"event": "play", "seat": 1, "cards": ["10h", "Ts"]})
Play(seat=1, cards=(Card(rank=10, suit='H'), Card(rank=10, suit='S')))
>>> parse_event({"event": "play", "seat": 1, "cards": []})
Traceback (most recent call last):
...
referee.errors.Reject: malformed_event: play: 'cards' must be a non-empty list of cards
>>> to_json(parse_event({"event": "pass", "seat": 0}))
{'event': 'pass', 'seat': 0}

Fields beyond the contract's (a timestamp ``at``, a ``source`` such as
``camera`` or ``manual``) are allowed and kept by the store; the referee
ignores them.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Union

from referee.cards import Card, CardError, card_names, parse_card
from referee.errors import Reject


class NewGame(NamedTuple):
    game: str
    players: tuple[str, ...]
    dealer: int | None
    options: dict
    kind = "new_game"


class Draw(NamedTuple):
    seat: int
    card: Card
    kind = "draw"


class Deal(NamedTuple):
    """The hands of the current hand, by seat; optionally the face-down stock, top card first."""

    hands: tuple[tuple[Card, ...], ...]
    stock: tuple[Card, ...] | None = None
    kind = "deal"


class Play(NamedTuple):
    seat: int
    cards: tuple[Card, ...]
    kind = "play"


class Pass(NamedTuple):
    seat: int
    kind = "pass"


class Exchange(NamedTuple):
    """Face-down exchange of ``count`` cards; ``discards`` may name them when hands are known."""

    seat: int
    count: int
    discards: tuple[Card, ...] | None = None
    kind = "exchange"


class Trump(NamedTuple):
    card: Card
    kind = "trump"


class Bid(NamedTuple):
    seat: int
    tricks: int
    kind = "bid"


class Announce(NamedTuple):
    """A seat left with one card tells the table (big-two's last-card duty)."""

    seat: int
    kind = "announce"


class Undo(NamedTuple):
    kind = "undo"


class Amend(NamedTuple):
    index: int
    replacement: "Event"
    kind = "amend"


Event = Union[NewGame, Draw, Deal, Play, Pass, Exchange, Trump, Bid, Announce, Undo, Amend]
GAME_EVENTS = ("new_game", "draw", "deal", "play", "pass", "exchange", "trump", "bid", "announce")


def _malformed(kind: str, text: str) -> Reject:
    return Reject("malformed_event", f"{kind}: {text}")


def _int(obj: dict, kind: str, name: str, minimum: int = 0) -> int:
    value = obj.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _malformed(kind, f"'{name}' must be a whole number, got {value!r}")
    if value < minimum:
        raise _malformed(kind, f"'{name}' must be at least {minimum}, got {value}")
    return value


def _card(value: Any) -> Card:
    try:
        return parse_card(value)
    except CardError as exc:
        raise Reject("unknown_card", str(exc), card=value) from None


def _cards(obj: dict, kind: str, name: str, allow_empty: bool = False) -> tuple[Card, ...]:
    value = obj.get(name)
    if not isinstance(value, list) or (not value and not allow_empty):
        raise _malformed(kind, f"'{name}' must be a {'' if allow_empty else 'non-empty '}list of cards")
    return tuple(_card(v) for v in value)


def _new_game(obj: dict) -> NewGame:
    game = obj.get("game")
    if not isinstance(game, str) or not game:
        raise _malformed("new_game", "'game' must name a game, e.g. \"big-two\"")
    players = obj.get("players")
    if (not isinstance(players, list) or not players
            or not all(isinstance(p, str) and p.strip() for p in players)):
        raise _malformed("new_game", "'players' must be a non-empty list of names")
    if "dealer" not in obj:
        raise _malformed("new_game", "'dealer' is required: a seat number, or null for the draw")
    dealer = obj["dealer"]
    if dealer is not None:
        dealer = _int(obj, "new_game", "dealer")
    options = obj.get("options", {})
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise Reject("bad_option", "new_game: 'options' must be a JSON object")
    return NewGame(game, tuple(p.strip() for p in players), dealer, dict(options))


def _deal(obj: dict) -> Deal:
    hands = obj.get("hands")
    if not isinstance(hands, list) or not hands:
        raise _malformed("deal", "'hands' must be a list (by seat) of card lists")
    parsed = []
    for hand in hands:
        if not isinstance(hand, list):
            raise _malformed("deal", "'hands' must be a list (by seat) of card lists")
        parsed.append(tuple(_card(c) for c in hand))
    stock = _cards(obj, "deal", "stock", allow_empty=True) if obj.get("stock") is not None else None
    return Deal(tuple(parsed), stock)


def _exchange(obj: dict) -> Exchange:
    count = _int(obj, "exchange", "count")
    discards = _cards(obj, "exchange", "discards", allow_empty=True) if obj.get("discards") is not None else None
    if discards is not None and len(discards) != count:
        raise _malformed("exchange", f"'discards' names {len(discards)} cards but 'count' is {count}")
    return Exchange(_int(obj, "exchange", "seat"), count, discards)


def _amend(obj: dict) -> Amend:
    index = _int(obj, "amend", "index")
    replacement = obj.get("with")
    if not isinstance(replacement, dict):
        raise _malformed("amend", "'with' must be an event object")
    event = parse_event(replacement)
    if isinstance(event, Amend):
        raise _malformed("amend", "an amend cannot be replaced by another amend")
    return Amend(index, event)


_PARSERS = {
    "new_game": _new_game,
    "draw": lambda o: Draw(_int(o, "draw", "seat"), _card(o.get("card"))),
    "deal": _deal,
    "play": lambda o: Play(_int(o, "play", "seat"), _cards(o, "play", "cards")),
    "pass": lambda o: Pass(_int(o, "pass", "seat")),
    "exchange": _exchange,
    "trump": lambda o: Trump(_card(o.get("card"))),
    "bid": lambda o: Bid(_int(o, "bid", "seat"), _int(o, "bid", "tricks")),
    "announce": lambda o: Announce(_int(o, "announce", "seat")),
    "undo": lambda o: Undo(),
    "amend": _amend,
}
EVENT_TYPES = tuple(_PARSERS)


def parse_event(obj: Any) -> Event:
    """Check one log line (already decoded from JSON) and return its event."""
    if not isinstance(obj, dict):
        raise Reject("malformed_event", "an event must be a JSON object")
    kind = obj.get("event")
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        if "event" not in obj:
            raise Reject("malformed_event", "an event needs an 'event' field")
        raise Reject("unknown_event", f"unknown event {kind!r}; known: {', '.join(EVENT_TYPES)}")
    return parser(obj)


def to_json(event: Event) -> dict:
    """The canonical JSON object of an event (cards in canonical notation)."""
    kind = event.kind
    if kind == "new_game":
        return {"event": kind, "game": event.game, "players": list(event.players),
                "dealer": event.dealer, "options": dict(event.options)}
    if kind == "amend":
        return {"event": kind, "index": event.index, "with": to_json(event.replacement)}
    out: dict[str, Any] = {"event": kind}
    for name, value in zip(event._fields, event):
        if value is None and name in ("stock", "discards"):
            continue
        if name in ("cards", "stock", "discards"):
            value = card_names(value)
        elif name == "card":
            value = str(value)
        elif name == "hands":
            value = [card_names(h) for h in value]
        out[name] = value
    return out
