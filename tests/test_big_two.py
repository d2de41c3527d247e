"""Big Two (rule book section 4): every worked example of 4.8, the contract's
error cases, options, and the hidden-hand duties."""

from __future__ import annotations

import pytest

from helpers import judge, new_game, pass_, play, snapshot
from referee.cards import parse_cards
from referee.games.big_two import beats, combo


def C(*names: str):
    return combo(parse_cards(names))


def C2(*names: str):
    return combo(parse_cards(names), straight_rank="bigtwo")


# -- 4.8.1 suit order ---------------------------------------------------------------------
def test_example_1_suit_order():
    assert beats(C("7D"), C("7C"))
    assert beats(C("2C"), C("AS"))
    everything = [f"{r}{s}" for r in "3 4 5 6 7 8 9 10 J Q K A 2".split() for s in "CDHS"]
    assert not any(beats(C(c), C("2S")) for c in everything)


# -- 4.8.2 pairs ------------------------------------------------------------------------------
def test_example_2_pairs():
    assert beats(C("QS", "QC"), C("QH", "QD"))
    assert beats(C("2C", "2D"), C("AS", "AH"))
    assert not beats(C("QH", "QD"), C("QS", "QC"))


# -- 4.8.3 straight legality -------------------------------------------------------------------
@pytest.mark.parametrize("cards,legal", [
    (("10C", "JD", "QH", "KS", "AC"), True),
    (("AC", "2D", "3H", "4S", "5C"), True),
    (("2C", "3D", "4H", "5S", "6C"), True),
    (("JC", "QD", "KH", "AS", "2C"), False),
    (("KC", "AD", "2H", "3S", "4C"), False),
    (("QC", "KD", "AH", "2S", "3C"), False),
])
def test_example_3_straight_legality(cards, legal):
    assert (C(*cards) is not None) is legal


# -- 4.8.4 straight ranking ----------------------------------------------------------------------
def test_example_4_straight_ranking_default_and_bigtwo():
    low_wheel = ("AC", "2D", "3H", "4S", "5C")
    two_six = ("2C", "3D", "4H", "5S", "6C")
    broadway = ("10C", "JD", "QH", "KS", "AC")
    assert beats(C(*broadway), C(*two_six))
    three_seven = ("3C", "4D", "5H", "6S", "7C")
    for other in (two_six, three_seven, broadway):
        assert beats(C(*other), C(*low_wheel))
    assert beats(C2(*two_six), C2(*broadway))


# -- 4.8.5 equal straights -------------------------------------------------------------------------
def test_example_5_equal_straights_by_top_card_suit():
    assert beats(C("3D", "4C", "5C", "6D", "7S"), C("3C", "4D", "5H", "6S", "7C"))


# -- 4.8.6 and 4.8.7 five-card hierarchy ---------------------------------------------------------------
def test_example_6_five_card_hierarchy():
    flush = C("3H", "5H", "7H", "9H", "JH")
    straight = C("10C", "JD", "QH", "KS", "AC")
    assert beats(flush, straight)
    two_high_flush = C("2D", "4D", "6D", "8D", "10D")
    assert beats(C("3C", "3D", "3H", "4C", "4D"), two_high_flush)
    assert beats(C("3C", "3D", "3H", "3S", "KC"), C("2C", "2D", "2H", "AC", "AD"))
    assert beats(C("3C", "4C", "5C", "6C", "7C"), C("2C", "2D", "2H", "2S", "AC"))


def test_example_7_full_house_by_triple():
    assert beats(C("2C", "2D", "2H", "3C", "3D"), C("AC", "AD", "AH", "KC", "KD"))


# -- 4.8.8 quads need a kicker -----------------------------------------------------------------------------
def test_example_8_quads_need_a_kicker_and_earn_the_bonus():
    ref = judge([new_game("big-two", 2, hand_size=6), play(0, "7C", "7D", "7H", "7S")])
    assert ref.verdicts[1]["code"] == "invalid_combination"
    assert C("7C", "7D", "7H", "7S", "3D").earns_bonus
    ref = judge([new_game("big-two", 2, hand_size=5), play(0, "7C", "7D", "7H", "7S", "3D")])
    assert ref.verdicts[1]["hand_result"][0]["points"] == -5
    assert ref.state()["scores"][0] == -5


