"""Cards in the notation of the table event log (``shared/events.md``).

A card is a rank and a suit.  Ranks are written ``A 2 3 4 5 6 7 8 9 10 J Q K``
(``T`` is accepted for 10 on input), suits ``C D H S``.  Input is
case-insensitive; output is canonical upper case with ``10``.

>>> parse_card("10h")
Card(rank=10, suit='H')
>>> str(parse_card("Th"))
'10H'
>>> parse_card("1X")
Traceback (most recent call last):
...
referee.cards.CardError: unknown card '1X': a card is a rank (A 2-10 J Q K, T for 10) and a suit (C D H S), e.g. 10H, QS
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

RANK_NAMES = {1: "A", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9",
              10: "10", 11: "J", 12: "Q", 13: "K"}
SUITS = ("C", "D", "H", "S")
SUIT_SYMBOLS = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}
SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}


class CardError(ValueError):
    """A string that is not a card in the log's notation."""


class Card(NamedTuple):
    """One card: ``rank`` is 1 (ace) .. 13 (king), ``suit`` one of ``C D H S``.

    Cards are small immutable values; use :func:`parse_card` to make one from
    text.  ``str(card)`` is the canonical notation.
    """

    rank: int
    suit: str

    def __str__(self) -> str:
        return _NAMES[self]

    @property
    def rank_name(self) -> str:
        return RANK_NAMES[self.rank]

    @property
    def is_court(self) -> bool:
        return self.rank >= 11

    def pretty(self) -> str:
        """The card with a suit symbol, for people: ``10♥``."""
        return RANK_NAMES[self.rank] + SUIT_SYMBOLS[self.suit]


ALL_CARDS: tuple[Card, ...] = tuple(Card(r, s) for s in SUITS for r in range(1, 14))
_NAMES: dict[Card, str] = {c: RANK_NAMES[c.rank] + c.suit for c in ALL_CARDS}

_PARSE: dict[str, Card] = {}
for _c in ALL_CARDS:
    _r = RANK_NAMES[_c.rank]
    _PARSE[_r + _c.suit] = _c
    if _r == "10":
        _PARSE["T" + _c.suit] = _c


def parse_card(text: object) -> Card:
    """Parse one card; raise :class:`CardError` with a clear message otherwise."""
    if isinstance(text, Card):
        return text
    if isinstance(text, str):
        card = _PARSE.get(text.strip().upper())
        if card is not None:
            return card
    shown = f"'{text}'" if isinstance(text, str) else repr(text)
    raise CardError(f"unknown card {shown}: a card is a rank (A 2-10 J Q K, T for 10) "
                    f"and a suit (C D H S), e.g. 10H, QS")


def parse_cards(items: Iterable[object]) -> tuple[Card, ...]:
    """Parse a list of cards (see :func:`parse_card`)."""
    return tuple(parse_card(x) for x in items)


def card_names(cards: Iterable[Card]) -> list[str]:
    """Canonical names, for JSON output."""
    return [_NAMES[c] for c in cards]
