"""Trumf (rule book section 5): every worked example of 5.7, the turn-up, the stock
modes, honours, bidding, ties, the contract's reject cases, the hidden-hand
follow-suit rule (proven vs "cannot tell"), undo/amend, and random whole games.

Players are P1..Pn = seats 0..n-1, as in the rule book's examples; unless a
test says otherwise the dealer is the last seat, so P1 leads the first trick.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import judge, new_game, play, snapshot
from referee.cards import card_names, parse_card
from referee.decks import STANDARD_52
from referee.games.trumf import PIQUET_32, bid_trick_points, game_tricks, rank_value, trick_winner
from referee.log import Referee, replay
from referee.simulate import random_game


def start(n: int, trump: str = "2S", dealer: int | None = None, **options) -> list[dict]:
    """new_game (P1 leads) and the turned-up trump card."""
    return [new_game("trumf", n, dealer=n - 1 if dealer is None else dealer, **options),
            {"event": "trump", "card": trump}]


def start_dealt(n: int, dealt: dict, trump: str = "2S", dealer: int | None = None, **options) -> list[dict]:
    """new_game, the deal (its stock's top card is the turn-up), then the turned-up trump."""
    game, turn = start(n, trump, dealer, **options)
    return [game, dealt, turn]


def bid(seat: int, tricks: int) -> dict:
    return {"event": "bid", "seat": seat, "tricks": tricks}


def deal(hands: list[list[str]], stock: list[str] | None = None) -> dict:
    event = {"event": "deal", "hands": hands}
    if stock is not None:
        event["stock"] = stock
    return event


def ok(ref: Referee) -> bool:
    return all(v["ok"] for v in ref.verdicts)


def last(ref: Referee) -> dict:
    return ref.verdicts[-1]


def rejects(ref: Referee, event: dict, code: str) -> dict:
    """Submit ``event``: it must be rejected with ``code`` and change nothing."""
    before = snapshot(ref)
    verdict = ref.submit(event)
    assert not verdict["ok"], verdict
    assert verdict["code"] == code, verdict
    assert snapshot(ref) == before
    return verdict


def full_deal(n: int, hands: dict[int, list[str]], size: int = 7, stock_top: list[str] = (),
              seed: int = 0, deck=STANDARD_52) -> dict:
    """A deal event: the given cards for some seats, the rest of the pack shuffled into
    the other hands and the stock (``stock_top`` first, the turn-up being its first card)."""
    fixed = {parse_card(c) for cards in hands.values() for c in cards} | {parse_card(c) for c in stock_top}
    rest = [c for c in deck.cards() if c not in fixed]
    random.Random(seed).shuffle(rest)
    out = []
    for seat in range(n):
        given = list(hands.get(seat, []))
        while len(given) < size:
            given.append(str(rest.pop()))
        out.append(given)
    return deal(out, list(stock_top) + card_names(rest))


def drive(ref: Referee, rng: random.Random, limit: int = 2000) -> None:
    """Play random legal moves (hands known) until the game is over."""
    for _ in range(limit):
        game = ref.table.game
        if game.game_over:
            return
        verdict = ref.submit(rng.choice(game.legal_moves()))
        assert verdict["ok"], verdict
    raise AssertionError("the game did not end")


# -- pure rules ---------------------------------------------------------------------------------------
def test_deck_options():
    assert PIQUET_32.size == 32
    assert sorted({c.rank for c in PIQUET_32.cards()}) == [1, 7, 8, 9, 10, 11, 12, 13]


@pytest.mark.parametrize("n,tricks", [(2, 26), (3, 17), (4, 13), (5, 10), (6, 8), (7, 7)])
def test_table_5_4_tricks_in_the_game(n, tricks):
    assert game_tricks(n, 52, 7, "trick_and_draw", "bottom_of_stock") == tricks
    log = random_game("trumf", n, random.Random(n))
    ref = replay(log)
    assert ok(ref)
    state = ref.state()
    assert state["game_over"] and state["tricks_in_game"] == tricks
    assert sum(1 for v in ref.verdicts if "trick_winner" in v) == tricks
    # 5.4 table: dead cards 0, 1, 0, 2, 4, 3
    assert state["dead_cards"] == {2: 0, 3: 1, 4: 0, 5: 2, 6: 4, 7: 3}[n]


# -- 5.7.1 must follow suit ------------------------------------------------------------------------------
def test_example_1_known_hands_revoke_is_rejected_at_once():
    ref = judge(start_dealt(2, full_deal(2, {0: ["7H"], 1: ["2H", "AS"]}, stock_top=["3D"]), trump="3D")
                + [play(0, "7H")])
    assert ok(ref)
    v = rejects(ref, play(1, "AS"), "must_follow_suit")
    assert "2H" in v["message"] and "P2" in v["message"]
    moves = [m["cards"][0] for m in ref.table.game.legal_moves()]
    assert "2H" in moves and "AS" not in moves and all(c.endswith("H") for c in moves)
    assert ref.submit(play(1, "2H"))["trick_winner"] == 0


def test_example_1_hidden_revoke_is_flagged_when_proven_single_hand():
    ref = judge(start(2, stock_mode="single_hand") + [play(0, "7H"), play(1, "AS")])
    revoke_at = 3
    assert ref.verdicts[revoke_at]["trick_winner"] == 1 and "flags" not in ref.verdicts[revoke_at]
    assert ref.state()["open_claims"] == [{"code": "revoke", "seat": 1, "refers_to": 3, "suit": "H", "above": 0}]
    ref.submit(play(1, "2H"))            # P2 leads a heart he must have held when he showed out
    assert last(ref)["flags"] == [{"code": "revoke", "seat": 1, "refers_to": revoke_at,
                                   "message": last(ref)["flags"][0]["message"]}]
    assert ref.state()["open_claims"] == [] and ref.state()["possible_revokes"] == []


def test_example_1_hidden_with_draws_cannot_tell():
    """Trick-and-draw: the heart P2 shows later may have been drawn since: no accusation."""
    ref = judge(start(2) + [play(0, "7H"), play(1, "AS"), play(1, "2H")])
    v = last(ref)
    assert v["ok"] and "flags" not in v and "cannot tell" in v["message"]
    assert ref.state()["possible_revokes"] == [{"code": "revoke", "seat": 1, "refers_to": 3, "at": 4,
                                                "card": "2H"}]


def test_hidden_revoke_without_draws_is_proven_under_trick_and_draw():
    """Seven players: the stock (3 cards) never serves everyone, so nothing is drawn."""
    ref = judge(start(7) + [play(0, "7H"), play(1, "AS")]
                + [play(s, c) for s, c in zip(range(2, 7), ["3H", "4H", "5H", "6H", "8H"])])
    assert last(ref)["trick_winner"] == 1
    ref.submit(play(1, "2H"))
    assert last(ref)["flags"][0]["code"] == "revoke" and last(ref)["flags"][0]["refers_to"] == 3


def test_more_cards_of_the_suit_than_draws_since_proves_the_revoke():
    """6 players: one draw round after trick 1.  P2 shows out of hearts in trick 1, then
    shows two hearts: only one can have been drawn, so the revoke is proven."""
    n = 6
    ref = judge(start(n) + [play(0, "AH"), play(1, "3C"), play(2, "2H"), play(3, "3H"), play(4, "4H"),
                            play(5, "5H")])
    assert last(ref)["trick_winner"] == 0 and ref.state()["stock_count"] == 4   # 10 - 6
    ref.submit(play(0, "KH"))
    v = ref.submit(play(1, "6H"))
    assert "flags" not in v and "cannot tell" in v["message"]
    assert [p["refers_to"] for p in ref.state()["possible_revokes"]] == [3]
    for seat, card in zip(range(2, 6), ["7H", "8H", "9H", "10H"]):
        ref.submit(play(seat, card))
    ref.submit(play(0, "QH"))
    v = ref.submit(play(1, "JH"))
    assert v["flags"][0]["code"] == "revoke" and v["flags"][0]["refers_to"] == 3 and v["flags"][0]["seat"] == 1
    assert ref.state()["possible_revokes"] == []       # now proven, no longer merely possible
    assert ok(ref)


def test_deal_without_stock_known_part_rejects_unknown_part_is_claimed():
    """A deal without the stock order: after the draw each hand holds one unseen card.
    A heart among the known cards must be played; the unseen one is only claimed."""
    n = 6
    hands = {0: ["AH", "KH", "QH", "2C", "3C", "4C", "5C"],
             1: ["6C", "7C", "8C", "9C", "10C", "JC", "2H"],
             2: ["3H", "4H", "5H", "6H", "7H", "8H", "6S"],
             3: ["10H", "JH", "AC", "KC", "QC", "2D", "3D"],
             4: ["4D", "5D", "6D", "7D", "8D", "9D", "10D"],
             5: ["JD", "QD", "KD", "AD", "3S", "4S", "5S"]}
    d = deal([hands[s] for s in range(n)])
    ref = judge(start(n) + [d, play(0, "2C"), play(1, "6C"), play(2, "3H"), play(3, "AC"), play(4, "4D"),
                            play(5, "JD")])
    assert last(ref)["trick_winner"] == 3 and ok(ref)
    assert ref.state()["hands_known"] is False        # everyone drew an unseen card
    ref.submit(play(3, "10H"))                         # P4 leads a heart
    ref.submit(play(4, "5D"))                          # P5: no known heart, one unseen card
    assert last(ref)["ok"] and ref.state()["open_claims"][0]["seat"] == 4
    ref.submit(play(5, "3S"))
    rejects(ref, play(0, "3C"), "must_follow_suit")    # P1 holds KH and QH: proven at once
    for seat, card in [(0, "KH"), (1, "2H"), (2, "4H")]:
        assert ref.submit(play(seat, card))["ok"]
    assert last(ref)["trick_winner"] == 5              # 3S trumps
    # P6 leads; P5 shows a heart (9H was not dealt) that can only be the unseen card he
    # drew before showing out of hearts: no card was drawn since
    ref.submit(play(5, "5S"))
    for seat, card in [(0, "QH"), (1, "7C"), (2, "6S"), (3, "JH")]:
        assert ref.submit(play(seat, card))["ok"]
    v = ref.submit(play(4, "9H"))
    assert v["ok"] and v["flags"][0] == {"code": "revoke", "seat": 4, "refers_to": 10,
                                         "message": v["flags"][0]["message"]}


# -- 5.7.2 - 5.7.4 the trick winner -----------------------------------------------------------------------
def test_example_2_trumping_when_void():
    ref = judge(start(3, trump="9S") + [play(0, "AH"), play(1, "2S"), play(2, "KH")])
    assert ok(ref) and last(ref)["trick_winner"] == 1
    assert ref.state()["to_act"] == 1 and ref.state()["last_trick"]["winner"] == 1


def test_example_3_higher_trump():
    ref = judge(start(4, trump="9S") + [play(0, "10D"), play(1, "3S"), play(2, "KD"), play(3, "5S")])
    assert last(ref)["trick_winner"] == 3


def test_example_4_no_trump_played():
    ref = judge(start(4) + [play(0, "9C"), play(1, "JC"), play(2, "AD"), play(3, "10C")])
    assert last(ref)["trick_winner"] == 1
    assert trick_winner([(0, parse_card("9C")), (2, parse_card("AD"))], "S") == 0


# -- 5.7.5 and 5.7.6 honours ----------------------------------------------------------------------------------
def test_example_5_honour_bonus_to_the_captor():
    ref = judge(start(4, stock_mode="single_hand") + [play(0, "QS"), play(1, "3S"), play(2, "4S"), play(3, "AS")])
    assert last(ref)["trick_winner"] == 3
    state = ref.state()
    assert state["scores"] == [0, 0, 0, 9]          # 1 + 5 + 3
    assert state["honours"][3] == ["QS", "AS"] and state["honour_points"] == [0, 0, 0, 8]
    assert state["last_trick"]["honours"] == [{"card": "QS", "points": 3, "seat": 3},
                                              {"card": "AS", "points": 5, "seat": 3}]
    assert "QS 3 to P4, AS 5 to P4" in last(ref)["message"]


def test_honours_to_the_holder_option():
    ref = judge(start(4, stock_mode="single_hand", honours_to="holder")
                + [play(0, "QS"), play(1, "3S"), play(2, "4S"), play(3, "AS")])
    assert ref.state()["scores"] == [3, 0, 0, 6]


def test_example_6_trump_ace_led():
    hands = {0: ["AS", "2C", "3C", "4C", "5C", "6C", "7C"], 1: ["KS", "2H", "3H", "4H", "5H", "6H", "7H"],
             2: ["4S", "8D", "9D", "10D", "JD", "QD", "KD"]}
    ref = judge(start_dealt(3, full_deal(3, hands, stock_top=["9S"]), trump="9S") + [play(0, "AS")])
    assert ok(ref)
    rejects(ref, play(1, "2H"), "must_follow_suit")      # P2 holds a trump: he must follow
    ref.submit(play(1, "KS"))
    assert ref.table.game.legal_moves() == [{"event": "play", "seat": 2, "cards": ["4S"]}]
    ref.submit(play(2, "4S"))
    assert last(ref)["trick_winner"] == 0
    assert ref.state()["scores"] == [1 + 5, 0, 0]


# -- 5.7.7 draw order, 5.7.8 the dead turn-up ---------------------------------------------------------------------
def test_example_7_draw_order_and_13_tricks():
    n = 4
    d = full_deal(n, {0: ["2C"], 1: ["3C"], 2: ["AC"], 3: ["4C"]}, stock_top=["9S", "KH", "KD", "KC", "QH"])
    ref = judge(start_dealt(n, d, trump="9S") + [play(s, c) for s, c in enumerate(["2C", "3C", "AC", "4C"])])
    assert last(ref)["trick_winner"] == 2
    hands = ref.table.game.hands
    # P3 (seat 2) draws first, then P4, P1, P2
    assert hands[2][parse_card("KH")] == 1
    assert hands[3][parse_card("KD")] == 1 and hands[0][parse_card("KC")] == 1 and hands[1][parse_card("QH")] == 1
    assert ref.state()["hand_counts"] == [7, 7, 7, 7] and ref.state()["stock_count"] == 20
    assert ref.state()["to_act"] == 2
    drive(ref, random.Random(7))
    tricks = [v for v in ref.verdicts if "trick_winner" in v]
    assert len(tricks) == 13 and sum(ref.state()["tricks"]) == 13
    # after the 6th trick the stock is empty: 6 draw rounds
    assert ref.state()["stock_count"] == 0 and ref.state()["dead_cards"] == 0


def test_example_8_dead_turn_up_three_players():
    d = full_deal(3, {}, stock_top=["QS"], seed=8)
    ref = judge(start_dealt(3, d, trump="QS"))
    drive(ref, random.Random(8))
    state = ref.state()
    assert sum(state["tricks"]) == 17 and state["dead_cards"] == 1
    assert state["turn_up"] == {"card": "QS", "where": "dead", "seat": None}
    assert all("QS" not in h for h in state["honours"])
    played = [c for v, e in zip(ref.verdicts, ref.events_json()) if e["event"] == "play" for c in e["cards"]]
    assert "QS" not in played and len(played) == 51
    assert sum(state["honour_points"]) == 9          # the ace and the jack of trumps, never the queen


def test_turn_up_at_the_bottom_is_drawn_last_by_a_known_seat():
    """Two players: the 19th draw round empties the stock; its last card is the turn-up."""
    ref = judge(start(2, trump="7S"))
    rng = random.Random(3)
    pack = [c for c in STANDARD_52.cards() if str(c) != "7S"]
    rng.shuffle(pack)
    leader = 0
    for trick in range(19):
        a, b = pack.pop(), pack.pop()
        ref.submit(play(leader, str(a)))
        v = ref.submit(play(1 - leader, str(b)))
        assert v["ok"], v
        leader = v["trick_winner"]
    state = ref.state()
    loser = 1 - leader
    assert state["turn_up"] == {"card": "7S", "where": "hand", "seat": loser} and state["stock_count"] == 0
    # the winner cannot play the 7S: the loser drew it, face up
    rejects(ref, play(leader, "7S"), "card_not_in_hand")


# -- 5.7.9 bidding ---------------------------------------------------------------------------------------------
def test_bid_arithmetic():
    assert bid_trick_points(3, 4) == 7 and bid_trick_points(3, 1) == -3
    assert bid_trick_points(3, 3) == 6 and bid_trick_points(0, 2) == 2
    assert bid_trick_points(3, 4, exact=True) == 2 and bid_trick_points(3, 3, exact=True) == 6


HEARTS_GAME = [play(0, "AH"), play(1, "2H"), play(0, "KH"), play(1, "3H"), play(0, "QH"), play(1, "4H"),
               play(0, "JH"), play(1, "5H"), play(0, "6H"), play(1, "3S")]


def test_example_9_bidding_whole_game():
    """Single hand of 5: both bid 3; P1 wins 4 tricks (7 points), P2 wins 1 (-3)."""
    ref = judge(start(2, dealer=1, stock_mode="single_hand", hand_size=5, bidding=True)
                + [bid(0, 3), bid(1, 3)] + HEARTS_GAME)
    assert ok(ref)
    v = last(ref)
    assert v["trick_winner"] == 1 and v["game_over"]
    assert [r["points"] for r in v["hand_result"]] == [7, -3]
    assert [(r["bid"], r["tricks"], r["bid_made"]) for r in v["hand_result"]] == [(3, 4, True), (3, 1, False)]
    assert ref.state()["scores"] == [7, -3] and ref.state()["winners"] == [0]


def test_bidding_exact_and_honours_apart():
    events = start(2, dealer=1, stock_mode="single_hand", hand_size=5, bidding=True, bid_success="exact")
    game = [play(0, "AH"), play(1, "2H"), play(0, "KH"), play(1, "3H"), play(0, "QH"), play(1, "4H"),
            play(0, "JH"), play(1, "5H"), play(0, "6H"), play(1, "JS")]
    ref = judge(events + [bid(0, 3), bid(1, 1)] + game)
    assert ok(ref)
    # P1: 4 tricks on an exact bid of 3 -> 4 - 2 = 2; P2: bid 1 made -> 2, plus 4 for the jack of trumps
    assert [r["points"] for r in last(ref)["hand_result"]] == [2, 6]
    assert last(ref)["hand_result"][1]["honour_points"] == 4


def test_bidding_rejects_and_order():
    ref = judge([new_game("trumf", 3, dealer=0, bidding=True)])
    rejects(ref, bid(1, 2), "trump_not_turned")
    rejects(ref, play(1, "AH"), "trump_not_turned")
    ref.submit({"event": "trump", "card": "5D"})
    assert ref.state()["phase"] == "bidding" and ref.state()["to_act"] == 1     # dealer's left first
    rejects(ref, play(1, "AH"), "bidding_not_over")
    rejects(ref, bid(2, 2), "not_your_turn")
    rejects(ref, bid(1, 18), "bad_bid")                 # 17 tricks in a 3-player game
    for seat in (1, 2, 0):                              # ... ending with the dealer
        assert ref.submit(bid(seat, 17 if seat == 1 else 0))["ok"]
    assert ref.state()["phase"] == "play" and ref.state()["bids"] == [0, 17, 0]
    rejects(ref, bid(1, 3), "not_bidding")
    off = judge(start(2))
    rejects(off, bid(0, 1), "bidding_off")


def test_bid_per_deal_with_deal_rounds():
    ref = judge([new_game("trumf", 2, dealer=1, stock_mode="deal_rounds", bidding=True, bid_scope="deal",
                          hand_size=7),
                 {"event": "trump", "card": "2S"}])
    rejects(ref, bid(0, 8), "bad_bid")                  # a deal has 7 tricks
    d = full_deal(2, {}, stock_top=[], seed=5)
    ref2 = judge([new_game("trumf", 2, dealer=1, stock_mode="deal_rounds", bidding=True, bid_scope="deal"), d])
    rng = random.Random(5)
    while ref2.table.game.hand_number == 1:
        assert ref2.submit(rng.choice(ref2.table.game.legal_moves()))["ok"]
    result = [v for v in ref2.verdicts if "hand_result" in v][0]["hand_result"]
    assert all("bid_made" in r for r in result)
    state = ref2.state()
    assert state["phase"] == "bidding" and state["dealer"] == 0 and state["to_act"] == 1
    assert state["bids"] == [None, None]


# -- the turn-up options (DK-4) ---------------------------------------------------------------------------------
def test_taken_by_first_winner():
    d = full_deal(2, {0: ["AH"], 1: ["2H"]}, stock_top=["9S", "KC"], seed=1)
    ref = judge([new_game("trumf", 2, dealer=1, trump_card="taken_by_first_winner"), d,
                 {"event": "trump", "card": "9S"}])
    rejects(ref, play(0, "9S"), "card_out_of_play")
    ref.submit(play(0, "AH"))
    ref.submit(play(1, "2H"))
    game = ref.table.game
    assert game.hands[0][parse_card("9S")] == 1 and game.hands[1][parse_card("KC")] == 1
    assert ref.state()["turn_up"] == {"card": "9S", "where": "hand", "seat": 0}
    drive(ref, random.Random(1))
    assert sum(ref.state()["tricks"]) == 26


def test_set_aside_turn_up_is_out_of_play():
    ref = judge(start(2, trump_card="set_aside"))
    assert ref.state()["stock_count"] == 37 and ref.state()["tricks_in_game"] == 25
    rejects(ref, play(0, "2S"), "card_out_of_play")


@pytest.mark.parametrize("options", [{"trump_card": "taken_by_first_winner", "stock_mode": "single_hand"},
                                     {"hand_size": 8, "deck": "32", "players": 4},
                                     {"stock_mode": "all_at_once"}, {"must_trump": "yes"}])
def test_bad_options(options):
    options = dict(options)
    n = options.pop("players", 2)
    verdict = judge([new_game("trumf", n, **options)]).verdicts[0]
    assert not verdict["ok"] and verdict["code"] == "bad_option"


def test_player_count_and_prefixed_options():
    assert judge([new_game("trumf", 8)]).verdicts[0]["code"] == "bad_players"
    assert judge([new_game("trumf", 1)]).verdicts[0]["code"] == "bad_players"
    ref = judge([{"event": "new_game", "game": "trumf", "players": ["A", "B"], "dealer": 0,
                  "options": {"dk.stock_mode": "single_hand", "dk.tiebreak": "most_honours"}}])
    assert ref.state()["options"]["stock_mode"] == "single_hand"
    assert ref.state()["options"]["tiebreak"] == "most_honours"


# -- stock modes (DK-3) --------------------------------------------------------------------------------------------
def test_single_hand_is_seven_tricks():
    ref = judge([new_game("trumf", 3, dealer=2, stock_mode="single_hand"), full_deal(3, {}, stock_top=["2S"])])
    drive(ref, random.Random(2))
    assert sum(ref.state()["tricks"]) == 7 and ref.state()["hand_number"] == 1
    assert ref.state()["dead_cards"] == 52 - 21


def test_deal_rounds_rotates_the_dealer_and_keeps_the_stock_known():
    ref = judge([new_game("trumf", 2, dealer=1, stock_mode="deal_rounds"), full_deal(2, {}, stock_top=["2S"])])
    rng = random.Random(4)
    dealers = []
    while not ref.table.game.game_over:
        game = ref.table.game
        if not dealers or dealers[-1][0] != game.hand_number:
            dealers.append((game.hand_number, game.dealer, game.hands is not None, game.to_act))
        assert ref.submit(rng.choice(game.legal_moves()))["ok"]
    assert dealers == [(1, 1, True, None), (2, 0, True, 1), (3, 1, True, 0)]   # 3 deals of 7: 21 tricks
    assert len([v for v in ref.verdicts if "hand_result" in v]) == 3
    assert sum(ref.state()["tricks"]) == 21 and ref.state()["dead_cards"] == 10


def test_deal_rounds_cards_of_earlier_deals_cannot_return():
    ref = judge(start(2, dealer=1, stock_mode="deal_rounds", hand_size=1) + [play(0, "AH"), play(1, "KH")])
    assert ref.state()["hand_number"] == 2 and ref.state()["dealer"] == 0 and ref.state()["to_act"] == 1
    v = rejects(ref, play(1, "AH"), "card_already_played")
    assert "earlier deal" in v["message"]
    rejects(ref, {"event": "trump", "card": "3C"}, "trump_already_turned")


def test_deal_rounds_bid_for_the_game_is_settled_at_the_end():
    ref = judge([new_game("trumf", 3, dealer=2, stock_mode="deal_rounds", bidding=True),
                 full_deal(3, {}, stock_top=["2S"], seed=9)])
    drive(ref, random.Random(9))
    results = [v["hand_result"] for v in ref.verdicts if "hand_result" in v]
    assert len(results) == 2                             # 52 - 21 = 31 left: one more deal of 21
    assert all(r["trick_points"] == 0 and "bid" not in r for r in results[0])
    bids = ref.state()["bids"]
    tricks = ref.state()["tricks"]
    assert [r["bid"] for r in results[1]] == bids and [r["bid_tricks"] for r in results[1]] == tricks
    assert [r["trick_points"] for r in results[1]] == [bid_trick_points(b, t) for b, t in zip(bids, tricks)]
    assert ref.state()["scores"] == [p + h for p, h in zip((r["trick_points"] for r in results[1]),
                                                            ref.state()["honour_points"])]


def test_deal_rounds_deals_the_face_up_turn_up_last_to_the_dealer():
    """2 players, 2 cards each: 48 cards after the first deal, 12 deals of 4 empty the stock
    exactly, so the last deal's last card is the turn-up, seen going to that deal's dealer."""
    ref = judge([new_game("trumf", 2, dealer=1, stock_mode="deal_rounds", hand_size=2),
                 {"event": "trump", "card": "5S"}])
    rng = random.Random(6)
    pack = [c for c in STANDARD_52.cards() if str(c) != "5S"]
    rng.shuffle(pack)
    while ref.state()["hand_number"] < 13:
        seat = ref.state()["to_act"]
        assert ref.submit(play(seat, str(pack.pop())))["ok"]
    state = ref.state()
    assert state["turn_up"] == {"card": "5S", "where": "hand", "seat": state["dealer"]} and state["stock_count"] == 0
    dealer = state["dealer"]
    assert state["to_act"] == 1 - dealer
    rejects(ref, play(1 - dealer, "5S"), "card_not_in_hand")
    played_turn_up = False
    while not ref.state()["game_over"]:
        seat = ref.state()["to_act"]
        if seat == dealer and not played_turn_up:
            card, played_turn_up = "5S", True
        else:
            card = str(pack.pop())
        assert ref.submit(play(seat, card))["ok"]
    assert not pack
    assert ref.state()["game_over"] and sum(ref.state()["tricks"]) == 26


# -- ties (DK-9) --------------------------------------------------------------------------------------------
TIE_GAME = [play(0, "AH"), play(1, "2H"), play(0, "KH"), play(1, "3H"), play(0, "QH"), play(1, "4H"),
            play(0, "JH"), play(1, "5H"), play(0, "6H"), play(1, "QS")]


@pytest.mark.parametrize("tiebreak,winners", [("shared", [0, 1]), ("most_tricks", [0]), ("most_honours", [1])])
def test_ties(tiebreak, winners):
    ref = judge(start(2, dealer=1, stock_mode="single_hand", hand_size=5, tiebreak=tiebreak) + TIE_GAME)
    assert ok(ref) and ref.state()["scores"] == [4, 4]      # 4 tricks; 1 trick + 3 for the queen
    assert last(ref)["game_over"] and ref.state()["winners"] == winners


# -- must_trump / must_overtrump (DK-5) ------------------------------------------------------------------------------
def test_must_trump_known_and_hidden():
    hands = {0: ["AH", "2C", "3C", "4C", "5C", "6C", "7C"], 1: ["3S", "2D", "3D", "4D", "5D", "6D", "7D"]}
    ref = judge([new_game("trumf", 2, dealer=1, must_trump=True), full_deal(2, hands, stock_top=["2S"]),
                 {"event": "trump", "card": "2S"}, play(0, "AH")])
    rejects(ref, play(1, "2D"), "must_trump")
    assert [m["cards"] for m in ref.table.game.legal_moves()] == [["3S"]]
    hidden = judge(start(2, dealer=1, stock_mode="single_hand", must_trump=True)
                   + [play(0, "AH"), play(1, "2D"), play(0, "KH"), play(1, "3S")])
    assert hidden.verdicts[-1]["flags"][0]["code"] == "failed_to_trump"
    assert {f["refers_to"] for f in hidden.verdicts[-1]["flags"]} == {3}   # and the revoke claim is not hearts


def test_must_overtrump_known_and_hidden():
    hands = {0: ["AH", "2C", "3C", "4C", "5C", "6C", "7C"], 1: ["5S", "2D", "3D", "4D", "5D", "6D", "7D"],
             2: ["4S", "KS", "8D", "9D", "10D", "JD", "QD"]}
    ref = judge(start_dealt(3, full_deal(3, hands, stock_top=["2S"]), dealer=2, must_overtrump=True)
                + [play(0, "AH"), play(1, "5S")])
    assert ok(ref)
    rejects(ref, play(2, "4S"), "must_overtrump")
    legal = sorted(m["cards"][0] for m in ref.table.game.legal_moves())
    assert legal == sorted(["KS", "8D", "9D", "10D", "JD", "QD"])    # overtrump, or discard (no must_trump)
    hidden = judge(start(3, dealer=2, stock_mode="single_hand", must_overtrump=True)
                   + [play(0, "5S"), play(1, "6S"), play(2, "4S"), play(1, "7S"), play(2, "8S")])
    v = hidden.verdicts[-1]
    assert ok(hidden) and v["flags"][0]["code"] == "failed_to_overtrump" and v["flags"][0]["refers_to"] == 4


# -- the contract's reject cases ------------------------------------------------------------------------------------
def test_rejects_change_nothing():
    ref = judge([new_game("trumf", 3, dealer=2)])
    rejects(ref, play(0, "AH"), "trump_not_turned")
    ref.submit({"event": "trump", "card": "10C"})
    rejects(ref, {"event": "trump", "card": "JC"}, "trump_already_turned")
    rejects(ref, play(1, "AH"), "not_your_turn")
    rejects(ref, play(0, "AH", "KH"), "wrong_card_count")
    rejects(ref, play(0, "10C"), "card_out_of_play")
    rejects(ref, play(7, "AH"), "bad_seat")
    ref.submit(play(0, "AH"))
    rejects(ref, play(1, "AH"), "card_already_played")
    rejects(ref, play(1, "XX"), "unknown_card")
    rejects(ref, deal([["2C"] * 7] * 3), "too_late")


def test_piquet_pack():
    ref = judge(start(2, trump="7S", deck="32"))
    assert ref.state()["stock_count"] == 18 and ref.state()["tricks_in_game"] == 16
    rejects(ref, play(0, "2C"), "not_in_deck")
    rejects(ref, {"event": "trump", "card": "2S"}, "trump_already_turned")
    ref2 = judge([new_game("trumf", 2, deck="32")])
    rejects(ref2, {"event": "trump", "card": "6S"}, "not_in_deck")


def test_deal_checks():
    ref = judge([new_game("trumf", 2, dealer=1)])
    d = full_deal(2, {}, stock_top=["2S"])
    short = dict(d, stock=d["stock"][:-1])
    rejects(ref, short, "bad_deal")
    rejects(ref, dict(d, hands=[d["hands"][0], d["hands"][0]]), "bad_deal")
    ref.submit(d)
    rejects(ref, {"event": "trump", "card": "3S"}, "wrong_trump")
    rejects(ref, {"event": "trump", "card": d["hands"][0][0]}, "not_in_stock")
    assert ref.table.game.legal_moves() == [{"event": "trump", "card": "2S"}]
    ref.submit({"event": "trump", "card": "2S"})
    other = d["hands"][1][0]
    rejects(ref, play(0, other), "card_not_in_hand")
    rejects(ref, play(0, d["stock"][3]), "card_not_in_hand")
    # the trump turned before the deal: the stock then lists the face-down cards only
    ref3 = judge([new_game("trumf", 2, dealer=1), {"event": "trump", "card": "2S"}])
    rejects(ref3, d, "bad_deal")
    assert ref3.submit(dict(d, stock=d["stock"][1:]))["ok"]
    assert ref3.table.game.legal_moves()[0]["event"] == "play"


# -- undo and amend ---------------------------------------------------------------------------------------------------
def test_amend_changes_the_trick_winner_and_undo():
    events = start(4, trump="9S") + [play(0, "10D"), play(1, "3S"), play(2, "KD"), play(3, "5S")]
    ref = judge(events)
    assert last(ref)["trick_winner"] == 3 and ref.state()["scores"] == [0, 0, 0, 1]
    v = ref.submit({"event": "amend", "index": 5, "with": play(3, "4D")})
    assert v["ok"]
    assert {"what": "trick_winner", "index": 5, "before": 3, "after": 1} in v["changed"]
    assert ref.state()["scores"] == [0, 1, 0, 0] and ref.state()["to_act"] == 1
    before = snapshot(ref)
    ref.submit(play(1, "AH"))
    ref.submit({"event": "undo"})
    assert snapshot(ref) == before
    # amending the turn-up re-judges everything: with hearts trumps no trump was played, KD wins
    ref.submit({"event": "amend", "index": 1, "with": {"event": "trump", "card": "9H"}})
    assert ref.verdicts[5]["trick_winner"] == 2


# -- random whole games (Hypothesis) ----------------------------------------------------------------------------------
OPTION_CHOICES = {
    "stock_mode": ["trick_and_draw", "deal_rounds", "single_hand"],
    "trump_card": ["bottom_of_stock", "taken_by_first_winner", "set_aside"],
    "must_trump": [False, True],
    "must_overtrump": [False, True],
    "honours_to": ["captor", "holder"],
    "bidding": [False, True],
    "bid_success": ["at_least", "exact"],
    "bid_scope": ["game", "deal"],
    "tiebreak": ["shared", "most_tricks", "most_honours"],
    "deck": ["52", "32"],
    "hand_size": [7, 7, 3, 2],
}


@st.composite
def game_setups(draw):
    options = {k: draw(st.sampled_from(v)) for k, v in OPTION_CHOICES.items()}
    if options["trump_card"] == "taken_by_first_winner":
        options["stock_mode"] = "trick_and_draw"
    deck = 32 if options["deck"] == "32" else 52
    n = draw(st.integers(2, 7))
    while n * options["hand_size"] + 1 > deck:
        n -= 1
    return n, options, draw(st.integers(0, 2 ** 32 - 1)), draw(st.integers(0, n - 1))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game_setups())
