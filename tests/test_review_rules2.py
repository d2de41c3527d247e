"""Second rules review of khanhoo (rule book section 3) and trumf (section 5):
adversarial cases the random legal games do not reach, a soundness property for
trumf's hidden-hand flags in every stock mode and turn-up place, and a fuzz of
random well-formed events (no exception but Reject escapes; replay equals live)."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import judge, new_game, play, snapshot
from referee.cards import ALL_CARDS, Card, card_names, parse_card
from referee.decks import KHANHOO_60, STANDARD_52
from referee.games.trumf import PIQUET_32, rank_value
from referee.log import Referee, replay
from referee.simulate import random_deal


def ok(ref: Referee) -> bool:
    return all(v["ok"] for v in ref.verdicts)


# == trumf: hidden-hand flags are sound in every stock mode and turn-up place ==========================
def _deal_from(pack: list[Card], n: int, size: int, dealer: int) -> list[Counter]:
    """One card at a time, clockwise from the dealer's left (5.3)."""
    hands = [Counter() for _ in range(n)]
    for k in range(n * size):
        hands[(dealer + 1 + k) % n][pack.pop(0)] += 1
    return hands


def _truth_game(n: int, rng: random.Random, options: dict, revoke_rate: float, show_deal: bool):
    """A camera's log of a game where players sometimes break their duties, with the truth beside
    it: (log, referee, {log index: (true hand, lead suit, top trump, seat)}).  The table is
    simulated independently of the referee: deal, turn-up placement, draws, later deals."""
    size = options.get("hand_size", 7)
    mode = options.get("stock_mode", "trick_and_draw")
    place = options.get("trump_card", "bottom_of_stock")
    deck = PIQUET_32 if options.get("deck") == "32" else STANDARD_52
    pack = deck.cards()
    rng.shuffle(pack)
    dealer = n - 1
    hands = _deal_from(pack, n, size, dealer)
    turn_up = pack.pop(0)
    stock = pack
    pending = False
    if place == "bottom_of_stock":
        stock.append(turn_up)
    elif place == "taken_by_first_winner":
        pending = True
    trump = turn_up.suit
    ref = Referee()
    log = [new_game("trumf", n, dealer=dealer, **options)]
    if show_deal:
        log.append({"event": "deal", "hands": [card_names(sorted(h.elements())) for h in hands]})
    log.append({"event": "trump", "card": str(turn_up)})
    for e in log:
        assert ref.submit(e)["ok"], (e, ref.verdicts[-1])
    context: dict[int, tuple] = {}
    trick: list[Card] = []
    first_trick = True
    while not ref.table.game.game_over:
        game = ref.table.game
        if game.phase == "bidding":
            event = {"event": "bid", "seat": game.to_act, "tricks": rng.randint(0, 3)}
            log.append(event)
            assert ref.submit(event)["ok"]
            continue
        seat = game.to_act
        held = sorted(c for c, k in hands[seat].items() if k)
        legal = [c for c in held if game.duty_breach(seat, c, hands[seat]) is None]
        card = rng.choice(held if rng.random() < revoke_rate else legal)
        if game.duty_breach(seat, card, game.known[seat]) is not None:
            card = rng.choice(legal)     # a breach the referee sees at once (known cards)
        top = max((rank_value(c) for c in trick if c.suit == trump), default=0)
        context[len(log)] = (Counter(hands[seat]), trick[0].suit if trick else None, top, seat)
        event = play(seat, str(card))
        log.append(event)
        verdict = ref.submit(event)
        assert verdict["ok"], (verdict, log)
        hands[seat][card] -= 1
        trick.append(card)
        if "trick_winner" not in verdict:
            continue
        trick = []
        winner = verdict["trick_winner"]
        if mode == "trick_and_draw":
            if len(stock) + pending >= n:
                for k in range(n):
                    if k == 0 and pending:
                        hands[winner][turn_up] += 1
                        pending = False
                    else:
                        hands[(winner + k) % n][stock.pop(0)] += 1
            pending = False        # taken by the first winner, or dead if the first trick brought no draw
        first_trick = False
        if mode == "deal_rounds" and not any(sum(h.values()) for h in hands) and len(stock) >= n * size:
            dealer = (dealer + 1) % n
            hands = _deal_from(stock, n, size, dealer)
    return log, ref, context


