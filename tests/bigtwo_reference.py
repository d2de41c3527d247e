"""A deliberately simple reference for Big Two's five-card hands.

Written from the rule book's definitions (section 4.4, defaults B2-2 and
B2-3), independently of ``referee.games.big_two``: categories are found by
counting and by looking the ranks up in the explicit list of allowed
straights, and hands are compared by the rule text.  Slow and obvious on
purpose; the fast comparator is tested against it.
"""

from __future__ import annotations

ORDER = ["3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2"]   # low to high
SUITS = ["C", "D", "H", "S"]                                                 # low to high
# every allowed straight, in poker order from lowest to highest (B2-2)
STRAIGHTS = [["A", "2", "3", "4", "5"], ["2", "3", "4", "5", "6"], ["3", "4", "5", "6", "7"],
             ["4", "5", "6", "7", "8"], ["5", "6", "7", "8", "9"], ["6", "7", "8", "9", "10"],
             ["7", "8", "9", "10", "J"], ["8", "9", "10", "J", "Q"], ["9", "10", "J", "Q", "K"],
             ["10", "J", "Q", "K", "A"]]
CATEGORIES = ["straight", "flush", "full house", "four of a kind", "straight flush"]


def split(card: str) -> tuple[str, str]:
    return card[:-1], card[-1]


def which_straight(cards: list[str]) -> int | None:
    ranks = sorted(split(c)[0] for c in cards)
    for i, s in enumerate(STRAIGHTS):
        if sorted(s) == ranks:
            return i
    return None


def category(cards: list[str]) -> str | None:
    ranks = [split(c)[0] for c in cards]
    suits = [split(c)[1] for c in cards]
    one_suit = len(set(suits)) == 1
    straight = which_straight(cards) is not None
    counts = sorted(ranks.count(r) for r in set(ranks))
    if straight and one_suit:
        return "straight flush"
    if counts == [1, 4]:
        return "four of a kind"
    if counts == [2, 3]:
        return "full house"
    if one_suit:
        return "flush"
    if straight:
        return "straight"
    return None


def top_card_of_straight(cards: list[str]) -> str:
    top_rank = STRAIGHTS[which_straight(cards)][-1]
    return next(c for c in cards if split(c)[0] == top_rank)


def rank_with_count(cards: list[str], n: int) -> str:
    ranks = [split(c)[0] for c in cards]
    return next(r for r in ranks if ranks.count(r) == n)


def first_beats_second(a: list[str], b: list[str]) -> bool:
    """Does five-card hand ``a`` beat five-card hand ``b``?"""
    ca, cb = category(a), category(b)
    if CATEGORIES.index(ca) != CATEGORIES.index(cb):
        return CATEGORIES.index(ca) > CATEGORIES.index(cb)
    if ca in ("straight", "straight flush"):
        if which_straight(a) != which_straight(b):
            return which_straight(a) > which_straight(b)
        return SUITS.index(split(top_card_of_straight(a))[1]) > SUITS.index(split(top_card_of_straight(b))[1])
    if ca == "flush":
        ra = sorted((ORDER.index(split(c)[0]) for c in a), reverse=True)
        rb = sorted((ORDER.index(split(c)[0]) for c in b), reverse=True)
        for x, y in zip(ra, rb):
            if x != y:
                return x > y
        return SUITS.index(split(a[0])[1]) > SUITS.index(split(b[0])[1])
    if ca == "full house":
        return ORDER.index(rank_with_count(a, 3)) > ORDER.index(rank_with_count(b, 3))
    return ORDER.index(rank_with_count(a, 4)) > ORDER.index(rank_with_count(b, 4))
