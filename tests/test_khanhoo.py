"""Khanhoo (rule book section 3): every worked example of 3.9, the deck, leads,
following, deciding tricks, settlement and game end, every K60 option,
corrections, and random whole games (Hypothesis)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from helpers import judge, new_game, play, snapshot
from referee.cards import parse_cards
from referee.decks import KHANHOO_60
from referee.games.khanhoo import Khanhoo, ace_group_beater, classify, why_not_a_lead
from referee.log import Referee, replay
from referee.simulate import random_game


def start(n: int, dealer: int | str | None = "last", **options) -> dict:
    """A new game in which, by default, seat 0 (P1) leads: the dealer is the last seat."""
    return new_game("khanhoo", n, dealer=n - 1 if dealer == "last" else dealer, **options)


def exchange(seat: int, count: int, discards: list[str] | None = None) -> dict:
    event = {"event": "exchange", "seat": seat, "count": count}
    if discards is not None:
        event["discards"] = discards
    return event


def last(ref: Referee) -> dict:
    return ref.verdicts[-1]


def assert_all_ok(ref: Referee) -> None:
    bad = [v for v in ref.verdicts if not v["ok"]]
    assert not bad, bad


def single_tricks(n: int, leader: int, winners: list[int], seed: int = 0) -> list[dict]:
    """The plays of one-card tricks won by ``winners`` in turn, using the deck's real
    copies (so the ledger accepts them); the test then checks every winner."""
    rng = random.Random(seed)
    for _ in range(1000):
        events = _attempt(n, leader, winners, rng)
        if events is not None:
            return events
    raise AssertionError("no way found to build these tricks")


def _attempt(n, leader, winners, rng):
    pool = list(KHANHOO_60.cards())
    rng.shuffle(pool)
    events = []
    for w in winners:
        order = [(leader + i) % n for i in range(n)]
        lead = next((c for c in pool if not c.is_court), None)
        if lead is None:
            return None
        pool.remove(lead)
        chosen, best = {leader: lead}, lead
        if w != leader:
            higher = [c for c in pool if c.suit == lead.suit and not c.is_court and c.rank > lead.rank]
            if not higher:
                return None
            best = chosen[w] = higher[0]
            pool.remove(best)
        for seat in order:
            if seat not in chosen:
                safe = [c for c in pool if c.is_court or c.suit != best.suit or c.rank < best.rank]
                if not safe:
                    return None
                chosen[seat] = safe[0]
                pool.remove(safe[0])
        events += [play(s, str(chosen[s])) for s in order]
        leader = w
    return events


def hand_of(n: int, leader: int, winners: list[int], **options) -> tuple[list[dict], Referee]:
    """A game whose first hand is the tricks ``winners``; checks each trick's winner."""
    events = [start(n, (leader - 1) % n, **options)] + single_tricks(n, leader, winners)
    ref = judge(events)
    assert_all_ok(ref)
    assert [v["trick_winner"] for v in ref.verdicts if "trick_winner" in v] == winners
    return events, ref


# -- 3.9 worked examples -----------------------------------------------------------------------
def test_example_1_duplicate_tie_goes_to_the_earlier_player():
    ref = judge([start(4), play(0, "5H"), play(1, "9C"), play(2, "5H"), play(3, "KS")])
    assert_all_ok(ref)
    assert last(ref)["trick_winner"] == 0
    state = ref.state()
    assert state["points"] == [1, 0, 0, 0]
    assert state["to_act"] == 0
    assert state["last_trick"]["plays"][2]["cards"] == ["5H"]


def test_example_1_order_matters_the_same_cards_later_lose():
    # the same four cards, but the copy of 5H comes from the leader's right: still the leader
    ref = judge([start(4), play(0, "5H"), play(1, "KS"), play(2, "9C"), play(3, "5H")])
    assert last(ref)["trick_winner"] == 0
    # and a 5H led by P2 after P1's ... P2's 6H beats both
    ref = judge([start(4), play(0, "5H"), play(1, "5H"), play(2, "6H"), play(3, "6H")])
    assert last(ref)["trick_winner"] == 2


def test_example_2_court_lead_a_follower_sets_the_suit():
    ref = judge([start(4), play(0, "QS"), play(1, "JS"), play(2, "4D"), play(3, "8D")])
    assert_all_ok(ref)
    assert last(ref)["trick_winner"] == 3
    assert ref.state()["points"] == [0, 0, 0, 1]


def test_example_3_court_lead_the_first_non_court_decides():
    ref = judge([start(3), play(0, "KS"), play(1, "3C"), play(2, "9H")])
    assert last(ref)["trick_winner"] == 1


def test_example_4_all_courts_the_leader_wins():
    ref = judge([start(3), play(0, "JS"), play(1, "QS"), play(2, "KS")])
    assert last(ref)["trick_winner"] == 0
    assert ref.state()["points"] == [1, 0, 0]


