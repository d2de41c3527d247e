"""What every game shares: seats, turns, scores, the deck ledger, known hands.

A game is a subclass of :class:`Game` in its own module of ``referee/games/``
that names itself, declares its options and overrides a few rule hooks, in
the manner of python-chess's variants::

    class BigTwo(Game):
        name = "big-two"
        title = "Big Two (Polish 10-card variant)"
        min_players, max_players = 2, 5
        options = (Int("hand_size", 10, "Cards dealt to each player", minimum=1, maximum=13), ...)

        def start_hand(self): ...                # deal size, first leader
        def on_play(self, seat, cards, index): ...   # judge a play, return an Outcome

A game instance is one *position*: the log's events are applied to it one by
one (:meth:`Game.apply`).  An event that breaks a rule raises
:class:`~referee.errors.Reject` **before** anything changes, so a rejected
event leaves the position exactly as it was.  Hooks therefore check first
and mutate last.

Hidden hands.  Without a ``deal`` event the referee does not know the hands
(``self.hands is None``): rules about unseen cards never reject a play, the
game notes what each play implied and raises a :class:`Flag` about the
earlier event when a later card proves the breach.  After a ``deal`` the
hands are known and the same rules reject at once.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable

from referee.cards import Card
from referee.decks import STANDARD_52, CardLedger, Deck
from referee.errors import Reject
from referee.options import Option, options_json


@dataclass(frozen=True)
class Flag:
    """A rule breach proven after the fact about the earlier event ``refers_to``."""

    code: str
    seat: int
    refers_to: int
    message: str = ""

    def to_json(self) -> dict:
        out: dict[str, Any] = {"code": self.code, "seat": self.seat, "refers_to": self.refers_to}
        if self.message:
            out["message"] = self.message
        return out


@dataclass
class Outcome:
    """What an accepted event earned: the verdict's optional fields."""

    message: str = ""
    trick_winner: int | None = None
    hand_result: list[dict] | None = None
    game_over: bool = False
    flags: list[Flag] = field(default_factory=list)


