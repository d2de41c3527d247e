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
    revoked: set[int] = set()
    for v in ref.verdicts:
        for f in v.get("flags", []):
            # once a play's revoke is proven, the player was not void: no trumping duty to flag
            assert f["refers_to"] not in revoked, (f, log)
            if f["code"] == "revoke":
                revoked.add(f["refers_to"])
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
    # a breach is proven, but not which: void in hearts he had to trump, else to follow suit
    assert "otherwise to follow suit" in ref.verdicts[5]["flags"][0]["message"]


def test_trumf_a_proven_revoke_closes_the_same_plays_failed_to_overtrump_claim():
    """must_overtrump: P3 under-trumps (3S under 9S) on a heart lead, then shows 2H: the
    revoke is proven, so the trump was no legal play and no overtrumping duty arose (DK-5);
    the KS he shows later must not flag line 4 a second time."""
    ref = judge([new_game("trumf", 3, dealer=2, stock_mode="single_hand", must_overtrump=True),
                 {"event": "trump", "card": "2S"},
                 play(0, "7H"), play(1, "9S"), play(2, "3S"),
                 play(1, "8H"), play(2, "2H"), play(0, "9H"),
                 play(0, "4C"), play(1, "5C")])
    assert [(f["code"], f["refers_to"]) for f in ref.verdicts[6]["flags"]] == [("revoke", 4)]
    v = ref.submit(play(2, "KS"))
    assert v["ok"] and "flags" not in v, v
    assert ok(ref) and not [c for c in ref.state()["open_claims"] if c["refers_to"] == 4]


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


def _khanhoo_tricks(ref: Referee, winners: list[int]) -> None:
    """Play one-card tricks (hands unknown) so that ``winners`` win them in turn: the leader
    leads the lowest unseen card of a suit, the winner beats it, the others play courts or
    low cards of another suit."""
    for w in winners:
        game = ref.table.game
        leader = game.to_act
        seen = game.ledger.seen
        left = Counter({c: KHANHOO_60.copies(c) - seen[c] for c in KHANHOO_60.counts})
        order = [leader] + [s for s in (game.next_seat(leader, k) for k in range(1, game.n))
                            if s != leader][:len(game.active) - 1]
        suit = max("CDH", key=lambda s: sum(left[Card(r, s)] for r in range(1, 10)))
        ranks = [r for r in range(1, 10) if left[Card(r, suit)] for _ in range(left[Card(r, suit)])]
        low, high = Card(ranks[0], suit), Card(ranks[-1], suit)
        cards = {leader: low}
        left[low] -= 1
        if w != leader:
            cards[w] = high
            left[high] -= 1
        for s in order:
            if s not in cards:
                other = next(c for c in sorted(left, key=lambda c: (c.suit == suit, c.rank)) if left[c])
                cards[s] = other
                left[other] -= 1
        for s in order:
            v = ref.submit(play(s, str(cards[s])))
            assert v["ok"], (v, cards)
        assert v["trick_winner"] == w, (v, cards)


def _outcome(ref: Referee) -> dict:
    state = ref.state()
    return {k: state[k] for k in ("hand_number", "dealer", "to_act", "scores", "pot", "points", "last_hand",
                                  "eliminated", "game_over", "winners", "hand_counts")}


def test_khanhoo_undo_and_amend_across_a_hand_end():
    """Undo of the play that ended a hand brings the hand back (points, pot, dealer);
    an amend before the hand end re-judges it; replay equals live throughout."""
    opts = {"hand_size": {"3": 2}, "packets": {"3": 1}, "win_threshold": {"3": 2}}
    ref = judge([new_game("khanhoo", 3, dealer=2, **opts)])
    _khanhoo_tricks(ref, [1])
    before_end = snapshot(ref)
    _khanhoo_tricks(ref, [0])
    end = ref.verdicts[-1]
    assert "hand_result" in end and "game_over" not in end
    assert ref.state()["hand_number"] == 2 and ref.state()["pot"] == 1      # 1-1-0: seat 2 pays 1
    assert [r["paid"] for r in end["hand_result"]] == [0, 0, 1] and ref.state()["scores"] == [310, 310, 309]
    after_end = _outcome(ref)
    log = list(ref.raw)
    v = ref.submit({"event": "undo"})
    assert v["ok"] and v["undid"] == len(log) - 1
    assert _outcome(ref) != after_end and ref.state()["hand_number"] == 1
    assert ref.state()["points"] == [0, 1, 0] and ref.state()["scores"] == [310, 310, 310]
    again = replay(ref.raw)
    assert again.verdicts == ref.verdicts and again.state() == ref.state()
    # replace the undone card by the same card again: the hand ends again, as before
    ref.submit(log[-1])
    assert _outcome(ref) == after_end
    # amend seat 0's winning card of the hand's last trick into a court: the leader (seat 1)
    # wins it instead, reaches 2 points and wins the game; seat 0 and seat 2 pay 2 each
    idx = max(i for i, e in enumerate(ref.raw) if e.get("event") == "play" and e["seat"] == 0)
    v = ref.submit({"event": "amend", "index": idx, "with": play(0, "JS")})
    assert v["ok"], v
    state = ref.state()
    assert state["game_over"] and state["winners"] == [1], state
    assert state["scores"] == [308, 314, 308] and state["pot"] == 0
    assert {c["what"] for c in v["changed"]} >= {"trick_winner", "hand_result", "game_over", "scores"}
    again = replay(ref.raw)
    assert again.verdicts == ref.verdicts and again.state() == state
    assert before_end  # (the position before the hand end was a real one)