def test_example_5_sequences_of_any_suit_contend_ties_to_the_earlier():
    ref = judge([start(4), play(0, "4D", "5D", "6D"), play(1, "5C", "6C", "7C"),
                 play(2, "5H", "6H", "7H"), play(3, "AH", "2H", "3H")])
    assert_all_ok(ref)
    assert last(ref)["trick_winner"] == 1
    assert ref.state()["points"] == [0, 3, 0, 0]
    assert ref.state()["to_act"] == 1
    assert "(contends)" in ref.verdicts[2]["message"]


def test_example_6_not_a_sequence_does_not_contend():
    head = [start(4), play(0, "AH", "2H", "3H", "4H"), play(1, "6C", "7C", "8C", "2D")]
    ref = judge(head + [play(2, "9C", "9D", "9H", "9H"), play(3, "JS", "QS", "KS", "5C")])
    assert_all_ok(ref)
    assert "(does not contend)" in ref.verdicts[2]["message"]
    assert last(ref)["trick_winner"] == 0
    assert ref.state()["points"] == [4, 0, 0, 0]
    # ... unless someone plays a 4-card sequence: top 8 beats the led 4
    ref = judge(head + [play(2, "9C", "9D", "9H", "9H"), play(3, "5D", "6D", "7D", "8D")])
    assert last(ref)["trick_winner"] == 3


def test_example_7_group_three_suit_rule():
    # As printed, 3.9.7 needs three 8C (P2 two, P3 one): the 60-card deck has two, so the
    # third copy is rejected.  The rule's point is kept below with P2 holding 9C 9C 9D.
    ref = judge([start(3), play(0, "7C", "7D", "7H"), play(1, "8C", "8C", "8D"), play(2, "8C", "8D", "8H")])
    assert ref.verdicts[2]["ok"] and "(does not contend)" in ref.verdicts[2]["message"]
    assert last(ref)["code"] == "card_already_played"
    ref = judge([start(3), play(0, "7C", "7D", "7H"), play(1, "9C", "9C", "9D"), play(2, "8C", "8D", "8H")])
    assert_all_ok(ref)
    assert last(ref)["trick_winner"] == 2
    assert ref.state()["points"] == [0, 0, 3]


def test_example_8_group_size_must_match():
    ref = judge([start(2), play(0, "3C", "3C", "3D", "3H"), play(1, "9C", "9D", "9H", "2C")])
    assert_all_ok(ref)
    assert last(ref)["trick_winner"] == 0
    assert ref.state()["points"] == [4, 0]
    # a bigger group of the right size wins
    ref = judge([start(2), play(0, "3C", "3C", "3D", "3H"), play(1, "9C", "9D", "9H", "9H")])
    assert last(ref)["trick_winner"] == 1


def test_example_9_ace_group_beaten_by_a_group_of_twos():
    ref = judge([start(2), play(0, "AC", "AD", "AH", "JS", "QS"), play(1, "2C", "2D", "2H", "2H", "2D")])
    assert_all_ok(ref)
    assert "ace group of 5" in ref.verdicts[1]["message"]
    assert last(ref)["trick_winner"] == 1
    assert ref.state()["points"] == [0, 5]


def test_example_10_ace_group_of_seven_is_unbeatable():
    lead = play(0, "AC", "AD", "AH", "AH", "JS", "QS", "KS")
    best = play(1, "9C", "9C", "9D", "9D", "9H", "9H", "8C")
    ref = judge([start(2), lead, best])
    assert_all_ok(ref)
    assert last(ref)["trick_winner"] == 0
    assert ref.state()["points"] == [7, 0]
    # only with the house rule K60-7 (courts in a follower's group) can it be beaten
    ref = judge([start(2, follower_courts_in_group=True), lead,
                 play(1, "9C", "9C", "9D", "9D", "9H", "9H", "KS")])
    assert last(ref)["trick_winner"] == 1


@pytest.mark.parametrize("cards,reason", [
    (["6H", "6H"], "two cards"),
    (["8H", "9H", "AH"], "does not wrap"),
    (["7H", "8H", "9H", "KS"], "courts may only join aces"),
    (["5C", "5D", "5C"], "no hearts"),
])
def test_example_11_illegal_leads_are_rejected(cards, reason):
    ref = judge([start(3)])
    before = snapshot(ref)
    verdict = ref.submit(play(0, *cards))
    assert not verdict["ok"]
    assert verdict["code"] == "invalid_combination"
    assert reason in verdict["message"]
    assert snapshot(ref) == before


def test_example_12_settlement_four_players_and_the_game_win():
    _, ref = hand_of(4, 0, [0] * 8 + [1] * 4 + [2] * 3)
    verdict = last(ref)
    result = verdict["hand_result"]
    assert [r["hand_points"] for r in result] == [8, 4, 3, 0]
    assert [r["paid"] for r in result] == [0, 4, 5, 8]
    assert [r["pot_won"] for r in result] == [17, 0, 0, 0]
    assert [r["points"] for r in result] == [17, -4, -5, -8]
    assert verdict["game_over"] is True
    state = ref.state()
    assert state["scores"] == [327, 306, 305, 302]
    assert state["pot"] == 0
    assert state["winners"] == [0] and state["game_over"]
    assert state["last_hand"]["paid_in"] == 17
    assert state["points"] == [8, 4, 3, 0]