def test_random_games(setup):
    n, options, seed, dealer = setup
    log = random_game("trumf", n, random.Random(seed), options=options, dealer=dealer)
    live = Referee()
    for event in log:
        assert live.submit(event)["ok"]
    state = live.state()
    assert state["game_over"] and state["winners"]
    # tricks counted equal the tricks played
    played = [e for e in log if e["event"] == "play"]
    tricks = [v["trick_winner"] for v in live.verdicts if "trick_winner" in v]
    assert len(played) == n * len(tricks)
    assert sum(state["tricks"]) == len(tricks) == state["tricks_played"] == state["tricks_in_game"]
    assert state["tricks"] == [tricks.count(s) for s in range(n)]
    assert len(state["hand_counts"]) == n and not any(state["hand_counts"])
    assert state["open_claims"] == [] and state["phase"] == "over" and json.dumps(state)
    # each honour scored at most once, only honours of the trump suit, only if played
    honours = [c for h in state["honours"] for c in h]
    assert len(honours) == len(set(honours))
    trump = state["trump"]
    assert set(honours) <= {"A" + trump, "J" + trump, "Q" + trump}
    assert set(honours) == {c for e in played for c in e["cards"] if c in ("A" + trump, "J" + trump, "Q" + trump)}
    assert sum(state["honour_points"]) == sum({"A": 5, "J": 4, "Q": 3}[c[0]] for c in honours)
    if not options["bidding"]:
        assert state["scores"] == [t + h for t, h in zip(state["tricks"], state["honour_points"])]
    assert sum(sum(r["points"] for r in v["hand_result"]) for v in live.verdicts if "hand_result" in v) \
        == sum(state["scores"])
    # no card twice
    cards = [c for e in played for c in e["cards"]]
    assert len(cards) == len(set(cards))
    # replay equals the live state; without the deal lines (a camera's view) the same game,
    # with no accusation: a legal game has no proven revoke
    again = replay(log)
    assert again.state() == state and again.verdicts == live.verdicts
    hidden = replay([e for e in log if e["event"] != "deal"])
    hstate = hidden.state()
    assert all(v["ok"] for v in hidden.verdicts)
    assert not any(v.get("flags") for v in hidden.verdicts)
    for key in ("scores", "winners", "tricks", "honours", "game_over", "dealer"):
        assert hstate[key] == state[key]
    assert [v.get("trick_winner") for v in hidden.verdicts if "trick_winner" in v] == tricks
    # the deal without the stock order: drawn cards unknown, the dealt ones still checked at once
    partial = replay([{k: v for k, v in e.items() if k != "stock"} for e in log])
    assert all(v["ok"] and not v.get("flags") for v in partial.verdicts)
    assert partial.state()["scores"] == state["scores"]