@pytest.mark.parametrize("event", [
    play(0, "5H"), {"event": "exchange", "seat": 0, "count": 1}, {"event": "deal", "hands": [[], []]},
    {"event": "draw", "seat": 0, "card": "5H"}, {"event": "trump", "card": "5H"},
    {"event": "bid", "seat": 0, "tricks": 1}, {"event": "pass", "seat": 0}, {"event": "announce", "seat": 1},
    play(7, "5H"),
])
@pytest.mark.parametrize("game", ["khanhoo", "trumf"])
def test_events_after_the_game_is_over_are_rejected_and_change_nothing(game, event):
    if game == "khanhoo":
        ref = judge([new_game("khanhoo", 2, dealer=1, hand_size={"2": 1}, packets={"2": 1},
                              win_threshold={"2": 1})])
        _khanhoo_tricks(ref, [0])
    else:
        ref = judge([new_game("trumf", 2, dealer=1, stock_mode="single_hand", hand_size=1),
                     {"event": "trump", "card": "2S"}, play(0, "AH"), play(1, "KH")])
    assert ref.state()["game_over"]
    before = snapshot(ref)
    v = ref.submit(event)
    assert not v["ok"] and v["code"] == "game_over", v
    assert snapshot(ref) == before
    v = ref.submit({"event": "amend", "index": len(ref.raw) - 1, "with": play(1, "9C")})
    assert v["ok"] and ref.verdicts[len(ref.raw) - 2]["code"] == "game_over"
    assert snapshot(ref) == before


# == fuzz: random well-formed events ======================================================================
KH_OPTIONS = {
    "threshold": ["per_hand", "cumulative"], "pot_to": ["winner", "carry", "split"],
    "next_dealer": ["left", "top_scorer", "loser"], "facedown_discards": [False, True],
    "follower_courts_in_group": [False, True], "group_three_suits": [True, False],
    "court_draw": ["high", "redraw"], "bankrupt": ["out", "borrow", "unlimited"],
    "chips_start": [310, 1, 3], "pot_start": [0, 5],
    "win_threshold": [{"2": 3, "3": 3, "4": 3, "5": 3}, {"2": 2, "3": 2, "4": 2, "5": 2}],
}
DK_OPTIONS = {
    "deck": ["52", "32"], "hand_size": [7, 2, 3, 1], "stock_mode": ["trick_and_draw", "deal_rounds", "single_hand"],
    "trump_card": ["bottom_of_stock", "taken_by_first_winner", "set_aside"], "must_trump": [False, True],
    "must_overtrump": [False, True], "honours_to": ["captor", "holder"], "bidding": [False, True],
    "bid_success": ["at_least", "exact"], "bid_scope": ["game", "deal"],
    "tiebreak": ["shared", "most_tricks", "most_honours"],
}
EVERY_CARD = card_names(ALL_CARDS)


def _fuzz_new_game(rng: random.Random, name: str) -> dict:
    n = rng.choice([2, 2, 3, 4, 5, 6] if name == "khanhoo" else [2, 3, 4, 5, 6, 7, 8])
    table = KH_OPTIONS if name == "khanhoo" else DK_OPTIONS
    options = {k: rng.choice(v) for k, v in table.items() if rng.random() < 0.5}
    if name == "khanhoo" and rng.random() < 0.8:        # short hands, so games end within the log
        size = rng.choice([1, 2, 3, 4])
        options.update(hand_size={str(k): size for k in (2, 3, 4, 5)},
                       packets={str(k): 1 for k in (2, 3, 4, 5)})
        options.setdefault("win_threshold", {str(k): min(size, 2) for k in (2, 3, 4, 5)})
    dealer = rng.choice([None, 0, n - 1]) if rng.random() < 0.97 else n + 1
    return new_game(name, n, dealer=dealer, **options)


