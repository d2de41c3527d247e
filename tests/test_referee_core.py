"""The event log contract: cards, events, undo, amend, the draw for first dealer."""

from __future__ import annotations

import pytest

from helpers import judge, new_game, pass_, play, snapshot
from referee.cards import CardError, parse_card
from referee.decks import KHANHOO_60, STANDARD_52, CardLedger
from referee.errors import Reject
from referee.games import GAMES
from referee.log import Referee, replay


# -- cards -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["10h", "Th", "10H", " tH ", "th"])
def test_card_notation_accepts_every_spelling_of_ten(text):
    assert str(parse_card(text)) == "10H"


@pytest.mark.parametrize("text", ["1H", "11H", "10", "H", "", "10X", "AHH", None, 10, ["AH"]])
def test_anything_else_is_a_clear_card_error(text):
    with pytest.raises(CardError, match="unknown card"):
        parse_card(text)


def test_decks_count_copies():
    assert STANDARD_52.size == 52 and KHANHOO_60.size == 60
    ledger = CardLedger(KHANHOO_60)
    qs = parse_card("QS")
    ledger.check([qs, qs])
    ledger.add([qs, qs])
    with pytest.raises(Reject) as exc:
        ledger.check([qs])
    assert exc.value.code == "card_already_played"
    with pytest.raises(Reject) as exc:
        ledger.check([parse_card("10H")])
    assert exc.value.code == "not_in_deck"


# -- malformed events ------------------------------------------------------------------------------------
@pytest.mark.parametrize("obj,code", [
    ([], "malformed_event"),
    ({"seat": 1}, "malformed_event"),
    ({"event": "play", "seat": "one", "cards": ["AH"]}, "malformed_event"),
    ({"event": "play", "seat": True, "cards": ["AH"]}, "malformed_event"),
    ({"event": "play", "seat": -1, "cards": ["AH"]}, "malformed_event"),
    ({"event": "play", "seat": 0, "cards": "AH"}, "malformed_event"),
    ({"event": "play", "seat": 0, "cards": ["AH", "ZZ"]}, "unknown_card"),
    ({"event": "new_game", "game": "big-two", "players": [], "dealer": 0}, "malformed_event"),
    ({"event": "new_game", "game": "big-two", "players": ["A", "B"]}, "malformed_event"),
    ({"event": "new_game", "game": "poker", "players": ["A", "B"], "dealer": 0}, "unknown_game"),
    ({"event": "new_game", "game": "big-two", "players": ["A", "B"], "dealer": 5}, "bad_seat"),
    ({"event": "new_game", "game": "big-two", "players": ["A", "B"], "dealer": 0, "options": []}, "bad_option"),
    ({"event": "amend", "index": 0}, "malformed_event"),
    ({"event": "amend", "index": 0, "with": {"event": "play", "seat": 0, "cards": ["XX"]}}, "unknown_card"),
    ({"event": "dance"}, "unknown_event"),
])
def test_malformed_events_get_a_stable_code_and_change_nothing(obj, code):
    ref = judge([new_game("big-two", 2), play(0, "5D")])
    before = snapshot(ref)
    v = ref.submit(obj)
    assert (v["ok"], v["code"]) == (False, code), v
    assert v["message"] and v["index"] == 2
    assert snapshot(ref) == before


def test_events_before_a_game_are_rejected():
    ref = Referee()
    assert ref.submit(play(0, "AH"))["code"] == "no_game"
    assert ref.state()["game"] is None


def test_every_game_declares_its_options_for_the_dashboard():
    for name, game in GAMES.items():
        assert game.title and game.min_players >= 2
        for option in game.options:
            d = option.describe()
            assert d["name"] and d["help"] and "default" in d, (name, d)


# -- undo -------------------------------------------------------------------------------------------------
def test_undo_retracts_the_latest_accepted_event():
    ref = judge([new_game("big-two", 3), play(0, "5D"), play(1, "6D")])
    after_one = snapshot(judge([new_game("big-two", 3), play(0, "5D")]))
    v = ref.submit({"event": "undo"})
    assert v["ok"] and v["undid"] == 2
    assert ref.verdicts[2]["undone"] is True
    assert snapshot(ref) == after_one
    # a rejected event is not "in effect": undo skips it
    ref.submit(play(2, "KC"))          # not seat 2's turn -> rejected
    v = ref.submit({"event": "undo"})
    assert v["undid"] == 1
    assert ref.state()["to_act"] is None      # back to the first lead


def test_undo_with_nothing_left_is_rejected():
    ref = judge([{"event": "undo"}])
    assert ref.verdicts[0]["code"] == "nothing_to_undo"
    ref = judge([new_game("big-two", 2), {"event": "undo"}, {"event": "undo"}])
    assert ref.verdicts[1]["ok"] and ref.verdicts[2]["code"] == "nothing_to_undo"
    assert ref.state()["game"] is None


def test_undo_across_a_hand_end_restores_the_hand():
    ref = judge([new_game("big-two", 2, hand_size=1), play(0, "3C")])
    assert ref.state()["hand_number"] == 2 and ref.state()["scores"] == [0, 20]
    ref.submit({"event": "undo"})
    assert ref.state()["hand_number"] == 1 and ref.state()["scores"] == [0, 0]