# -- hidden-hand soundness: flags only for true breaches, and every provable one (no draws) --------------------------
def _truth_game(n: int, rng: random.Random, options: dict, revoke_rate: float):
    """A camera's log of a game where players sometimes break their duties, with the truth
    beside it: (log, referee, {log index: (true hand, lead suit, top trump) before that play})."""
    pack = STANDARD_52.cards()
    rng.shuffle(pack)
    hands = [Counter(pack[i * 7:(i + 1) * 7]) for i in range(n)]
    stock = pack[n * 7:]
    turn_up = stock.pop(0)
    stock.append(turn_up)            # face up at the bottom: drawn last
    trump = turn_up.suit
    ref = Referee()
    log = [new_game("trumf", n, dealer=n - 1, **options), {"event": "trump", "card": str(turn_up)}]
    for e in log:
        assert ref.submit(e)["ok"]
    context: dict[int, tuple] = {}
    trick: list = []
    while not ref.table.game.game_over:
        game = ref.table.game
        seat = game.to_act
        held = sorted(c for c, k in hands[seat].items() if k)
        legal = [c for c in held if game.duty_breach(seat, c, hands[seat]) is None]
        card = rng.choice(held if rng.random() < revoke_rate else legal)
        if game.duty_breach(seat, card, game.known[seat]) is not None:
            card = rng.choice(legal)     # a breach the referee sees at once (the face-up turn-up)
        top = max((rank_value(c) for c in trick if c.suit == trump), default=0)
        context[len(log)] = (Counter(hands[seat]), trick[0].suit if trick else None, top)
        event = play(seat, str(card))
        log.append(event)
        verdict = ref.submit(event)
        assert verdict["ok"], verdict
        hands[seat][card] -= 1
        trick.append(card)
        if "trick_winner" in verdict:
            trick = []
            if options["stock_mode"] == "trick_and_draw" and len(stock) >= n and not ref.table.game.game_over:
                for k in range(n):
                    hands[(verdict["trick_winner"] + k) % n][stock.pop(0)] += 1
    return log, ref, context


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 7), st.integers(0, 2 ** 32 - 1), st.sampled_from(["trick_and_draw", "single_hand"]),
       st.booleans(), st.booleans())
