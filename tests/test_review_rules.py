"""Rules review of twenty-two and big-two (rules.md sections 2 and 4): adversarial cases
that random games rarely reach, each kept with the fix it proved necessary, and a fuzzer
that feeds random well-formed events (undo and amend included) to the referee."""

from __future__ import annotations

from referee.log import Referee, replay
from tests.helpers import judge, new_game, pass_, play, snapshot


def deal(*hands: list[str]) -> dict:
    return {"event": "deal", "hands": [list(h) for h in hands]}


def verdicts(events: list[dict]) -> list[dict]:
    return judge(events).verdicts


# -- big-two: D2 (4.5, B2-8) ---------------------------------------------------------------

# seat 1 goes down to one card (4C) at line 8; seat 0 then wins the round and leads
_D2_LEAD = [new_game("big-two", 2, 0, hand_size=9, d2_on_lead=True),
            play(0, "3C"), play(1, "KS"), pass_(0), play(1, "QS"), pass_(0), play(1, "JS"), pass_(0),
            play(1, "5C", "5D", "5H", "9H", "9S"), play(0, "7C", "7D", "7H", "6C", "6D"), pass_(1)]
_D2_HANDS = deal(["3C", "6C", "6D", "7C", "7D", "7H", "8C", "8D", "10C"],
                 ["4C", "5C", "5D", "5H", "9H", "9S", "JS", "QS", "KS"])


def test_d2_on_lead_binds_single_leads_only_known_hands():
    """B2-8 option: "when leading a single in that position, lead your highest".  A pair lead is
    free: it was rejected as must_play_highest (only when its first listed card was not the
    highest card in hand, so the card order in the event decided the verdict)."""
    events = [_D2_LEAD[0], _D2_HANDS, *_D2_LEAD[1:]]
    ref = judge(events + [play(0, "8C", "8D")])
    assert ref.verdicts[-1]["ok"], ref.verdicts[-1]
    ref = judge(events)
    assert {tuple(m["cards"]) for m in ref.table.game.legal_moves()} >= {("8C", "8D"), ("10C",)}
    assert ("8C",) not in {tuple(m["cards"]) for m in ref.table.game.legal_moves()}
    # a single lead must still be the highest
    before = snapshot(ref)
    v = ref.submit(play(0, "8C"))
    assert v["code"] == "must_play_highest" and snapshot(ref) == before


def test_d2_on_lead_pair_lead_is_not_flagged_hidden_hands():
    """Hands unknown: a pair lead raised a highest_single_duty claim, and a later higher single
    (10C) then flagged the pair lead although nothing was breached."""
    v = verdicts(_D2_LEAD + [play(0, "8C", "8D"), pass_(1), play(0, "10C")])
    assert all(x["ok"] for x in v), v
    assert not any(x.get("flags") for x in v), [x for x in v if x.get("flags")]
    assert "hand_result" in v[-1]


_BOMB = [new_game("big-two", 3, 0, hand_size=7, bombs=True),
         play(0, "3C"), play(1, "KD"), pass_(2), pass_(0),
         play(1, "4C", "5C", "6C", "7C", "8H"),          # seat 1 is left with JC
         play(2, "3D", "4D", "6D", "8D", "10D"), pass_(0), pass_(1),
         play(2, "QD")]                                   # a single; seat 0 follows, seat 1 holds one card
_BOMB_HANDS = deal(["3C", "9C", "9D", "9H", "9S", "2S", "KH"], ["KD", "4C", "5C", "6C", "7C", "8H", "JC"],
                   ["3D", "4D", "6D", "8D", "10D", "QD", "AD"])


def test_d2_following_with_a_bomb_is_not_a_lower_single():
    """With bombs on, a bomb over a single is neither a pass nor a lower single, so D2 allows it.
    It was accepted or rejected depending on whether its first listed card was the highest card
    in hand, and with hidden hands it raised a claim that a later higher single flagged."""
    known = [_BOMB[0], _BOMB_HANDS, *_BOMB[1:]]
    for bomb in (["9C", "9D", "9H", "9S"], ["9S", "9H", "9D", "9C"]):
        v = verdicts(known + [play(0, *bomb)])
        assert v[-1]["ok"], v[-1]
    v = verdicts(known + [play(0, "KH")])
    assert v[-1]["code"] == "must_play_highest"
    v = verdicts(known + [pass_(0)])
    assert v[-1]["code"] == "must_play_highest"
    ref = judge(known)
    assert {tuple(m["cards"]) for m in ref.table.game.legal_moves()} == {("2S",), ("9C", "9D", "9H", "9S")}
    v = verdicts(_BOMB + [play(0, "9C", "9D", "9H", "9S"), pass_(1), pass_(2), play(0, "2S")])
    assert all(x["ok"] for x in v), v
    assert not any(x.get("flags") for x in v), [x for x in v if x.get("flags")]