def _fuzz_game_event(rng: random.Random, ref: Referee, name: str) -> dict | None:
    table = ref.table
    if table.draw is not None:
        draw = table.draw
        waiting = [s for s in draw.contenders if s not in draw.drawn]
        seat = rng.choice(waiting) if waiting and rng.random() < 0.9 else rng.randrange(len(draw.players) + 1)
        pool = card_names(KHANHOO_60.counts) if name == "khanhoo" else EVERY_CARD
        return {"event": "draw", "seat": seat, "card": rng.choice(pool)}
    game = table.game
    if game is None or game.game_over:
        return None
    if game.hands is None and rng.random() < 0.03:
        event = random_deal(game, rng)
        if rng.random() < 0.5:
            event.pop("stock")
        return event
    if game.hands is not None and rng.random() < 0.7:
        moves = game.legal_moves()
        if moves:
            return rng.choice(moves)
    seat = game.to_act if game.to_act is not None and rng.random() < 0.85 else rng.randrange(game.n + 1)
    deck = game.ledger.deck
    left = [c for c in deck.counts for _ in range(deck.copies(c) - game.ledger.seen[c])]
    if name == "trumf":
        if game.trump is None:
            return {"event": "trump", "card": rng.choice(EVERY_CARD)}
        if game.phase == "bidding":
            return {"event": "bid", "seat": seat, "tricks": rng.choice([0, 1, 2, 3, 7, 30])}
        k = 1 if rng.random() < 0.95 else 2
        return play(seat, *card_names(rng.sample(left, k) if len(left) >= k else [Card(5, "H")] * k))
    if game.lead is None:
        if rng.random() < 0.7:
            return play(seat, str(rng.choice(left)))
        kind, rank, suit = rng.random(), rng.randint(1, 9), rng.choice("CDH")
        if kind < 0.4:
            low = rng.randint(1, 7)
            cards = [Card(r, suit) for r in range(low, low + rng.randint(3, min(5, 10 - low)))]
        elif kind < 0.8:
            cards = [Card(rank, s) for s in "CDH"] + [Card(rank, suit)] * rng.randint(0, 1)
        else:
            cards = [Card(1, s) for s in "CDH"] + [Card(rng.choice([11, 12, 13]), "S")] * rng.randint(1, 2)
        return play(seat, *card_names(cards))
    k = game.lead.size if rng.random() < 0.9 else rng.randint(1, 4)
    if game.opt["facedown_discards"] and rng.random() < 0.3:
        event = {"event": "exchange", "seat": seat, "count": k}
        if rng.random() < 0.5 and len(left) >= k:
            event["discards"] = card_names(rng.sample(left, k))
        return event
    return play(seat, *card_names(rng.sample(left, k) if len(left) >= k else [Card(5, "H")] * k))


def _fuzz_event(rng: random.Random, ref: Referee, name: str) -> dict:
    r, lines = rng.random(), len(ref.raw)
    if r < 0.04:
        return {"event": "undo"}
    if r < 0.08 and lines > 1:
        replacement = _fuzz_game_event(rng, ref, name) or play(rng.randrange(3), rng.choice(EVERY_CARD))
        return {"event": "amend", "index": rng.randrange(lines + (rng.random() < 0.1)), "with": replacement}
    if r < 0.085:
        return _fuzz_new_game(rng, name)
    if r < 0.10:
        return rng.choice([{"event": "pass", "seat": 0}, {"event": "announce", "seat": 1},
                           {"event": "exchange", "seat": rng.randrange(3), "count": rng.randint(0, 3)},
                           {"event": "bid", "seat": rng.randrange(3), "tricks": rng.randint(0, 30)},
                           {"event": "trump", "card": rng.choice(EVERY_CARD)}])
    return _fuzz_game_event(rng, ref, name) or rng.choice([_fuzz_new_game(rng, name), {"event": "undo"}])


def _invariants(ref: Referee) -> None:
    game = ref.table.game
    if game is None:
        return
    assert all(c >= 0 for c in game.hand_counts), game.hand_counts
    if game.name == "khanhoo":
        chips = sum(game.scores) + game.pot - sum(game.debts)
        assert chips == game.n * game.opt["chips_start"] + game.opt["pot_start"], "chips are not conserved"
        if game.opt["bankrupt"] != "unlimited":
            assert min(game.scores) >= 0
        assert all(game.hand_counts[s] == 0 for s in game.eliminated)
        assert game.game_over or game.to_act not in game.eliminated
    else:
        for seat in range(game.n):
            assert sum(game.known[seat].values()) + game.unknown[seat] == game.hand_counts[seat]
        if not game.opt["bidding"]:
            assert game.scores == [t + h for t, h in zip(game.tricks, game.honour_points)]
        assert sum(game.tricks) == game.tricks_played <= game.total_tricks
        assert game.stock_known is None or len(game.stock_known) == game.stock_count


@pytest.mark.parametrize("name", ["khanhoo", "trumf"])
@pytest.mark.parametrize("seed", range(12))
def test_fuzz_no_crash_replay_equals_live_rejects_change_nothing(name, seed):
    rng = random.Random(seed * 7919 + len(name))
    ref = Referee()
    ref.submit(_fuzz_new_game(rng, name))
    for _ in range(250):
        event = _fuzz_event(rng, ref, name)
        before = ref.state()
        verdict = ref.submit(event)          # any exception but a verdict fails the test
        if not verdict["ok"] and event["event"] not in ("undo", "amend"):
            after = ref.state()
            before.pop("log_length"), after.pop("log_length")
            assert after == before, (event, verdict)
        _invariants(ref)
    json.dumps(ref.state())
    again = replay(ref.raw)
    assert again.verdicts == ref.verdicts and again.state() == ref.state()
