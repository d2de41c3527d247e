"""The position at the table: the current game, or the draw for its first dealer.

:class:`Table` applies game events (not ``undo``/``amend``: those belong to
the log, :mod:`referee.log`).  A ``new_game`` replaces whatever was on the
table.  With ``dealer`` null the game opens with the draw for first dealer:
every player draws a card, the highest in the game's own ranking deals, and
players tied for highest draw again (only they).

>>> from referee.events import parse_event
>>> t = Table()
>>> _ = t.apply(parse_event({"event": "new_game", "game": "big-two", "players": ["A", "B"],
...                          "dealer": None, "options": {}}), 0)
>>> t.state()["phase"]
'draw'
>>> _ = t.apply(parse_event({"event": "draw", "seat": 0, "card": "2C"}), 1)
>>> t.apply(parse_event({"event": "draw", "seat": 1, "card": "3S"}), 2).message
'B draws 3S; A drew highest (2C) and deals the first hand'
>>> t.state()["dealer"]
0
"""

from __future__ import annotations

from typing import Any

from referee.cards import Card
from referee.errors import Reject
from referee.game import Game, Outcome
from referee.games import get_game
from referee.options import options_json, resolve_options


class Draw:
    """The draw for first dealer: rounds of one card per contender."""

    def __init__(self, game_cls: type[Game], players: tuple[str, ...], options: dict[str, Any]):
        self.game_cls = game_cls
        self.players = players
        self.options = options
        self.contenders: list[int] = list(range(len(players)))
        self.drawn: dict[int, Card] = {}
        self.round = 1
        self.history: list[dict] = []

    def apply(self, seat: int, card: Card) -> tuple[Outcome, int | None]:
        """Judge one draw; return the outcome and the dealer once decided."""
        n = len(self.players)
        if not 0 <= seat < n:
            raise Reject("bad_seat", f"there is no seat {seat}: seats are 0-{n - 1}")
        if seat not in self.contenders:
            raise Reject("not_in_redraw", f"seat {seat} is not in this round of the draw "
                         f"(only seats {', '.join(map(str, self.contenders))} draw again)")
        if seat in self.drawn:
            raise Reject("already_drew", f"seat {seat} has already drawn {self.drawn[seat]} this round")
        deck = self.game_cls.draw_deck(self.options)
        if deck.copies(card) == 0:
            raise Reject("not_in_deck", f"{card} is not in this game's deck ({deck.name})")
        # a card set aside (drawn again) is still out of the pack for this round
        if sum(1 for h in self.history if h["round"] == self.round and h["card"] == str(card)) >= deck.copies(card):
            raise Reject("card_already_played", f"{card} has already been drawn this round")
        self.history.append({"round": self.round, "seat": seat, "card": str(card)})
        if self.game_cls.draws_again(card, self.options):
            return Outcome(f"{self.players[seat]} draws {card}, which does not count: draws again"), None
        self.drawn[seat] = card
        if len(self.drawn) < len(self.contenders):
            return Outcome(f"{self.players[seat]} draws {card}"), None
        key = self.game_cls.draw_key
        best = max(key(c) for c in self.drawn.values())
        top = sorted(s for s, c in self.drawn.items() if key(c) == best)
        if len(top) == 1:
            return Outcome(f"{self.players[top[0]]} draws {self.drawn[top[0]]} and deals the first hand"
                           if top[0] == seat else
                           f"{self.players[seat]} draws {card}; {self.players[top[0]]} drew highest "
                           f"({self.drawn[top[0]]}) and deals the first hand"), top[0]
        names = " and ".join(self.players[s] for s in top)
        self.contenders, self.drawn, self.round = top, {}, self.round + 1
        return Outcome(f"{self.players[seat]} draws {card}; {names} tie for highest and draw again"), None

    def state(self) -> dict[str, Any]:
        n = len(self.players)
        waiting = [s for s in self.contenders if s not in self.drawn]
        return {
            "game": self.game_cls.name, "players": list(self.players), "options": options_json(self.options),
            "phase": "draw", "hand_number": 0, "dealer": None,
            "to_act": waiting[0] if waiting else None,
            "scores": [0] * n, "eliminated": [], "game_over": False, "winners": [],
            "hand_counts": None, "hands_known": False,
            "draw": {"round": self.round, "contenders": list(self.contenders),
                     "drawn": {str(s): str(c) for s, c in self.drawn.items()}, "history": list(self.history)},
        }


class Table:
    """Applies game events to the current position (see the module docstring)."""

    def __init__(self) -> None:
        self.game: Game | None = None
        self.draw: Draw | None = None

    def apply(self, event: Any, index: int) -> Outcome:
        kind = event.kind
        if kind == "new_game":
            return self._new_game(event)
        if self.draw is not None:
            if kind != "draw":
                raise Reject("draw_in_progress", "the draw for first dealer is not finished")
            outcome, dealer = self.draw.apply(event.seat, event.card)
            if dealer is not None:
                draw, self.draw = self.draw, None
                self.game = draw.game_cls(draw.players, draw.options, dealer)
            return outcome
        if self.game is None:
            raise Reject("no_game", "no game has been started: send a new_game event first")
        return self.game.apply(event, index)

    def _new_game(self, event: Any) -> Outcome:
        game_cls = get_game(event.game)
        n = len(event.players)
        if not game_cls.min_players <= n <= game_cls.max_players:
            raise Reject("bad_players", f"{game_cls.title} is for {game_cls.min_players}-"
                         f"{game_cls.max_players} players, not {n}")
        options = resolve_options(game_cls.options, event.options, game_cls.option_prefix)
        check = getattr(game_cls, "check_options", None)
        if check is not None:
            check(options, n)
        if event.dealer is None:
            self.game, self.draw = None, Draw(game_cls, event.players, options)
            return Outcome(f"new game of {game_cls.title}: draw for first dealer")
        if not 0 <= event.dealer < n:
            raise Reject("bad_seat", f"dealer must be a seat 0-{n - 1}, not {event.dealer}")
        self.game, self.draw = game_cls(event.players, options, event.dealer), None
        return Outcome(f"new game of {game_cls.title}; {event.players[event.dealer]} deals")

    def state(self) -> dict[str, Any]:
        if self.draw is not None:
            return self.draw.state()
        if self.game is not None:
            return self.game.state()
        return {"game": None, "players": [], "phase": "idle", "hand_number": 0, "dealer": None,
                "to_act": None, "scores": [], "eliminated": [], "game_over": False, "winners": []}
