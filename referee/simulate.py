"""Random legal games, for property tests and benchmarks.

:func:`random_game` plays a whole game of any game that implements
:meth:`~referee.game.Game.legal_moves`: it shuffles the game's deck, gives the
hands in a ``deal`` event, then sends random legal moves until the game ends
(or ``max_events``).  Dropping the ``deal`` lines from the result gives the
same game as a camera sees it, with the hands unknown.

>>> import random
>>> log = random_game("big-two", 3, random.Random(1), max_events=400)
>>> log[0]["event"], log[1]["event"]
('new_game', 'deal')
>>> from referee.log import replay
>>> all(v["ok"] for v in replay(log).verdicts)
True
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from referee.cards import card_names
from referee.games import get_game
from referee.log import Referee


def random_deal(game: Any, rng: random.Random) -> dict:
    """A ``deal`` event: the deck (less the cards out of play) shuffled and dealt."""
    pack = Counter(game.ledger.deck.cards()) - game.cards_out_of_play()
    cards = list(pack.elements())
    rng.shuffle(cards)
    hands, at = [], 0
    for size in game.deal_sizes():
        hands.append(card_names(cards[at:at + size]))
        at += size
    return {"event": "deal", "hands": hands, "stock": card_names(cards[at:])}


def random_game(name: str, players: int, rng: random.Random, options: dict | None = None,
                dealer: int = 0, max_events: int = 100_000) -> list[dict]:
    """The log of a random legal game (see the module docstring)."""
    names = [f"P{i}" for i in range(players)]
    log: list[dict] = [{"event": "new_game", "game": name, "players": names, "dealer": dealer,
                        "options": dict(options or {})}]
    referee = Referee()
    verdict = referee.submit(log[0])
    if not verdict["ok"]:
        raise ValueError(f"cannot start {name}: {verdict['message']}")
    get_game(name)  # the name is known (raises otherwise)
    while len(log) < max_events:
        game = referee.table.game
        if game.game_over:
            break
        if game.hands is None:
            event = random_deal(game, rng)
        else:
            moves = game.legal_moves()
            if not moves:
                raise AssertionError(f"{name}: no legal move for seat {game.to_act} at line {len(log)}")
            event = rng.choice(moves)
        verdict = referee.submit(event)
        if not verdict["ok"]:
            raise AssertionError(f"{name}: a listed legal move was rejected at line {len(log)}: "
                                 f"{event} -> {verdict['code']}: {verdict['message']}")
        log.append(event)
    return log