def _check_flags_sound(log, ref, context, trump, must_trump, must_overtrump):
    for v in ref.verdicts:
        for f in v.get("flags", []):
            held, lead, top, seat = context[f["refers_to"]]
            mine = [c for c, k in held.items() if k]
            assert f["seat"] == seat
            if f["code"] == "revoke":
                assert any(c.suit == lead for c in mine), (f, log)
            elif f["code"] == "failed_to_trump":
                assert must_trump and lead != trump and any(c.suit == trump for c in mine), (f, log)
            else:
                assert f["code"] == "failed_to_overtrump" and must_overtrump, f
                assert any(c.suit == trump and rank_value(c) > top for c in mine), (f, log)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 7), st.integers(0, 2 ** 32 - 1),
       st.sampled_from(["trick_and_draw", "deal_rounds", "single_hand"]),
       st.sampled_from(["bottom_of_stock", "taken_by_first_winner", "set_aside"]),
       st.booleans(), st.booleans(), st.booleans(), st.sampled_from([7, 7, 3, 1]))
def test_trumf_hidden_flags_sound_in_every_mode(n, seed, mode, place, must_trump, must_overtrump, show_deal,
                                                 size):
    if place == "taken_by_first_winner":
        mode = "trick_and_draw"
    options = {"stock_mode": mode, "trump_card": place, "must_trump": must_trump,
               "must_overtrump": must_overtrump, "hand_size": size}
    log, ref, context = _truth_game(n, random.Random(seed), options, 0.3, show_deal)
    assert ok(ref)
    _check_flags_sound(log, ref, context, ref.state()["trump"], must_trump, must_overtrump)
    again = replay(log)
    assert again.verdicts == ref.verdicts and again.state() == ref.state()


def test_trumf_a_proven_revoke_closes_the_same_plays_failed_to_trump_claim():
    """must_trump binds only a player void in the lead suit (DK-5).  P2 discards 4C on a
    heart lead, then shows 2H: the revoke is proven, so he was not void and had no duty to
    trump.  The 3S he shows later must not flag a second breach (failed_to_trump) of line 3."""
    ref = judge([new_game("trumf", 2, dealer=1, stock_mode="single_hand", must_trump=True),
                 {"event": "trump", "card": "2S"},
                 play(0, "7H"), play(1, "4C"), play(0, "8H"), play(1, "2H"), play(0, "9H")])
    assert ref.verdicts[5]["flags"][0]["code"] == "revoke" and ref.verdicts[5]["flags"][0]["refers_to"] == 3
    assert [c for c in ref.state()["open_claims"] if c["refers_to"] == 3] == []
    v = ref.submit(play(1, "3S"))
    assert v["ok"] and not any(f["refers_to"] == 3 for f in v.get("flags", [])), v
    assert ok(ref)


def test_trumf_failed_to_trump_alone_is_still_flagged():
    """The same discard, but P2 shows a trump and never a heart: failed_to_trump is proven."""
    ref = judge([new_game("trumf", 2, dealer=1, stock_mode="single_hand", must_trump=True),
                 {"event": "trump", "card": "2S"},
                 play(0, "7H"), play(1, "4C"), play(0, "8D"), play(1, "3S")])
    assert [(f["code"], f["refers_to"]) for f in ref.verdicts[5]["flags"]] == [("failed_to_trump", 3)]


# == khanhoo ===========================================================================================
def test_khanhoo_court_draw_help_matches_what_the_option_does():
    """The dashboard shows the option's help: 'redraw' works (the court is set aside and the
    player draws again), so the help must not call it unavailable."""
    from referee.games.khanhoo import Khanhoo
    option = next(o for o in Khanhoo.options if o.name == "court_draw")
    assert "not available" not in option.help and "draws again" in option.help
    ref = judge([new_game("khanhoo", 2, dealer=None, court_draw="redraw"),
                 {"event": "draw", "seat": 0, "card": "QS"}])
    assert "draws again" in ref.verdicts[1]["message"]