def test_example_13_tied_top_pays_nothing_and_the_deal_moves_left():
    _, ref = hand_of(3, 0, [0] * 6 + [1] * 6 + [2] * 4)
    result = last(ref)["hand_result"]
    assert [r["paid"] for r in result] == [0, 0, 2]
    assert [r["points"] for r in result] == [0, 0, -2]
    assert "game_over" not in last(ref)
    state = ref.state()
    assert state["scores"] == [310, 310, 308]
    assert state["pot"] == 2
    assert state["hand_number"] == 2
    assert state["dealer"] == 0 and state["to_act"] == 1          # dealer was seat 2
    assert state["points"] == [0, 0, 0] and state["hand_counts"] == [16, 16, 16]
    assert state["last_hand"]["points"] == [6, 6, 4]
    assert not state["game_over"]


# -- the deck (3.2, 3.10) ------------------------------------------------------------------------------
@pytest.mark.parametrize("card", ["10H", "TD", "5S", "AS", "9S", "JH", "QC", "KD"])
def test_cards_outside_the_60_card_deck_are_rejected(card):
    ref = judge([start(3)])
    verdict = ref.submit(play(0, card))
    assert (verdict["ok"], verdict["code"]) == (False, "not_in_deck")
    assert verdict["card"] in (card, "10D")


def test_the_deck_is_every_card_twice():
    assert KHANHOO_60.size == 60
    assert all(n == 2 for n in KHANHOO_60.counts.values())
    assert len(KHANHOO_60.counts) == 30


def test_a_third_copy_is_rejected_across_tricks_and_within_a_play():
    ref = judge([start(2), play(0, "5H"), play(1, "5H")])
    assert last(ref)["trick_winner"] == 0                       # the tie goes to the leader
    before = snapshot(ref)
    verdict = ref.submit(play(0, "5H"))
    assert verdict["code"] == "card_already_played"
    assert snapshot(ref) == before
    ref = judge([start(2), play(0, "AC", "AD", "AH")])
    verdict = ref.submit(play(1, "5H", "5H", "5H"))
    assert verdict["code"] == "card_already_played"


def test_the_ledger_starts_afresh_each_hand():
    events, ref = hand_of(3, 0, [0] * 6 + [1] * 6 + [2] * 4)
    first_lead = events[1]["cards"]
    ref.submit(play(1, *first_lead))
    assert last(ref)["ok"]


# -- hand sizes and thresholds (3.3, K60-1, K60-2) ---------------------------------------------------------
@pytest.mark.parametrize("n,size,packets,needed", [(2, 20, 2, 11), (3, 16, 2, 9), (4, 15, 3, 8), (5, 12, 3, 7)])
def test_hand_sizes_and_thresholds_by_player_count(n, size, packets, needed):
    state = judge([start(n)]).state()
    assert state["hand_counts"] == [size] * n
    assert (state["hand_size"], state["packets"], state["win_threshold"]) == (size, packets, needed)
    assert state["scores"] == [310] * n
    assert state["pot"] == 0 and state["points"] == [0] * n
    assert state["to_act"] == 0


def test_hand_size_and_threshold_tables_are_configurable():
    ref = judge([start(3, **{"k60.hand_size": {"3": 14}, "k60.win_threshold": {"3": 8}})])
    state = ref.state()
    assert state["hand_counts"] == [14, 14, 14] and state["win_threshold"] == 8
    assert state["options"]["hand_size"]["2"] == 20           # the other counts keep their defaults


@pytest.mark.parametrize("options,n,name", [
    ({"hand_size": {"4": 16}}, 4, "hand_size"),                  # 64 cards
    ({"hand_size": {"4": 14}}, 4, "hand_size"),                  # not in packets of 3
    ({"hand_size": {"2": 32}}, 3, "hand_size"),    # after an elimination 2 players hold 64
    ({"hand_size": {"6": 10}}, 4, "hand_size"),
    ({"win_threshold": {"2": 21}}, 2, "win_threshold"),          # unreachable in one hand
    ({"packets": {"3": 0}}, 3, "packets"),
    ({"chips_start": 0}, 3, "chips_start"),
    ({"court_draw": "never"}, 3, "court_draw"),
    ({"bankrupt": "jail"}, 3, "bankrupt"),
    ({"trumps": True}, 3, "trumps"),
])
def test_bad_options_are_rejected(options, n, name):
    verdict = judge([start(n, **options)]).verdicts[0]
    assert (verdict["ok"], verdict["code"]) == (False, "bad_option")
    assert name in verdict["message"]


def test_player_count_is_two_to_five():
    for n in (1, 6):
        assert judge([start(n)]).verdicts[0]["code"] == "bad_players"


def test_a_cumulative_threshold_may_exceed_the_hand():
    ref = judge([start(2, threshold="cumulative", win_threshold={"2": 30})])
    assert ref.verdicts[0]["ok"] and ref.state()["win_threshold"] == 30


