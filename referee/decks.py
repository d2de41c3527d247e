"""Deck models: which cards exist, and how many copies of each.

The referee counts copies: with one standard pack a card may appear once per
hand; the 60-card khanhoo pack holds every one of its cards twice, so a third
copy is an error (a misread or a foreign card), never a new card.

>>> from referee.cards import parse_card
>>> STANDARD_52.copies(parse_card("10H"))
1
>>> KHANHOO_60.copies(parse_card("10H")), KHANHOO_60.copies(parse_card("QS")), KHANHOO_60.size
(0, 2, 60)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from referee.cards import ALL_CARDS, Card
from referee.errors import Reject


@dataclass(frozen=True)
class Deck:
    """A multiset of cards: ``counts[card]`` copies of each card in the pack."""

    name: str
    counts: dict[Card, int]

    def copies(self, card: Card) -> int:
        return self.counts.get(card, 0)

    @property
    def size(self) -> int:
        return sum(self.counts.values())

    def cards(self) -> list[Card]:
        """Every physical card, copies included (a sorted, shuffle-ready list)."""
        return [c for c in ALL_CARDS for _ in range(self.counts.get(c, 0))]

    def times(self, packs: int) -> "Deck":
        return Deck(f"{packs}x{self.name}", {c: n * packs for c, n in self.counts.items()})


def _deck(name: str, cards: Iterable[Card], copies: int = 1) -> Deck:
    return Deck(name, {c: copies for c in cards})


STANDARD_52 = _deck("standard-52", ALL_CARDS)
# Wilkinson's Khanhoo pack without jokers: A-9 of clubs, diamonds and hearts,
# and J Q K of spades, each twice.
KHANHOO_60 = _deck("khanhoo-60", [c for c in ALL_CARDS if (c.suit != "S" and c.rank <= 9)
                                   or (c.suit == "S" and c.rank >= 11)], copies=2)


class CardLedger:
    """Counts the cards seen face up against the deck, so no card is played twice.

    ``check`` raises :class:`Reject` without changing anything; ``add`` records.
    """

    __slots__ = ("deck", "seen")

    def __init__(self, deck: Deck):
        self.deck = deck
        self.seen: Counter[Card] = Counter()

    def check(self, cards: Iterable[Card]) -> None:
        wanted = Counter(cards)
        for card, n in wanted.items():
            allowed = self.deck.copies(card)
            if allowed == 0:
                raise Reject("not_in_deck", f"{card} is not in this game's deck ({self.deck.name})", card=str(card))
            if self.seen[card] + n > allowed:
                if allowed == 1 and n == 1:
                    raise Reject("card_already_played", f"{card} has already been played this hand",
                                 card=str(card))
                raise Reject("card_already_played",
                             f"the deck holds {allowed} {card} and this would make {self.seen[card] + n}",
                             card=str(card))

    def add(self, cards: Iterable[Card]) -> None:
        self.seen.update(cards)

    def copy(self) -> "CardLedger":
        other = CardLedger(self.deck)
        other.seen = Counter(self.seen)
        return other
