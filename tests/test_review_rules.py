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


# -- big-two: hidden-hand flags against an oracle that sees the hands ---------------------------

def _bigtwo_hidden_game(rng, players: int, size: int, options: dict, any_leader: bool = False):
    """A random big-two hand played from hands only this function sees: every move beats the table
    (or passes) but D2 is ignored on purpose.  Returns the log (without a deal), the hands, and the
    oracle's expected D2 flags {line of the proving play: {line of the breach}}."""
    from itertools import combinations as combos

    from referee.cards import parse_card
    from referee.games.big_two import beats, card_key, combo
    deck = [f"{r}{s}" for r in "A 2 3 4 5 6 7 8 9 10 J Q K".split() for s in "CDHS"]
    rng.shuffle(deck)
    hands = [set(deck[i * size:(i + 1) * size]) for i in range(players)]
    dealt = [set(h) for h in hands]
    log = [new_game("big-two", players, 0, hand_size=size, **options)]
    step = -1 if options.get("direction") == "counterclockwise" else 1
    key = lambda c: card_key(parse_card(c))          # noqa: E731
    lowest = min((c for h in hands for c in h), key=key)
    seat = next(s for s in range(players) if lowest in hands[s])
    if any_leader:
        seat = rng.randrange(players)                # the first lead may break 4.3 (a hidden rule)
    top = top_seat = None
    locked: set[int] = set()
    pending: list[tuple[int, int, int]] = []         # (seat, line, bound) of D2 breaches not yet proven
    expected: dict[int, set[int]] = {}

    def nxt(s):
        for _ in range(players):
            s = (s + step) % players
            if s not in locked or s == top_seat:
                return s
        return s

    while True:
        line = len(log)
        hand = sorted(hands[seat], key=key)
        sizes = (1, 2, 3, 5) if top is None else (top.size,)
        options_ = []
        for n in sizes:
            for cards in combos(hand, n):
                c = combo(tuple(parse_card(x) for x in cards), options.get("straight_rank", "poker"))
                if c is not None and (top is None or beats(c, top)):
                    options_.append((cards, c))
        can_pass = top is not None and seat != top_seat
        rng.shuffle(options_)
        single_first = [o for o in options_ if o[1].size == 1]
        if can_pass and (not options_ or rng.random() < 0.35):
            choice = None
        elif single_first and rng.random() < 0.5:
            choice = single_first[0]
        else:
            choice = options_[0]
        duty_now = (top is None and options.get("d2_on_lead")) or (top is not None and top.size == 1)
        n1 = nxt(seat)
        duty_now = duty_now and n1 != seat and len(hands[n1]) == 1
        top_key = top.rank[1] if top is not None and top.size == 1 else -1
        if choice is None:
            log.append(pass_(seat))
            if duty_now and max(key(c) for c in hand) > top_key:
                pending.append((seat, line, top_key))
            if options.get("pass_locks_out"):
                locked.add(seat)
            n = nxt(seat)
            if n == top_seat:
                top = top_seat = None
                locked = set()
            seat = n
            continue
        cards, c = choice
        log.append(play(seat, *cards))
        shown = max(key(x) for x in cards)
        for p in [p for p in pending if p[0] == seat and shown > p[2]]:
            expected.setdefault(line, set()).add(p[1])
            pending.remove(p)
        if duty_now and c.size == 1 and max(key(x) for x in hand) > key(cards[0]):
            pending.append((seat, line, key(cards[0])))
        hands[seat] -= set(cards)
        if not hands[seat]:
            return log, expected, lowest, dealt
        top, top_seat = c, seat
        seat = nxt(seat)