def test_bombs_option_makes_four_of_a_kind_a_play_of_its_own():
    ref = judge([new_game("big-two", 2, hand_size=6, bombs=True), play(0, "3C"),
                 play(1, "7C", "7D", "7H", "7S")])
    assert ref.verdicts[2]["ok"], ref.verdicts[2]
    assert ref.state()["bonuses"] == [0, 1]


# -- 4.8.9 round flow ------------------------------------------------------------------------------------------
def test_example_9_round_flow():
    ref = judge([new_game("big-two", 4), play(0, "5D"), pass_(1), play(2, "9C"), pass_(3), pass_(0),
                 play(1, "JH"), pass_(2), pass_(3), pass_(0)])
    assert all(v["ok"] for v in ref.verdicts), [v for v in ref.verdicts if not v["ok"]]
    assert ref.verdicts[-1]["trick_winner"] == 1
    state = ref.state()
    assert state["to_act"] == 1 and state["top"] is None
    v = ref.submit(play(1, "4C", "4D"))         # a new round with any size
    assert v["ok"], v


def test_pass_locks_out_option():
    events = [new_game("big-two", 3, pass_locks_out=True), play(0, "5D"), pass_(1), play(2, "9C")]
    ref = judge(events)
    # seat 1 passed: it is skipped for the rest of the round
    assert ref.state()["to_act"] == 0
    ref.submit(pass_(0))
    assert ref.verdicts[-1]["trick_winner"] == 2
    default = judge([new_game("big-two", 3), play(0, "5D"), pass_(1), play(2, "9C")])
    assert default.state()["to_act"] == 0
    default.submit(pass_(0))
    assert default.state()["to_act"] == 1         # by default seat 1 may play again


def test_counterclockwise_direction():
    ref = judge([new_game("big-two", 3, direction="counterclockwise"), play(0, "5D")])
    assert ref.state()["to_act"] == 2


# -- 4.8.10 the highest-single duty (D2) --------------------------------------------------------------------------
HANDS_D2 = [["3C", "9C", "9D", "10H", "KS"], ["5D", "8H", "JC", "AD", "4S"], ["7C", "6C", "6D", "10C", "2C"]]
STEPS_D2 = [play(0, "3C"), play(1, "5D"), play(2, "7C"), pass_(0), play(1, "8H"), play(2, "10C"), pass_(0),
            pass_(1), play(2, "6C", "6D"), play(0, "9C", "9D"), pass_(1), pass_(2), play(0, "10H")]


def test_example_10_duty_rejects_at_once_when_hands_are_known():
    ref = judge([new_game("big-two", 3, hand_size=5), {"event": "deal", "hands": HANDS_D2}] + STEPS_D2)
    assert all(v["ok"] for v in ref.verdicts), [v for v in ref.verdicts if not v["ok"]]
    before = snapshot(ref)
    for wrong in (play(1, "JC"), pass_(1)):
        v = ref.submit(wrong)
        assert (v["ok"], v["code"]) == (False, "must_play_highest")
        assert snapshot(ref) == before
    assert ref.submit(play(1, "AD"))["ok"]


def test_example_10_duty_is_flagged_later_when_hands_are_hidden():
    ref = judge([new_game("big-two", 3, hand_size=5)] + STEPS_D2)
    duty_line = len(ref.verdicts)
    v = ref.submit(play(1, "JC"))                # accepted: the referee cannot see P2's hand
    assert v["ok"] and "flags" not in v
    ref.submit(pass_(2))
    ref.submit(pass_(0))
    v = ref.submit(play(1, "AD"))                # P2 shows a higher single: the breach is proven
    assert v["flags"] == [{"code": "highest_single_duty", "seat": 1, "refers_to": duty_line,
                           "message": "P2 had to play his highest single"}]
    # the pass at line 11 (a pair on the table) bound nobody: exactly one flag in the whole log
    assert sum(len(x.get("flags", [])) for x in ref.verdicts) == 1


# -- 4.8.11 scoring ----------------------------------------------------------------------------------------------------
HANDS_11 = [["3C", "3D", "3H", "3S", "4C", "5C", "5D", "6C", "6D", "6H"],
            ["9C", "9D", "JC", "JD", "KC", "KD", "4D", "AS", "AH", "2D"],
            ["7C", "7D", "7H", "7S", "8C", "8D", "8H", "8S", "9H", "9S"],
            ["10C", "10D", "QC", "QD", "10H", "10S", "QH", "QS", "JH", "JS"]]
