"""The fast five-card comparator against the simple reference, on many random
pairs and on every category boundary."""

from __future__ import annotations

import itertools
import random

import pytest

import bigtwo_reference as ref
from referee.cards import parse_cards
from referee.games.big_two import beats, combo

DECK = [r + s for r in ref.ORDER for s in ref.SUITS]


def fast(cards):
    return combo(parse_cards(cards))


def random_hand_of(category: str, rng: random.Random) -> list[str]:
    while True:
        if category in ("straight", "straight flush"):
            ranks = rng.choice(ref.STRAIGHTS)
            suit = rng.choice(ref.SUITS)
            hand = [r + (suit if category == "straight flush" else rng.choice(ref.SUITS)) for r in ranks]
        elif category == "flush":
            suit = rng.choice(ref.SUITS)
            hand = [r + suit for r in rng.sample(ref.ORDER, 5)]
        elif category == "full house":
            three, two = rng.sample(ref.ORDER, 2)
            hand = [three + s for s in rng.sample(ref.SUITS, 3)] + [two + s for s in rng.sample(ref.SUITS, 2)]
        else:
            four = rng.choice(ref.ORDER)
            hand = [four + s for s in ref.SUITS] + [rng.choice([c for c in DECK if not c.startswith(four)])]
        if ref.category(hand) == category:
            return hand


def test_classification_agrees_on_random_hands():
    rng = random.Random(7)
    for _ in range(5000):
        hand = rng.sample(DECK, 5)
        expected = ref.category(hand)
        got = fast(hand)
        assert (got.category.replace("_", " ") if got else None) == expected.replace("_", " ") \
            if expected else got is None, hand


def test_comparison_agrees_on_many_random_pairs():
    rng = random.Random(11)
    checked = 0
    for _ in range(6000):
        a = random_hand_of(rng.choice(ref.CATEGORIES), rng)
        b = random_hand_of(rng.choice(ref.CATEGORIES), rng)
        if set(a) & set(b):
            continue
        assert beats(fast(a), fast(b)) == ref.first_beats_second(a, b), (a, b)
        checked += 1
    assert checked > 3000


def _all_of(category: str) -> list[list[str]]:
    if category in ("straight", "straight flush"):
        out = []
        for ranks in ref.STRAIGHTS:
            for suits in ([[s] * 5 for s in ref.SUITS] if category == "straight flush"
                          else [list(p) for p in itertools.product(ref.SUITS, repeat=5) if len(set(p)) > 1][::37]):
                out.append([r + s for r, s in zip(ranks, suits)])
        return out
    if category == "full house":
        return [[t + s for s in "CDH"] + [p + s for s in "CD"] for t in ref.ORDER for p in ref.ORDER if p != t]
    if category == "four of a kind":
        return [[q + s for s in ref.SUITS] + [k] for q in ref.ORDER for k in (("3C" if q != "3" else "4C"),
                                                                                  ("2S" if q != "2" else "AS"))]
    raise ValueError(category)


@pytest.mark.parametrize("lower,upper", list(zip(ref.CATEGORIES, ref.CATEGORIES[1:])))
def test_every_category_boundary(lower, upper):
    """The strongest hand of each category loses to the weakest of the next."""
    rng = random.Random(3)
    lows = _all_of(lower) if lower != "flush" else [random_hand_of("flush", rng) for _ in range(200)]
    highs = _all_of(upper) if upper != "flush" else [random_hand_of("flush", rng) for _ in range(200)]
    strongest = max(lows, key=lambda h: fast(h).rank)
    weakest = min(highs, key=lambda h: fast(h).rank)
    assert ref.first_beats_second(weakest, strongest)
    assert beats(fast(weakest), fast(strongest))
    assert not beats(fast(strongest), fast(weakest))


def test_order_within_each_category_matches_the_reference():
    """Sorting a sample of each category by the fast key gives an order the reference agrees with."""
    rng = random.Random(5)
    for category in ref.CATEGORIES:
        hands = [random_hand_of(category, rng) for _ in range(60)]
        ordered = sorted(hands, key=lambda h: fast(h).rank)
        for a, b in zip(ordered, ordered[1:]):
            if fast(a).rank != fast(b).rank:
                assert ref.first_beats_second(b, a), (a, b)