# -- amend -----------------------------------------------------------------------------------------------
def test_amend_re_judges_and_reports_what_changed():
    log = [new_game("big-two", 3), play(0, "5D"), play(1, "9C"), pass_(2), pass_(0)]
    ref = judge(log)
    assert ref.verdicts[4]["trick_winner"] == 1
    # the camera misread seat 1's card: it was a 4C, which does not beat 5D
    v = ref.submit({"event": "amend", "index": 2, "with": play(1, "4C")})
    assert v["ok"]
    assert ref.verdicts[2]["code"] == "does_not_beat"
    changed = {(c["what"], c.get("index")) for c in v["changed"]}
    assert ("verdict", 2) in changed
    # the same final log replayed from scratch gives the same verdicts and state
    again = replay(ref.raw)
    assert again.verdicts == ref.verdicts and again.state() == ref.state()


def test_amend_a_rejected_event_into_a_legal_one_changes_the_trick_winner():
    ref = judge([new_game("big-two", 3), play(0, "5D"), play(1, "5D"), pass_(1), play(2, "9C"), pass_(0),
                 pass_(1)])
    assert ref.verdicts[2]["code"] == "card_already_played"
    assert ref.verdicts[6]["trick_winner"] == 2
    v = ref.submit({"event": "amend", "index": 2, "with": play(1, "KD")})
    assert ref.verdicts[2]["ok"] and ref.verdicts[3]["code"] == "not_your_turn"
    assert "trick_winner" not in ref.verdicts[6]
    whats = {c["what"] for c in v["changed"]}
    assert {"verdict", "trick_winner"} <= whats


def test_amend_that_changes_a_score():
    log = [new_game("big-two", 2, hand_size=2), play(0, "3C"), pass_(1), play(0, "4C")]
    ref = judge(log)
    assert ref.state()["scores"] == [0, 20]
    v = ref.submit({"event": "amend", "index": 2, "with": play(1, "5C")})
    assert any(c["what"] == "scores" for c in v["changed"])
    assert ref.state()["scores"] == [0, 0] and ref.state()["hand_number"] == 1


@pytest.mark.parametrize("index", [5, 7, 100])
def test_amend_must_replace_an_earlier_line(index):
    ref = judge([new_game("big-two", 2), play(0, "5D"), {"event": "amend", "index": 1, "with": play(0, "6D")},
                 pass_(1), play(0, "7D")])
    before = snapshot(ref)
    v = ref.submit({"event": "amend", "index": index, "with": play(0, "8D")})
    assert (v["ok"], v["code"]) == (False, "bad_index")
    assert snapshot(ref) == before
    assert ref.submit({"event": "amend", "index": 2, "with": play(0, "8D")})["code"] == "bad_index"


def test_amended_undo_line():
    ref = judge([new_game("big-two", 3), play(0, "5D"), {"event": "undo"}])
    assert ref.state()["to_act"] is None
    ref.submit({"event": "amend", "index": 2, "with": play(1, "6D")})
    assert ref.verdicts[1]["ok"] and not ref.verdicts[1].get("undone")
    assert ref.state()["to_act"] == 2


# -- the draw for first dealer -------------------------------------------------------------------------------
def draw(seat, card):
    return {"event": "draw", "seat": seat, "card": card}


def test_draw_ties_redraw_among_the_tied_only():
    """With a ranking that ignores suits, equal ranks tie and only they draw again."""
    from referee.cards import parse_card as c
    from referee.games.big_two import BigTwo
    from referee.table import Draw

    class RankOnly(BigTwo):
        @classmethod
        def draw_key(cls, card):
            return 14 if card.rank == 1 else card.rank

    d = Draw(RankOnly, ("A", "B", "C"), {})
    assert d.apply(0, c("KC"))[1] is None
    assert d.apply(1, c("KD"))[1] is None
    outcome, dealer = d.apply(2, c("5S"))
    assert dealer is None and "A and B tie" in outcome.message
    assert d.contenders == [0, 1]
    with pytest.raises(Reject) as exc:
        d.apply(2, c("AS"))
    assert exc.value.code == "not_in_redraw"
    d.apply(0, c("QC"))
    outcome, dealer = d.apply(1, c("AH"))
    assert dealer == 1


def test_big_two_draw_never_ties_and_picks_the_highest():
    ref = judge([new_game("big-two", 3, dealer=None), draw(0, "KC"), draw(1, "2C"), draw(2, "AS")])
    assert all(v["ok"] for v in ref.verdicts)
    assert ref.state()["dealer"] == 1 and ref.state()["phase"] == "play"


def test_draw_rejects_out_of_turn_events_and_repeats():
    ref = judge([new_game("big-two", 3, dealer=None), draw(0, "KC")])
    before = snapshot(ref)
    for event, code in ((draw(0, "QC"), "already_drew"), (draw(1, "KC"), "card_already_played"),
                        (play(1, "3C"), "draw_in_progress"), (draw(5, "3C"), "bad_seat")):
        assert ref.submit(event)["code"] == code
        assert snapshot(ref) == before
    ref = judge([new_game("big-two", 2, dealer=None), draw(0, "KC"), draw(1, "3C")])
    assert ref.submit(draw(0, "4C"))["code"] == "not_drawing"