def test_big_two_d2_flags_are_exact_against_an_oracle():
    """Every highest_single_duty flag is a real breach, raised by the first play that proves it."""
    import random
    for seed in range(120):
        rng = random.Random(seed)
        players = rng.randint(2, 5)
        size = rng.randint(2, min(10, 52 // players))
        options = {k: v for k, v in (("d2_on_lead", rng.random() < 0.5), ("pass_locks_out", rng.random() < 0.3),
                                      ("direction", rng.choice(["clockwise", "counterclockwise"]))) if v}
        log, expected, *_ = _bigtwo_hidden_game(rng, players, size, options)
        ref = judge(log)
        assert all(v["ok"] for v in ref.verdicts), (seed, [v for v in ref.verdicts if not v["ok"]])
        got: dict[int, set[int]] = {}
        for v in ref.verdicts:
            for f in v.get("flags", []):
                if f["code"] == "highest_single_duty":
                    got.setdefault(v["index"], set()).add(f["refers_to"])
        assert got == expected, (seed, options, got, expected)


def test_big_two_first_lead_flags_are_true_and_found():
    """not_lowest_holder / lowest_not_led are raised only when the first hand's lead really broke
    4.3 (or B2-4 with the option on), and surely once the lowest card dealt turns up elsewhere or
    the leader goes out with every card of his shown."""
    import random

    from referee.cards import parse_card
    from referee.games.big_two import card_key
    for seed in range(150):
        rng = random.Random(seed)
        players = rng.randint(2, 5)
        size = rng.randint(2, min(10, 52 // players))
        must = rng.random() < 0.5
        log, _, lowest, dealt = _bigtwo_hidden_game(rng, players, size, {"first_lead_must_include_lowest": must},
                                             any_leader=True)
        ref = judge(log)
        assert all(v["ok"] for v in ref.verdicts)
        leader, led = log[1]["seat"], log[1]["cards"]
        holder_flags = [v["index"] for v in ref.verdicts for f in v.get("flags", []) if f["code"] == "not_lowest_holder"]
        led_flags = [v["index"] for v in ref.verdicts for f in v.get("flags", []) if f["code"] == "lowest_not_led"]
        shown_by = {c: e["seat"] for e in log[1:] if e["event"] == "play" for c in e["cards"]}
        holds = lowest in dealt[leader]
        if holder_flags:
            assert len(holder_flags) == 1 and not holds, seed
        if led_flags:
            assert must and len(led_flags) == 1 and lowest not in led, seed
        if not must:
            assert not led_flags
        key = lambda c: card_key(parse_card(c))          # noqa: E731
        if lowest in shown_by and not holds:
            winner = log[-1]["seat"]
            leader_cards = [c for c, s in shown_by.items() if s == leader]
            if lowest == "3C" or (winner == leader and key(lowest) < min(map(key, leader_cards))):
                assert holder_flags, (seed, "breach proven but not flagged")
        if must and lowest in shown_by and lowest not in led:
            assert led_flags, (seed, "lowest card shown outside the first lead but not flagged")


# -- twenty-two: whole games against an independent model of rules.md section 2 ------------------

def _t22_model_game(rng, n: int, packs: int, first: int, dealer: int):
    """Play a whole game from hands only this model sees (no deal events) and yield, per event,
    what rules.md 2.4-2.8 say the referee must answer: (event, expected trick winner or None,
    expected per-seat points or None, expected state fields or None)."""
    rk = lambda c: 14 if c.startswith("A") else {"J": 11, "Q": 12, "K": 13}.get(c[:-1]) or int(c[:-1])  # noqa: E731
    val = lambda c: 11 if c.startswith("A") else min(rk(c), 10)                                           # noqa: E731
    pack = [f"{r}{s}" for r in "A 2 3 4 5 6 7 8 9 10 J Q K".split() for s in "CDHS"] * packs
    scores, out, board, target = [0] * n, set(), [], first

    def left(s):
        for _ in range(n):
            s = (s + 1) % n
            if s not in out:
                return s

    while True:
        active = [s for s in range(n) if s not in out]
        deck = list(pack)
        for c in board:
            deck.remove(c)
        size = min(target, len(deck) // len(active))
        if size == 0:
            return
        rng.shuffle(deck)
        hands = {s: [deck.pop() for _ in range(size)] for s in active}
        stock = deck
        order = [left(dealer)]
        while len(order) < len(active):
            order.append(left(order[-1]))
        yield None, None, None, {"hand_size": size, "dealer": dealer, "stock_size": len(stock)}
        for s in order:                                   # 2.5: one chance each, while the stock lasts
            if not stock:
                break
            k = rng.randint(0, min(size, len(stock), 3))
            for c in rng.sample(hands[s], k):
                hands[s].remove(c)
            for _ in range(k):
                hands[s].append(stock.pop())
            yield {"event": "exchange", "seat": s, "count": k}, None, None, None
        leader = order[0]
        while len(hands[leader]) > 1:                     # 2.6 tricks
            h = hands[leader]
            r = rk(rng.choice(h))
            same = [c for c in h if rk(c) == r]
            m = rng.randint(1, min(len(same), len(h) - 1))
            lead = same[:m]
            top, winner, seat = sorted(map(rk, lead)), leader, leader
            plays = [(leader, lead)]
            while (seat := left(seat)) != leader:
                h = sorted(hands[seat], key=rk)
                heading = [list(c) for c in __import__("itertools").combinations(h, m)
                           if all(a >= b for a, b in zip(sorted(map(rk, c)), top))]
                cards = rng.choice(heading) if heading and rng.random() < 0.6 else h[:m]
                if all(a >= b for a, b in zip(sorted(map(rk, cards)), top)):
                    top, winner = sorted(map(rk, cards)), seat
                plays.append((seat, cards))
            for i, (s, cards) in enumerate(plays):
                for c in cards:
                    hands[s].remove(c)
                yield play(s, *cards), (winner if i == len(plays) - 1 else None), None, None
            leader = winner
        shows = list(active)                              # 2.7 showdown, any order
        rng.shuffle(shows)
        last = {s: hands[s][0] for s in active}
        high = max(rk(c) for c in last.values())
        losers = [s for s in active if rk(last[s]) == high]
        points = val(last[losers[0]])
        for s in losers:
            scores[s] += points
            board.append(last[s])
        gone = {s for s in losers if scores[s] >= 22}
        result = [points if s in losers else 0 for s in range(n)]
        for s in shows[:-1]:
            yield play(s, last[s]), None, None, None
        out |= gone
        still = [s for s in range(n) if s not in out]
        ended = None
        if len(still) == 1:
            ended = still
        elif not still:
            best = min(scores[s] for s in active)
            ended = [s for s in active if scores[s] == best]
        if len(losers) == 1:
            dealer = losers[0]
        else:                                             # T22-5 default
            dealer = min(losers, key=lambda s: (s - dealer - 1) % n)
        target = points
        yield (play(shows[-1], last[shows[-1]]), None, result,
               {"game_over": bool(ended), "winners": sorted(ended) if ended else [],
                "eliminated": sorted(out), "scores": list(scores)})
        if ended:
            return


def test_twenty_two_whole_games_match_an_independent_model():
    import random
    for seed in range(40):
        rng = random.Random(seed)
        n = rng.choice([2, 3, 4, 5, 6, 7, 9, 12])
        packs = 1 if n <= 6 else 2
        first = rng.choice([1, 2, 3, 7])
        dealer = rng.randrange(n)
        ref = Referee()
        assert ref.submit(new_game("twenty-two", n, dealer, packs=packs, first_hand_size=first))["ok"]
        for event, winner, result, fields in _t22_model_game(rng, n, packs, first, dealer):
            if event is None:                              # a new hand: deal size, dealer, stock
                s = ref.state()
                assert (s["hand_size"], s["dealer"], s["stock_size"]) == \
                    (fields["hand_size"], fields["dealer"], fields["stock_size"]), (seed, s, fields)
                continue
            v = ref.submit(event)
            assert v["ok"], (seed, event, v)
            assert v.get("trick_winner") == winner, (seed, event, v)
            if result is not None:
                assert [r["points"] for r in v["hand_result"]] == result, (seed, v)
                s = ref.state()
                assert {k: s[k] for k in fields} == fields, (seed, s, fields)
            assert "flags" not in v, (seed, v)
        assert ref.state()["game_over"], seed


# -- fuzz: random well-formed events never crash, and replay equals live ------------------------------

_DECK = [f"{r}{s}" for r in "A 2 3 4 5 6 7 8 9 10 J Q K".split() for s in "CDHS"]


def _fuzz_new_game(rng, game: str) -> dict:
    if game == "twenty-two":
        n = rng.choice([2, 3, 4, 6, 7, 12, 13])
        opts = {"packs": -(-n // 6)} if n > 6 else {}
        if rng.random() < 0.5:
            opts["first_hand_size"] = rng.randint(1, 13)
        for key, values in (("head_rule", ["pairwise", "all_ge_top", "matched_set"]), ("must_head", [True, False]),
                            ("tied_loser_dealer", ["clockwise", "lowest_total", "random"]),
                            ("final_tie", ["shared", "playoff"]), ("elim_at", [1, 5, 22, 100])):
            if rng.random() < 0.4:
                opts[key] = rng.choice(values)
    else:
        n = rng.randint(2, 5)
        opts = {"hand_size": rng.randint(1, 52 // n)} if rng.random() < 0.6 else {}
        for key, values in (("pass_locks_out", [True, False]), ("bombs", [True, False]), ("d2_on_lead", [True, False]),
                            ("first_lead_must_include_lowest", [True, False]), ("direction", ["counterclockwise"]),
                            ("allow_negative", [False]), ("end", ["points", "hands"]), ("end_at", [1, 3, 30]),
                            ("no_announce_penalty", [0, 2])):
            if rng.random() < 0.3:
                opts[key] = rng.choice(values)
    return new_game(game, n, None if rng.random() < 0.15 else rng.randrange(n), **opts)


def _fuzz_play(rng, g) -> dict | None:
    """A play that fits the moment (right seat and count) from cards not yet seen, or None."""
    from referee.cards import parse_card
    seen = {str(c) for c in g.ledger.seen}
    if g.name == "twenty-two":
        seen |= {str(c) for c in g.board} | {str(c) for c in g.discarded}
    free = [c for c in _DECK if c not in seen]
    if len(free) < 5:
        return None
    if g.name == "twenty-two":
        if g.phase == "showdown" or (g.phase == "exchange" and g.size == 1):
            seats = [s for s in g.active if s not in g.showdown]
            return play(rng.choice(seats), rng.choice(free)) if seats else None
        seat = g.leader if g.phase == "exchange" else g.to_act
        if g.top is None:
            rank = rng.choice(free)[:-1]
            same = [c for c in free if c[:-1] == rank]
            return play(seat, *rng.sample(same, rng.randint(1, min(len(same), max(1, g.hand_counts[seat] - 1)))))
        return play(seat, *rng.sample(free, len(g.top)))
    from referee.games.big_two import beats, combo
    seat = g.to_act if g.to_act is not None else rng.randrange(g.n)
    if g.top is not None and rng.random() < 0.4:
        return pass_(seat)
    m = min(g.top.size if g.top is not None else rng.choice([1, 1, 2, 3, 5]), g.hand_counts[seat])
    for _ in range(30):
        cards = rng.sample(free, m)
        c = combo(tuple(map(parse_card, cards)), g.opt["straight_rank"], g.opt["flush_compare"], g.opt["bombs"])
        if c is not None and (g.top is None or beats(c, g.top)):
            return play(seat, *cards)
    return None


def _fuzz_event(rng, ref: Referee, depth: int = 0) -> dict:
    from referee.simulate import random_deal
    g = ref.table.game
    n = len(g.players) if g is not None else 3
    seat = rng.choice([*range(n), -1, n, 10**9])
    if g is not None and not g.game_over:
        if g.hands is not None and rng.random() < 0.6:
            moves = g.legal_moves()
            if moves:
                return rng.choice(moves)
        if g.hands is None and g.plays_this_hand == 0 and rng.random() < 0.05:
            return random_deal(g, rng)
        if g.hands is None and rng.random() < 0.5:
            e = _fuzz_play(rng, g)
            if e is not None:
                return e
    k = rng.random()
    if k < 0.40:
        return play(seat, *rng.sample(_DECK, rng.choice([1, 1, 2, 3, 4, 5, 6])))
    if k < 0.48:
        return pass_(seat)
    if k < 0.56:
        e = {"event": "exchange", "seat": g.to_act if g is not None and g.to_act is not None and k < 0.52 else seat,
             "count": rng.choice([0, 1, 2, 3, 60])}
        if rng.random() < 0.3 and e["count"] < 52:
            e["discards"] = rng.sample(_DECK, e["count"])
        return e
    if k < 0.60:
        return {"event": "announce", "seat": seat}
    if k < 0.63:
        return {"event": "draw", "seat": seat, "card": rng.choice(_DECK)}
    if k < 0.66:
        e = {"event": "deal", "hands": [rng.sample(_DECK, rng.randint(0, 8)) for _ in range(rng.choice([n, n, 1]))]}
        if rng.random() < 0.4:
            e["stock"] = rng.sample(_DECK, rng.randint(0, 10))
        return e
    if k < 0.75:
        return {"event": "undo"}
    if k < 0.86 and depth == 0:
        index = rng.randrange(len(ref.raw) + 1) if rng.random() < 0.2 else max(0, len(ref.raw) - rng.randint(1, 8))
        return {"event": "amend", "index": index, "with": _fuzz_event(rng, ref, 1)}
    if k < 0.90:
        return {"event": "trump", "card": rng.choice(_DECK)}
    return {"event": "bid", "seat": seat, "tricks": rng.randint(0, 3)}


def _fuzz(game: str, seeds: range, steps: int = 120) -> None:
    import random
    for seed in seeds:
        rng = random.Random(seed)
        ref = Referee()
        ref.submit(_fuzz_new_game(rng, game))
        for i in range(steps):
            event = _fuzz_new_game(rng, game) if rng.random() < 0.02 else _fuzz_event(rng, ref)
            before = snapshot(ref)
            v = ref.submit(event)                   # any exception other than a verdict fails the test
            assert v["index"] == i + 1
            if not v["ok"]:                         # a rejected event changes nothing
                assert snapshot(ref) == before, (game, seed, i, v)
            if i % 40 == 39 or i == steps - 1:
                again = replay(ref.raw)
                assert again.verdicts == ref.verdicts and again.state() == ref.state(), (game, seed, i)


def test_fuzz_twenty_two_never_crashes_and_replays():
    _fuzz("twenty-two", range(40))


def test_fuzz_big_two_never_crashes_and_replays():
    _fuzz("big-two", range(40))


def test_big_two_scoring_and_turns_match_an_independent_count():
    """Random whole games (simulate): each hand's points, the next leader and the end follow 4.3 and
    4.6 as counted here from the log alone."""
    import random

    from referee.simulate import random_game
    order = "3 4 5 6 7 8 9 10 J Q K A 2".split()
    poker = "A 2 3 4 5 6 7 8 9 10 J Q K A".split()
    straights = [set(poker[i:i + 5]) for i in range(10)]

    def bonus(cards):
        ranks = [c[:-1] for c in cards]
        if len(cards) != 5:
            return False
        quads = max(ranks.count(r) for r in ranks) == 4
        sf = len({c[-1] for c in cards}) == 1 and set(ranks) in straights
        return quads or sf

    for seed in range(25):
        rng = random.Random(seed)
        n = rng.randint(2, 5)
        opts = {"hand_size": rng.randint(3, 10), "allow_negative": rng.random() < 0.7}
        log = random_game("big-two", n, rng, opts, dealer=rng.randrange(n))
        ref = Referee()
        totals, held, played, bonuses = [0] * n, None, None, None
        for e in log:
            if e["event"] == "deal":
                held, played, bonuses = [len(h) for h in e["hands"]], [False] * n, [0] * n
                if ref.state()["hand_number"] > 1:
                    assert ref.state()["to_act"] == ref.state()["dealer"]       # the winner deals and leads
                else:
                    lowest = min((c for h in e["hands"] for c in h),
                                 key=lambda c: order.index(c[:-1]) * 4 + "CDHS".index(c[-1]))
                    holder = next(s for s, h in enumerate(e["hands"]) if lowest in h)
            v = ref.submit(e)
            assert v["ok"], v
            if e["event"] == "deal" and ref.state()["hand_number"] == 1:
                assert ref.state()["to_act"] == holder
            if e["event"] != "play":
                continue
            s = e["seat"]
            held[s] -= len(e["cards"])
            played[s] = True
            bonuses[s] += bonus(e["cards"])
            if held[s]:
                assert "hand_result" not in v
                continue
            points = [(0 if t == s else 20 if not played[t] else held[t]) - 5 * bonuses[t] for t in range(n)]
            for t in range(n):
                if not opts["allow_negative"] and totals[t] + points[t] < 0:
                    points[t] = -totals[t]
                totals[t] += points[t]
            assert [r["points"] for r in v["hand_result"]] == points, (seed, v)
            assert v.get("game_over", False) == (max(totals) >= 50)
        state = ref.state()
        assert state["scores"] == totals and state["game_over"]
        assert state["winners"] == [t for t in range(n) if totals[t] == min(totals)]