# -- leads (3.4) -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cards,kind,size,rank", [
    (["7D"], "single", 1, 7),
    (["QS"], "single", 1, 0),
    (["AC", "2C", "3C"], "sequence", 3, 3),
    (["9H", "AH", "2H", "3H", "4H", "5H", "6H", "7H", "8H"], "sequence", 9, 9),
    (["4C", "4D", "4H"], "group", 3, 4),
    (["4C", "4C", "4D", "4D", "4H", "4H"], "group", 6, 4),
    (["AC", "AD", "AH"], "ace_group", 3, 1),
    (["AC", "AC", "AD", "AD", "AH", "AH", "JS", "JS", "QS", "QS", "KS", "KS"], "ace_group", 12, 1),
])
def test_legal_leads(cards, kind, size, rank):
    lead = classify(parse_cards(cards))
    assert (lead.kind, lead.size, lead.rank) == (kind, size, rank)


@pytest.mark.parametrize("cards,reason", [
    (["3C", "4D", "5H"], "mixes ranks and suits"),
    (["3C", "4C", "6C"], "not consecutive"),
    (["3C", "4C", "4C"], "repeat a rank"),
    (["JS", "QS", "KS"], "courts are led one at a time"),
    (["AC", "AD", "KS"], "at least 3 aces"),
    (["AC", "AC", "AD", "KS"], "no hearts"),
    (["5C", "5D", "5D", "5C"], "no hearts"),
    (["AC", "AD"], "two cards"),
])
def test_other_leads_are_rejected_with_a_reason(cards, reason):
    assert classify(parse_cards(cards)) is None
    assert reason in why_not_a_lead(parse_cards(cards))
    verdict = judge([start(3)]).submit(play(0, *cards))
    assert verdict["code"] == "invalid_combination" and reason in verdict["message"]


def test_ace_group_beaters():
    beater = lambda cards, size, **kw: ace_group_beater(parse_cards(cards), size, **kw)  # noqa: E731
    assert beater(["2C", "2D", "2H"], 3) == 2
    assert beater(["2C", "2D", "2H"], 4) is None                    # exactly k cards
    assert beater(["2C", "2C", "2D"], 3) is None                    # three-suit rule (K60-8)
    assert beater(["2C", "2C", "2D"], 3, three_suits=False) == 2
    assert beater(["2C", "2D", "2H", "KS"], 4) is None              # no courts (K60-7)
    assert beater(["2C", "2D", "2H", "KS"], 4, courts_allowed=True) == 2
    assert beater(["2C", "2D", "KS", "QS"], 4, courts_allowed=True) is None   # still needs a Group
    assert beater(["AC", "AD", "AH"], 3) is None                    # an ace group never beats the leader


# -- following (3.5) and deciding (3.6) -----------------------------------------------------------------------
def test_followers_play_exactly_as_many_cards_as_led():
    ref = judge([start(3), play(0, "4D", "5D", "6D")])
    before = snapshot(ref)
    for cards in (["9C"], ["9C", "9D"], ["9C", "9D", "9H", "8C"]):
        verdict = ref.submit(play(1, *cards))
        assert verdict["code"] == "wrong_card_count" and "exactly 3" in verdict["message"]
        assert snapshot(ref) == before
    assert ref.submit(play(1, "KS", "2C", "9H"))["ok"]              # any cards at all


def test_turn_order_and_seats():
    ref = judge([start(3), play(0, "4D")])
    before = snapshot(ref)
    assert ref.submit(play(2, "5D"))["code"] == "not_your_turn"
    assert ref.submit(play(7, "5D"))["code"] == "bad_seat"
    assert ref.submit({"event": "pass", "seat": 1})["code"] == "not_in_this_game"
    assert snapshot(ref) == before
    state = ref.state()
    assert state["to_act"] == 1
    assert state["lead"] == {"seat": 0, "kind": "single", "size": 1, "cards": ["4D"]}
    assert state["trick"] == [{"seat": 0, "index": 1, "count": 1, "cards": ["4D"]}]


def test_a_suit_single_only_its_suit_wins():
    ref = judge([start(4), play(0, "2C"), play(1, "9D"), play(2, "KS"), play(3, "3C")])
    assert last(ref)["trick_winner"] == 3


def test_a_group_lead_is_beaten_by_a_higher_group_of_the_same_size_only():
    ref = judge([start(3), play(0, "4C", "4D", "4H"), play(1, "5C", "5D", "5H"), play(2, "6C", "7C", "8C")])
    assert last(ref)["trick_winner"] == 1                          # a sequence is another type
    ref = judge([start(3), play(0, "4C", "4D", "4H"), play(1, "5C", "5D", "5H"), play(2, "5C", "5D", "5H")])
    assert last(ref)["trick_winner"] == 1                          # equal rank: the earlier