class Game:
    """Base of all games: the shared state and mechanics (see module docstring)."""

    # -- declared by each game ------------------------------------------------
    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    option_prefix: ClassVar[str] = ""           # rule-book key prefix, e.g. "b2"
    options: ClassVar[tuple[Option, ...]] = ()
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 8
    deck: ClassVar[Deck] = STANDARD_52

    def __init__(self, players: tuple[str, ...], options: dict[str, Any], dealer: int):
        self.players = tuple(players)
        self.n = len(players)
        self.opt = options
        self.dealer = dealer
        self.hand_number = 0
        self.scores: list[int] = [0] * self.n
        self.eliminated: list[int] = []
        self.game_over = False
        self.winners: list[int] = []
        self.to_act: int | None = None
        self.ledger = CardLedger(self.the_deck())
        self.hands: list[Counter[Card]] | None = None
        self.stock_known: list[Card] | None = None
        self.hand_counts: list[int] | None = None
        self.plays_this_hand = 0
        self.start_next_hand()

    # -- rule hooks (override) ---------------------------------------------------
    def the_deck(self) -> Deck:
        """The pack in use; a game may make it depend on its options."""
        return self.deck

    @classmethod
    def draw_key(cls, card: Card) -> Any:
        """Ranking of a card in the draw for first dealer (higher deals).

        Equal keys tie and redraw.  Default: rank with the ace high, suits ignored.
        """
        return 14 if card.rank == 1 else card.rank

    @classmethod
    def draw_deck(cls, options: dict[str, Any]) -> Deck:
        """The pack the draw for first dealer is made from (it may depend on the options)."""
        return cls.deck

    @classmethod
    def draws_again(cls, card: Card, options: dict[str, Any]) -> bool:
        """A card that does not count in the draw: the seat sets it aside and draws another."""
        return False

    def start_hand(self) -> None:
        """Set up the hand that begins now: hand size, stock, first player."""
        raise NotImplementedError

    def deal_sizes(self) -> list[int]:
        """Cards each seat holds at the deal (checked against a ``deal`` event)."""
        raise NotImplementedError

    def on_deal(self, hands: list[Counter[Card]], index: int) -> Outcome:
        """The hands became known (already checked against sizes and deck)."""
        return Outcome("the hands are known: hidden-hand rules are checked at once")

    def on_play(self, seat: int, cards: tuple[Card, ...], index: int) -> Outcome:
        raise NotImplementedError

    def on_pass(self, seat: int, index: int) -> Outcome:
        raise Reject("not_in_this_game", f"{self.title} has no passing")

    def on_exchange(self, seat: int, count: int, index: int, discards: tuple[Card, ...] | None) -> Outcome:
        raise Reject("not_in_this_game", f"{self.title} has no exchange")

    def on_trump(self, card: Card, index: int) -> Outcome:
        raise Reject("not_in_this_game", f"{self.title} has no trump card")

    def on_bid(self, seat: int, tricks: int, index: int) -> Outcome:
        raise Reject("not_in_this_game", f"{self.title} has no bidding")

    def on_announce(self, seat: int, index: int) -> Outcome:
        raise Reject("not_in_this_game", f"{self.title} has no announcements")

    def extra_state(self) -> dict[str, Any]:
        """Game-specific fields added to the state (trick, trump, pot, ...)."""
        return {}

    def legal_moves(self) -> list[dict]:
        """Every event the seat to act may send now, as JSON objects.

        Only meaningful when the hands are known (after a ``deal``); used by the
        random-game simulator (:mod:`referee.simulate`), property tests and
        benchmarks.  Games should list each distinct legal move once.
        """
        raise NotImplementedError

    # -- applying events -------------------------------------------------------
    def apply(self, event: Any, index: int) -> Outcome:
        """Judge one game event; raise :class:`Reject` and change nothing if illegal."""
        if self.game_over:
            raise Reject("game_over", "the game is over; start a new one")
        kind = event.kind
        if kind == "play":
            self.check_seat(event.seat)
            hand = self.hand_number
            outcome = self.on_play(event.seat, event.cards, index)
            if self.hand_number == hand:      # a play that ended the hand leaves the new one untouched
                self.plays_this_hand += 1
            return outcome
        if kind == "pass":
            self.check_seat(event.seat)
            return self.on_pass(event.seat, index)
        if kind == "deal":
            return self._deal(event.hands, event.stock, index)
        if kind == "exchange":
            self.check_seat(event.seat)
            return self.on_exchange(event.seat, event.count, index, event.discards)
        if kind == "trump":
            return self.on_trump(event.card, index)
        if kind == "bid":
            self.check_seat(event.seat)
            return self.on_bid(event.seat, event.tricks, index)
        if kind == "announce":
            self.check_seat(event.seat)
            return self.on_announce(event.seat, index)
        if kind == "draw":
            raise Reject("not_drawing", "the draw for first dealer is over")
        raise Reject("unknown_event", f"{kind!r} is not a game event")

    def _deal(self, hands: tuple[tuple[Card, ...], ...], stock: tuple[Card, ...] | None, index: int) -> Outcome:
        if self.plays_this_hand or self.hands is not None:
            raise Reject("too_late", "the deal can only be given before the first play of a hand, once")
        if len(hands) != self.n:
            raise Reject("bad_deal", f"the deal lists {len(hands)} hands for {self.n} seats")
        sizes = self.deal_sizes()
        for seat, (hand, size) in enumerate(zip(hands, sizes)):
            if len(hand) != size:
                raise Reject("bad_deal", f"seat {seat} should hold {size} cards, the deal gives {len(hand)}")
        everything = Counter(c for h in hands for c in h) + self.cards_out_of_play() + Counter(stock or ())
        deck = self.ledger.deck
        for card, count in everything.items():
            if count > deck.copies(card):
                raise Reject("bad_deal", f"the deal holds {count} {card} but the deck has {deck.copies(card)}")
        counters = [Counter(h) for h in hands]
        outcome = self.on_deal(counters, index)
        self.hands = counters
        self.stock_known = list(stock) if stock is not None else None
        return outcome

    def cards_out_of_play(self) -> Counter[Card]:
        """Cards that cannot be in anyone's hand (e.g. twenty-two's scoreboard)."""
        return Counter()

    # -- helpers for the games -------------------------------------------------
    def check_seat(self, seat: int) -> None:
        if not 0 <= seat < self.n:
            raise Reject("bad_seat", f"there is no seat {seat}: seats are 0-{self.n - 1}")
        if seat in self.eliminated:
            raise Reject("eliminated", f"{self.players[seat]} (seat {seat}) is out of the game")

    def check_turn(self, seat: int) -> None:
        if self.to_act is not None and seat != self.to_act:
            raise Reject("not_your_turn",
                         f"it is {self.players[self.to_act]}'s turn (seat {self.to_act}), "
                         f"not seat {seat}'s")

    def check_cards(self, seat: int, cards: Iterable[Card]) -> None:
        """The cards exist in the deck, are not already out, and (if known) are held."""
        cards = tuple(cards)
        self.ledger.check(cards)
        if self.hand_counts is not None and len(cards) > self.hand_counts[seat]:
            raise Reject("wrong_card_count",
                         f"seat {seat} holds only {self.hand_counts[seat]} cards, not {len(cards)}")
        if self.hands is not None:
            held = self.hands[seat]
            for card, count in Counter(cards).items():
                if held[card] < count:
                    raise Reject("card_not_in_hand", f"{self.players[seat]} was not dealt {card}",
                                 card=str(card))

    def take_cards(self, seat: int, cards: Iterable[Card]) -> None:
        """Record cards as played by ``seat`` (after every check passed)."""
        cards = tuple(cards)
        self.ledger.add(cards)
        if self.hand_counts is not None:
            self.hand_counts[seat] -= len(cards)
        if self.hands is not None:
            self.hands[seat].subtract(cards)

    def next_seat(self, seat: int, step: int = 1) -> int:
        """The next seat that is still in the game, going round the table."""
        for _ in range(self.n):
            seat = (seat + step) % self.n
            if seat not in self.eliminated:
                return seat
        raise AssertionError("no active seat")

    @property
    def active(self) -> list[int]:
        return [s for s in range(self.n) if s not in self.eliminated]

    def start_next_hand(self) -> None:
        """Begin a new hand: fresh ledger, unknown hands, the game's own set-up."""
        self.hand_number += 1
        self.ledger = CardLedger(self.the_deck())
        self.hands = None
        self.stock_known = None
        self.plays_this_hand = 0
        self.start_hand()

    def end_game(self, winners: Iterable[int]) -> None:
        self.game_over = True
        self.winners = sorted(winners)
        self.to_act = None

    def seat_name(self, seat: int) -> str:
        return f"{self.players[seat]} (seat {seat})"

    # -- state ---------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "game": self.name,
            "players": list(self.players),
            "options": options_json(self.opt),
            "phase": "over" if self.game_over else "play",
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "to_act": self.to_act,
            "scores": list(self.scores),
            "eliminated": sorted(self.eliminated),
            "game_over": self.game_over,
            "winners": list(self.winners),
            "hand_counts": list(self.hand_counts) if self.hand_counts is not None else None,
            "hands_known": self.hands is not None,
        }
        out.update(self.extra_state())
        return out