STEPS_11 = [play(0, "3C", "3D", "3H", "3S", "4C"), pass_(1), pass_(2), pass_(3),
            play(0, "5C", "5D"), play(1, "9C", "9D"), pass_(2), play(3, "10C", "10D"), pass_(0),
            play(1, "JC", "JD"), pass_(2), play(3, "QC", "QD"), pass_(0), play(1, "KC", "KD"), pass_(2),
            pass_(3), pass_(0), play(1, "4D"), pass_(2), pass_(3), play(0, "6C"), pass_(1), pass_(2), pass_(3),
            play(0, "6D", "6H")]


@pytest.mark.parametrize("with_deal", [True, False])
def test_example_11_scoring(with_deal):
    deal = [{"event": "deal", "hands": HANDS_11}] if with_deal else []
    ref = judge([new_game("big-two", 4)] + deal + STEPS_11)
    assert all(v["ok"] for v in ref.verdicts), [v for v in ref.verdicts if not v["ok"]]
    result = ref.verdicts[-1]["hand_result"]
    assert [r["points"] for r in result] == [-5, 3, 20, 6]
    assert [r["packed"] for r in result] == [False, False, True, False]
    assert ref.state()["scores"] == [-5, 3, 20, 6]
    # the winner deals and leads the next hand
    assert (ref.state()["dealer"], ref.state()["to_act"], ref.state()["hand_number"]) == (0, 0, 2)


def test_allow_negative_off_floors_at_zero():
    ref = judge([new_game("big-two", 4, allow_negative=False)] + STEPS_11)
    assert ref.state()["scores"] == [0, 3, 20, 6]


# -- 4.8.12 first lead with five players ------------------------------------------------------------------------------
def test_example_12_first_lead_by_the_lowest_card_dealt():
    deck = [f"{r}{s}" for r in "3 4 5 6 7 8 9 10 J Q K A 2".split() for s in "CDHS"]
    dealt = [c for c in deck if c not in ("3C", "3D")]
    hands = [dealt[i::5] for i in range(5)]
    holder = next(s for s, h in enumerate(hands) if "3H" in h)
    ref = judge([new_game("big-two", 5), {"event": "deal", "hands": hands}])
    assert ref.state()["to_act"] == holder
    other = (holder + 1) % 5
    v = ref.submit(play(other, hands[other][0]))
    assert v["code"] == "not_your_turn"
    assert ref.submit(play(holder, "3H"))["ok"]


def test_first_lead_without_the_lowest_card_is_flagged_when_proven():
    ref = judge([new_game("big-two", 3), play(0, "5D"), play(1, "6D"), pass_(2), pass_(0), play(1, "3C")])
    assert ref.verdicts[5]["flags"][0]["code"] == "not_lowest_holder"
    assert ref.verdicts[5]["flags"][0]["refers_to"] == 1
    # a 4 from someone else proves nothing: the leader may still hold a 3
    ref = judge([new_game("big-two", 3), play(0, "5D"), play(1, "6C"), play(2, "7C"), play(0, "8C")])
    assert not any("flags" in v for v in ref.verdicts)


def test_first_lead_must_include_lowest_option():
    ref = judge([new_game("big-two", 3, first_lead_must_include_lowest=True), play(0, "5D"), play(1, "6D"),
                 pass_(2), pass_(0), play(1, "4C")])
    assert ref.verdicts[5]["flags"][0]["code"] == "lowest_not_led"
    hands = [["3D", "5D"], ["3C", "6C"], ["7C", "8C"]]
    ref = judge([new_game("big-two", 3, hand_size=2, first_lead_must_include_lowest=True),
                 {"event": "deal", "hands": hands}])
    assert ref.state()["to_act"] == 1
    assert ref.submit(play(1, "6C"))["code"] == "must_include_lowest"
    assert ref.submit(play(1, "3C"))["ok"]


# -- 4.8.13 flush comparison ---------------------------------------------------------------------------------------------------
def test_example_13_flush_comparison():
    hearts = ("2H", "9H", "8H", "6H", "4H")
    spades = ("AS", "KS", "QS", "JS", "9S")
    assert beats(C(*hearts), C(*spades))
    suit_first = lambda *c: combo(parse_cards(c), flush_compare="suit")  # noqa: E731
    assert beats(suit_first(*spades), suit_first(*hearts))