def test_the_trick_winner_leads_next_and_points_add_up():
    ref = judge([start(3), play(0, "4D"), play(1, "8D"), play(2, "5D"),
                 play(1, "AC", "2C", "3C"), play(2, "JS", "QS", "KS"), play(0, "4C", "5C", "6C")])
    assert_all_ok(ref)
    assert last(ref)["trick_winner"] == 0
    state = ref.state()
    assert state["points"] == [3, 1, 0] and state["tricks_won"] == [1, 1, 0]
    assert state["hand_counts"] == [12, 12, 12] and state["to_act"] == 0


# -- options ----------------------------------------------------------------------------------------------
def test_group_three_suits_relaxed():
    moves = [play(0, "AC", "AD", "AH"), play(1, "2C", "2C", "2D")]
    assert last(judge([start(2)] + moves))["trick_winner"] == 0
    assert last(judge([start(2, group_three_suits=False)] + moves))["trick_winner"] == 1


def test_follower_courts_in_group():
    moves = [play(0, "AC", "AD", "AH", "JS"), play(1, "2C", "2D", "2H", "QS")]
    assert last(judge([start(2)] + moves))["trick_winner"] == 0
    assert last(judge([start(2, follower_courts_in_group=True)] + moves))["trick_winner"] == 1
    # only against an ace group: a Group lead is still beaten by Groups only
    moves = [play(0, "3C", "3D", "3H", "3H"), play(1, "4C", "4D", "4H", "KS")]
    assert last(judge([start(2, follower_courts_in_group=True)] + moves))["trick_winner"] == 0


def test_facedown_discards():
    ref = judge([start(3, facedown_discards=True), play(0, "KS")])
    before = snapshot(ref)
    assert ref.submit(exchange(1, 2))["code"] == "wrong_card_count"
    assert snapshot(ref) == before
    verdict = ref.submit(exchange(1, 1))
    assert verdict["ok"] and "face down" in verdict["message"]
    assert ref.state()["trick"][1] == {"seat": 1, "index": 3, "count": 1, "cards": None, "face_down": True}
    ref.submit(play(2, "3C"))
    # the face-down card cannot set the suit: P3's 3C does, and wins
    assert last(ref)["trick_winner"] == 2
    assert ref.state()["hand_counts"] == [15, 15, 15]
    # a lead is always face up
    assert ref.submit(exchange(2, 1))["code"] == "must_lead_face_up"
    # a face-down sequence never contends
    ref = judge([start(2, facedown_discards=True), play(0, "AC", "2C", "3C"), exchange(1, 3)])
    assert last(ref)["trick_winner"] == 0


def test_facedown_is_off_by_default():
    ref = judge([start(3), play(0, "KS")])
    assert ref.submit(exchange(1, 1))["code"] == "not_in_this_game"


def test_facedown_with_known_hands_names_the_cards():
    deal = {"event": "deal", "hands": [["5H", "6H"], ["7C", "8C"]]}
    ref = judge([start(2, facedown_discards=True, hand_size={"2": 2}, win_threshold={"2": 2}), deal, play(0, "5H")])
    assert ref.submit(exchange(1, 1))["code"] == "discards_needed"
    assert ref.submit(exchange(1, 1, ["6H"]))["code"] == "card_not_in_hand"
    assert ref.submit(exchange(1, 1, ["7C"]))["ok"]
    assert last(ref)["trick_winner"] == 0
    moves = ref.table.game.legal_moves()
    assert moves == [{"event": "play", "seat": 0, "cards": ["6H"]}]


def test_cumulative_threshold():
    opts = dict(threshold="cumulative", hand_size={"2": 4}, win_threshold={"2": 5})
    events, ref = hand_of(2, 0, [0, 0, 0, 1], **opts)
    assert ref.state()["points_total"] == [3, 1] and not ref.state()["game_over"]
    assert ref.state()["pot"] == 2 and ref.state()["to_act"] == 1
    second = single_tricks(2, 1, [0, 0, 1, 1], seed=3)
    for e in second:
        ref.submit(e)
    assert_all_ok(ref)
    state = ref.state()
    assert state["points_total"] == [5, 3] and state["game_over"] and state["winners"] == [0]
    assert state["scores"] == [312, 308] and state["pot"] == 0
    # the same two hands with the default per-hand threshold (and 4 points to win) go on
    per_hand = judge([start(2, hand_size={"2": 4}, win_threshold={"2": 4})] + events[1:] + second)
    assert_all_ok(per_hand)
    assert not per_hand.state()["game_over"] and per_hand.state()["hand_number"] == 3


@pytest.mark.parametrize("pot_to,scores,pot", [
    ("winner", [327, 306, 305, 302], 0),
    ("carry", [310, 306, 305, 302], 17),
    ("split", [314, 310, 309, 306], 1),
])
def test_pot_to(pot_to, scores, pot):
    _, ref = hand_of(4, 0, [0] * 8 + [1] * 4 + [2] * 3, pot_to=pot_to)
    state = ref.state()
    assert state["scores"] == scores and state["pot"] == pot and state["winners"] == [0]
    assert sum(state["scores"]) + state["pot"] == 4 * 310