def test_hidden_breaches_flagged_only_when_true(n, seed, mode, must_trump, must_overtrump):
    options = {"stock_mode": mode, "must_trump": must_trump, "must_overtrump": must_overtrump}
    log, ref, context = _truth_game(n, random.Random(seed), options, revoke_rate=0.3)
    trump = ref.state()["trump"]
    revokes = set()
    for v in ref.verdicts:
        for f in v.get("flags", []):
            held, lead, top = context[f["refers_to"]]
            mine = [c for c, k in held.items() if k]
            assert f["seat"] == log[f["refers_to"]]["seat"]
            # sound: at that play the seat really held the card it should have played
            if f["code"] == "revoke":
                assert any(c.suit == lead for c in mine), (f, log)
                revokes.add(f["refers_to"])
            elif f["code"] == "failed_to_trump":
                assert must_trump and lead != trump and any(c.suit == trump for c in mine), (f, log)
            else:
                assert f["code"] == "failed_to_overtrump" and must_overtrump
                assert any(c.suit == trump and rank_value(c) > top for c in mine), (f, log)
    if mode == "single_hand":
        # complete without draws: every revoke whose suit the player shows later is flagged
        for index, (held, lead, _) in context.items():
            if lead is None:
                continue
            card, seat = parse_card(log[index]["cards"][0]), log[index]["seat"]
            shows_later = any(e["event"] == "play" and e["seat"] == seat and parse_card(e["cards"][0]).suit == lead
                              for e in log[index + 1:])
            revoked = card.suit != lead and any(c.suit == lead and k for c, k in held.items())
            assert (index in revokes) == (revoked and shows_later)


def test_must_trump_on_a_trump_lead_is_one_revoke_not_two():
    ref = judge(start(2, dealer=1, stock_mode="single_hand", must_trump=True)
                + [play(0, "AS"), play(1, "2D"), play(0, "AH"), play(1, "3S")])
    assert [f["code"] for f in last(ref)["flags"]] == ["revoke"]


def test_draw_for_first_dealer_uses_the_piquet_pack():
    ref = Referee()
    ref.submit({"event": "new_game", "game": "trumf", "players": ["A", "B"], "dealer": None,
                "options": {"deck": "32"}})
    assert ref.submit({"event": "draw", "seat": 0, "card": "2C"})["code"] == "not_in_deck"
    assert ref.submit({"event": "draw", "seat": 0, "card": "7C"})["ok"]