# -- the contract's error cases ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("event,code", [
    (play(2, "9C"), "not_your_turn"),
    (play(1, "9C", "9D"), "wrong_card_count"),
    (play(1, "4C"), "does_not_beat"),
    (play(1, "1X"), "unknown_card"),
    (play(1, "5D"), "card_already_played"),
    (play(7, "9C"), "bad_seat"),
    (pass_(2), "not_your_turn"),
    ({"event": "play", "seat": 1}, "malformed_event"),
    ({"event": "flip", "seat": 1}, "unknown_event"),
    ({"event": "trump", "card": "2C"}, "not_in_this_game"),
])
def test_rejected_events_change_nothing(event, code):
    ref = judge([new_game("big-two", 3), play(0, "5D")])
    before = snapshot(ref)
    v = ref.submit(event)
    assert (v["ok"], v["code"]) == (False, code), v
    assert v["message"]
    assert snapshot(ref) == before


def test_pair_with_the_same_card_twice_is_a_duplicate():
    ref = judge([new_game("big-two", 3)])
    assert ref.submit(play(0, "9C", "9C"))["code"] == "duplicate_card"


def test_pass_on_lead_is_refused():
    ref = judge([new_game("big-two", 3), play(0, "5D"), pass_(1), pass_(2)])
    assert ref.submit(pass_(0))["code"] == "cannot_pass"


def test_card_not_in_hand_when_dealt():
    ref = judge([new_game("big-two", 2, hand_size=2), {"event": "deal", "hands": [["3C", "4C"], ["5C", "6C"]]}])
    assert ref.submit(play(0, "7C"))["code"] == "card_not_in_hand"


def test_end_after_n_hands_option():
    ref = judge([new_game("big-two", 2, hand_size=1, end="hands", end_at=2), play(0, "3C")])
    assert ref.verdicts[-1].get("game_over") is None and ref.state()["hand_number"] == 2
    v = ref.submit(play(0, "4C"))
    assert v["game_over"] is True and ref.state()["winners"] == [0]
    assert ref.submit(play(1, "5C"))["code"] == "game_over"


def test_game_ends_at_fifty_points_and_lowest_total_wins():
    events = [new_game("big-two", 2, hand_size=10)]
    # seat 0 sheds one card at a time while seat 1 passes: seat 1 is packed (20) each hand
    ranks = "3 4 5 6 7 8 9 10 J Q".split()
    for hand in range(3):
        for r in ranks:
            events.append(play(0, f"{r}C"))
            if r != ranks[-1]:
                events.append(pass_(1))
    ref = judge(events)
    assert all(v["ok"] for v in ref.verdicts), [v for v in ref.verdicts if not v["ok"]][:1]
    assert ref.state()["scores"] == [0, 60]
    assert ref.state()["game_over"] and ref.state()["winners"] == [0]
    assert ref.verdicts[-1]["game_over"] is True


def test_no_announce_penalty_option():
    ref = judge([new_game("big-two", 2, hand_size=3, no_announce_penalty=2), play(0, "3C", "3D"), play(1, "4C", "4D")])
    v = ref.verdicts[-1]
    assert v["flags"][0]["code"] == "no_announce" and v["flags"][0]["seat"] == 0
    ref = judge([new_game("big-two", 2, hand_size=3, no_announce_penalty=2), play(0, "3C", "3D"),
                 {"event": "announce", "seat": 0}, play(1, "4C", "4D")])
    assert "flags" not in ref.verdicts[-1]


def test_bad_options_are_rejected_with_the_option_name():
    ref = judge([])
    for options, name in (({"straight_rank": "weird"}, "straight_rank"), ({"hand_size": 14}, "hand_size"),
                          ({"nonsense": 1}, "nonsense"), ({"b2.bombs": "yes"}, "bombs")):
        v = ref.submit(new_game("big-two", 3, **options))
        assert v["code"] == "bad_option" and name in v["message"], v
    assert ref.submit(new_game("big-two", 6))["code"] == "bad_players"
    assert ref.submit({**new_game("big-two", 3), "options": {"b2.bombs": True}})["ok"]