def test_pot_start_is_taken_by_the_winner():
    _, ref = hand_of(4, 0, [0] * 8 + [1] * 4 + [2] * 3, pot_start=5)
    assert ref.state()["scores"][0] == 310 + 22
    assert last(ref)["hand_result"][0]["pot_won"] == 22


@pytest.mark.parametrize("rule,dealer", [("left", 1), ("top_scorer", 0), ("loser", 2)])
def test_next_dealer(rule, dealer):
    # dealer 0, P2 leads; points 5 4 3 3: the top scorer is the dealer, the lowest tie goes to
    # the first of them from the dealer's left
    _, ref = hand_of(4, 1, [0] * 5 + [1] * 4 + [2] * 3 + [3] * 3, next_dealer=rule)
    state = ref.state()
    assert state["last_hand"]["points"] == [5, 4, 3, 3]
    assert state["dealer"] == dealer and state["to_act"] == (dealer + 1) % 4


def small(**options) -> dict:
    return {"hand_size": {"2": 4, "3": 4}, **options}


def test_bankrupt_player_pays_what_he_has_and_is_out():
    opts = small(chips_start=2, win_threshold={"2": 3, "3": 4})
    _, ref = hand_of(3, 0, [0, 0, 0, 1], **opts)
    result = last(ref)["hand_result"]
    assert [r["paid"] for r in result] == [0, 2, 2]
    assert [r["bankrupt"] for r in result] == [False, False, True]
    state = ref.state()
    assert state["eliminated"] == [2] and state["scores"] == [2, 0, 0] and state["pot"] == 4
    assert not state["game_over"]                                  # two players remain
    assert state["hand_counts"] == [4, 4, 0] and state["hand_size"] == 4
    assert state["dealer"] == 0 and state["to_act"] == 1
    assert ref.submit(play(2, "9H"))["code"] == "eliminated"
    # hand 2 between the two left: seat 1 cannot pay his 2 either; seat 0 reaches 3 and wins
    for e in single_tricks(2, 1, [0, 0, 0, 1]):
        assert ref.submit(e)["ok"]
    assert [v["trick_winner"] for v in ref.verdicts[-8:] if "trick_winner" in v] == [0, 0, 0, 1]
    assert last(ref)["hand_result"][1]["bankrupt"] and last(ref)["hand_result"][1]["paid"] == 0
    state = ref.state()
    assert state["game_over"] and state["winners"] == [0]
    assert state["eliminated"] == [1, 2]
    assert state["scores"] == [6, 0, 0] and state["pot"] == 0


def test_last_player_standing_wins():
    _, ref = hand_of(2, 0, [0, 0, 0, 1], **small(chips_start=1, win_threshold={"2": 4}))
    state = ref.state()
    assert state["game_over"] and state["winners"] == [0]
    assert state["eliminated"] == [1] and state["scores"] == [2, 0] and state["pot"] == 0
    assert last(ref)["game_over"] is True


def test_bankrupt_borrow_and_unlimited():
    opts = small(chips_start=1, win_threshold={"2": 4})
    _, ref = hand_of(2, 0, [0, 0, 0, 1], bankrupt="borrow", **opts)
    state = ref.state()
    assert state["scores"] == [1, 0] and state["debts"] == [0, 1] and state["pot"] == 2
    assert not state["game_over"] and state["eliminated"] == []
    for e in single_tricks(2, 1, [1, 1, 1, 1]):
        ref.submit(e)
    state = ref.state()
    assert state["game_over"] and state["winners"] == [1]
    # seat 0 owed 4 with 1 chip (borrowed 3); seat 1 took the pot of 6 and repaid his 1
    assert state["debts"] == [3, 0] and state["scores"] == [0, 5] and state["pot"] == 0
    assert sum(state["scores"]) + state["pot"] - sum(state["debts"]) == 2
    _, ref = hand_of(2, 0, [0, 0, 0, 1], bankrupt="unlimited", **opts)
    state = ref.state()
    assert state["scores"] == [1, -1] and state["pot"] == 2 and state["eliminated"] == []


# -- the draw for first dealer (3.3, K60-9) -----------------------------------------------------------------
def draw(seat: int, card: str) -> dict:
    return {"event": "draw", "seat": seat, "card": card}


def test_draw_courts_count_above_nine_and_the_ace_is_low():
    ref = judge([start(3, dealer=None), draw(0, "9H"), draw(1, "KS"), draw(2, "8C")])
    assert ref.state()["dealer"] == 1 and ref.state()["to_act"] == 2
    ref = judge([start(2, dealer=None), draw(0, "AC"), draw(1, "2D")])
    assert ref.state()["dealer"] == 1
    # courts tie with each other: only those two draw again
    ref = judge([start(3, dealer=None), draw(0, "JS"), draw(1, "QS"), draw(2, "9C")])
    assert ref.state()["draw"]["contenders"] == [0, 1]
    assert Khanhoo.draw_key(parse_cards(["KS"])[0]) > Khanhoo.draw_key(parse_cards(["9D"])[0])


def test_draw_rejects_foreign_cards():
    ref = judge([start(3, dealer=None)])
    assert ref.submit(draw(0, "10H"))["code"] == "not_in_deck"


