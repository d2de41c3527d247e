"""A Hypothesis state machine plays random big-two games from random deals.

Every rule checks the contract: legal moves are accepted, random illegal
events are rejected with no change of state, replaying the log equals the
live state, no card is played twice in a hand, hand sizes and scores stay
consistent.  When a game ends a rule starts the next one.
"""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from referee.log import Referee, replay
from referee.simulate import random_deal

DECK = [r + s for r in "A 2 3 4 5 6 7 8 9 10 J Q K".split() for s in "CDHS"]


class BigTwoMachine(RuleBasedStateMachine):
    def start(self, players: int, hand_size: int, options: dict, seed: int) -> None:
        self.rng = random.Random(seed)
        self.ref = Referee()
        v = self.ref.submit({"event": "new_game", "game": "big-two", "players": [f"P{i}" for i in range(players)],
                             "dealer": 0, "options": {"hand_size": hand_size, **options}})
        assert v["ok"], v
        self.hand_size = hand_size
        self.hand_points: list[int] = [0] * players

    @initialize(players=st.integers(2, 5), hand_size=st.integers(1, 10), seed=st.integers(0, 10**6),
                options=st.fixed_dictionaries({}, optional={
                    "pass_locks_out": st.booleans(), "bombs": st.booleans(), "straight_rank": st.sampled_from(
                        ["poker", "bigtwo"]), "direction": st.sampled_from(["clockwise", "counterclockwise"]),
                    "d2_on_lead": st.booleans(), "first_lead_must_include_lowest": st.booleans()}))
    def init(self, players, hand_size, seed, options):
        self.start(players, hand_size, options, seed)

    @property
    def game(self):
        return self.ref.table.game

    @precondition(lambda self: not self.game.game_over and self.game.hands is None
                  and self.game.plays_this_hand == 0)    # a deal comes before the hand's first play
    @rule()
    def deal(self):
        v = self.ref.submit(random_deal(self.game, self.rng))
        assert v["ok"], v

    @precondition(lambda self: not self.game.game_over and self.game.hands is not None)
    @rule(data=st.data())
    def legal_move(self, data):
        moves = self.game.legal_moves()
        assert moves, "a player to act always has a legal move"
        move = data.draw(st.sampled_from(moves))
        v = self.ref.submit(move)
        assert v["ok"], (move, v)
        if "hand_result" in v:
            for seat, r in enumerate(v["hand_result"]):
                self.hand_points[seat] += r["points"]

    @precondition(lambda self: not self.game.game_over)
    @rule(seat=st.integers(-1, 6), cards=st.lists(st.sampled_from(DECK + ["1Z"]), min_size=0, max_size=6),
          kind=st.sampled_from(["play", "pass"]))
    def random_event(self, seat, cards, kind):
        event = {"event": kind, "seat": seat} if kind == "pass" else {"event": "play", "seat": seat, "cards": cards}
        before = json.dumps(self.ref.state(), sort_keys=True)
        legal = event in self.game.legal_moves() if self.game.hands is not None and self.game.to_act is not None \
            else None
        v = self.ref.submit(event)
        if not v["ok"]:
            after = self.ref.state()
            after["log_length"] -= 1
            assert json.dumps(after, sort_keys=True) == before, v
            assert legal is not True, (event, v)
        else:
            if legal is not None:
                assert legal, (event, "accepted but not listed as legal")
            if "hand_result" in v:
                for seat_, r in enumerate(v["hand_result"]):
                    self.hand_points[seat_] += r["points"]

    @precondition(lambda self: self.game.game_over)
    @rule(players=st.integers(2, 5), seed=st.integers(0, 10**6))
    def next_game(self, players, seed):
        self.start(players, self.rng.randint(1, 10), {}, seed)

    @invariant()
    def replay_equals_live(self):
        again = replay(self.ref.raw)
        assert again.state() == self.ref.state()
        assert again.verdicts == self.ref.verdicts

    @invariant()
    def cards_and_counts_are_consistent(self):
        g = self.game
        played = g.ledger.seen
        assert all(n == 1 for n in played.values()), "a card was played twice in one hand"
        if not g.game_over:
            assert sum(self.hand_size - c for c in g.hand_counts) == sum(played.values())
            assert all(0 < c <= self.hand_size for c in g.hand_counts)
        if g.hands is not None:
            for seat in range(g.n):
                assert sum(g.hands[seat].values()) == g.hand_counts[seat]

    @invariant()
    def scores_are_the_sum_of_hand_results(self):
        assert self.ref.state()["scores"] == self.hand_points


BigTwoMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=60, deadline=None,
                                           suppress_health_check=[HealthCheck.too_slow])
TestBigTwoMachine = BigTwoMachine.TestCase