# -- known hands ------------------------------------------------------------------------------------------
def test_known_hands_are_checked_at_once():
    hands = [["5H", "6H", "AC", "AD"], ["7C", "8C", "9C", "KS"]]
    ref = judge([start(2, hand_size={"2": 4}, win_threshold={"2": 3}), {"event": "deal", "hands": hands}])
    assert ref.verdicts[1]["ok"]
    assert ref.submit(play(0, "9H"))["code"] == "card_not_in_hand"
    moves = ref.table.game.legal_moves()
    assert sorted(m["cards"][0] for m in moves) == ["5H", "6H", "AC", "AD"]  # no 3-card lead here
    ref.submit(play(0, "5H"))
    follows = ref.table.game.legal_moves()
    assert sorted(m["cards"][0] for m in follows) == ["7C", "8C", "9C", "KS"]
    three_5h = {"event": "deal", "hands": [["5H"] * 3 + ["6H"], hands[1]]}
    bad = judge([start(2, hand_size={"2": 4}, win_threshold={"2": 3}), three_5h])
    assert bad.verdicts[1]["code"] == "bad_deal"


def test_legal_leads_from_a_known_hand():
    hands = [["AC", "AD", "AH", "JS"], ["2C", "3C", "4C", "5C"]]
    ref = judge([start(2, hand_size={"2": 4}, win_threshold={"2": 3}), {"event": "deal", "hands": hands}])
    leads = sorted(tuple(m["cards"]) for m in ref.table.game.legal_moves())
    assert leads == sorted([("AC",), ("AD",), ("AH",), ("JS",), ("AC", "AD", "AH"), ("AC", "AD", "AH", "JS")])
    ref.submit(play(0, "AC", "AD", "AH", "JS"))
    follows = ref.table.game.legal_moves()
    assert follows == [{"event": "play", "seat": 1, "cards": ["2C", "3C", "4C", "5C"]}]


def test_a_large_follow_lists_every_contender_and_a_sample():
    pack = KHANHOO_60.cards()
    hands = [pack[0:40:2], pack[1:40:2]]
    ref = judge([start(2), {"event": "deal", "hands": [[str(c) for c in h] for h in hands]}])
    game = ref.table.game
    seq = [m for m in game.legal_moves() if len(m["cards"]) == 5]
    assert seq, "a 5-card sequence lead is available"
    ref.submit(seq[0])
    follows = ref.table.game.legal_moves()
    assert all(len(m["cards"]) == 5 for m in follows)
    assert 0 < len(follows) <= Khanhoo.MAX_LISTED + 60
    for m in follows[:20]:
        probe = judge([start(2), {"event": "deal", "hands": [[str(c) for c in h] for h in hands]}, seq[0], m])
        assert probe.verdicts[-1]["ok"]


# -- corrections --------------------------------------------------------------------------------------------
def test_amend_that_changes_the_trick_winner_shows_in_changed():
    ref = judge([start(4), play(0, "5H"), play(1, "9C"), play(2, "5H"), play(3, "KS")])
    assert last(ref)["trick_winner"] == 0
    verdict = ref.submit({"event": "amend", "index": 3, "with": play(2, "6H")})
    assert verdict["ok"]
    changes = verdict["changed"]
    assert {"what": "trick_winner", "index": 4, "before": 0, "after": 2} in changes
    assert ref.state()["points"] == [0, 0, 1, 0] and ref.state()["to_act"] == 2


def test_amend_a_rejected_misread_card():
    ref = judge([start(3), play(0, "10H")])
    assert not ref.verdicts[1]["ok"]
    ref.submit({"event": "amend", "index": 1, "with": play(0, "AH")})
    assert ref.verdicts[1]["ok"] and ref.state()["to_act"] == 1


def test_undo_reopens_the_trick():
    ref = judge([start(3), play(0, "JS"), play(1, "QS"), play(2, "KS")])
    assert ref.state()["points"] == [1, 0, 0]
    ref.submit({"event": "undo"})
    state = ref.state()
    assert state["points"] == [0, 0, 0] and state["to_act"] == 2 and len(state["trick"]) == 2
    ref.submit(play(2, "4D"))
    assert last(ref)["trick_winner"] == 2


def test_amend_that_changes_a_trick_changes_the_settlement_and_the_game():
    opts = {"hand_size": {"3": 2}, "win_threshold": {"3": 2}}
    ref = judge([start(3, **opts), play(0, "5H"), play(1, "4H"), play(2, "3H"),
                 play(0, "6C"), play(1, "7C"), play(2, "2C")])
    assert_all_ok(ref)
    assert [r["points"] for r in last(ref)["hand_result"]] == [0, 0, -1]
    assert ref.state()["hand_number"] == 2 and ref.state()["pot"] == 1
    verdict = ref.submit({"event": "amend", "index": 5, "with": play(1, "5C")})
    whats = {c["what"] for c in verdict["changed"]}
    assert {"trick_winner", "hand_result", "game_over", "scores", "winners"} <= whats
    assert {"what": "trick_winner", "index": 6, "before": 1, "after": 0} in verdict["changed"]
    state = ref.state()
    assert state["game_over"] and state["winners"] == [0]
    assert state["scores"] == [314, 308, 308] and state["pot"] == 0


# -- random whole games -------------------------------------------------------------------------------------
OPTIONS = st.fixed_dictionaries({}, optional={
    "chips_start": st.sampled_from([1, 3, 8, 20, 310]),
    "threshold": st.sampled_from(["per_hand", "cumulative"]),
    "pot_to": st.sampled_from(["winner", "carry", "split"]),
    "pot_start": st.integers(0, 9),
    "next_dealer": st.sampled_from(["left", "top_scorer", "loser"]),
    "facedown_discards": st.booleans(),
    "follower_courts_in_group": st.booleans(),
    "group_three_suits": st.booleans(),
    "bankrupt": st.sampled_from(["out", "borrow", "unlimited"]),
})


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 5), options=OPTIONS)
def test_random_games(seed, n, options):
    if options.get("threshold") == "cumulative":
        options["win_threshold"] = {"2": 25, "3": 20, "4": 18, "5": 15}
    log = random_game("khanhoo", n, random.Random(seed), options=options, max_events=1500)
    total = n * options.get("chips_start", 310) + options.get("pot_start", 0)
    live = Referee()
    before = None
    hands = 0
    for event in log:
        verdict = live.submit(event)
        assert verdict["ok"], verdict
        state = live.state()
        # chips are conserved between the players and the pot (debts are the bank's loans)
        assert sum(state["scores"]) + state["pot"] - sum(state["debts"]) == total
        if "hand_result" in verdict:
            hands += 1
            result = verdict["hand_result"]
            in_hand = [r for r in result if r["in_hand"]]
            # the points of a hand add up to the cards each player held
            assert sum(r["hand_points"] for r in in_hand) == before["hand_size"]
            assert len(in_hand) == n - len(before["eliminated"])
            top = max(r["hand_points"] for r in in_hand)
            for r in in_hand:
                owed = top - r["hand_points"]
                assert r["paid"] == owed or (r["bankrupt"] and r["paid"] < owed)
            assert all(r["points"] == 0 for r in result if not r["in_hand"])
            assert sum(r["points"] for r in result) == \
                -(state["pot"] - before["pot"]) + sum(state["debts"]) - sum(before["debts"])
            if options.get("bankrupt", "out") != "unlimited":
                assert min(state["scores"]) >= 0
        before = state
    final = live.state()
    if final["game_over"]:
        assert final["winners"] and hands >= 1
        assert len([s for s in range(n) if s not in final["eliminated"]]) >= 1
    else:
        assert len(log) >= 1500
    # replay equals the live state, and the log without its deal lines (a camera's view) scores the same
    replayed = replay(log)
    assert replayed.state() == live.state()
    unseen = replay([e for e in log if e["event"] != "deal"])
    assert all(v["ok"] for v in unseen.verdicts)
    assert not any("flags" in v for v in unseen.verdicts)           # no hidden-hand duties in this game
    assert unseen.state()["scores"] == final["scores"]
    assert unseen.state()["winners"] == final["winners"]
    assert unseen.state()["pot"] == final["pot"]


def test_two_players_reaching_a_low_threshold_share_the_win_and_the_pot():
    opts = dict(hand_size={"2": 4}, win_threshold={"2": 2}, pot_start=5)
    _, ref = hand_of(2, 0, [0, 0, 1, 1], **opts)
    state = ref.state()
    assert state["game_over"] and state["winners"] == [0, 1]
    assert state["scores"] == [312, 312] and state["pot"] == 1        # the odd chip stays in the pot
    assert [r["pot_won"] for r in last(ref)["hand_result"]] == [2, 2]


def test_court_draw_redraw_sets_courts_aside():
    draw = lambda seat, card: {"event": "draw", "seat": seat, "card": card}  # noqa: E731
    ref = judge([new_game("khanhoo", 2, dealer=None, court_draw="redraw"), draw(0, "KS"), draw(1, "5H")])
    assert "draws again" in ref.verdicts[1]["message"]
    assert ref.state()["phase"] == "draw" and ref.state()["to_act"] == 0
    ref.submit(draw(0, "3C"))
    assert ref.state()["dealer"] == 1
    # by default a court counts above 9 and wins the draw
    ref = judge([new_game("khanhoo", 2, dealer=None), draw(0, "KS"), draw(1, "9H")])
    assert ref.state()["dealer"] == 0


def test_courts_set_aside_in_the_draw_still_count_against_the_pack():
    draw = lambda seat, card: {"event": "draw", "seat": seat, "card": card}  # noqa: E731
    ref = judge([new_game("khanhoo", 2, dealer=None, court_draw="redraw"), draw(0, "QS"), draw(0, "QS")])
    assert ref.verdicts[2]["ok"]
    assert ref.submit(draw(0, "QS"))["code"] == "card_already_played"
