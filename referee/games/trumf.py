"""Trumf: the Danish trump trick game with honour bonuses (seed 004; rule book section 5).

Read this module top to bottom against ``shared/rules.md`` section 5.

Components (5.2, DK-1, DK-2): a 52-card pack with the ace high (A K Q ... 2),
or the 32-card piquet pack (A K Q J 10 9 8 7); 2-7 players, 7 cards each.

Deal and trump (5.3, DK-4): the dealer deals 7 cards each; the rest is the
stock.  The top card of the stock is turned up (a ``trump`` event, before
the first play and before any bid): its suit is trump for the whole game.
By default it goes face up to the **bottom** of the stock and is drawn last
if the stock is ever drawn that far; options: the winner of the first trick
takes it as his draw (``taken_by_first_winner``), or it is ``set_aside``.

Trick play (5.4): the player to the dealer's left leads the first trick,
the winner of a trick leads the next.  One card per turn.  A player must
follow the lead suit if able (a hidden-hand duty, below); when void he may
play anything (DK-5: options ``must_trump`` and ``must_overtrump``).  The
highest trump wins the trick, else the highest card of the lead suit.

The stock (DK-3), ``stock_mode``:

* ``trick_and_draw`` (default): after each trick, while the stock holds at
  least one card per player, everyone draws one card, the winner first, then
  clockwise; then play on until every hand is empty.  One deal is the game
  (the 5.4 table: 26 / 17 / 13 / 10 / 8 / 7 tricks for 2..7 players);
* ``deal_rounds``: no drawing; after a 7-card deal is played out, the next
  dealer (clockwise) deals 7 each again from the stock, while it can supply
  every player; the trump turned at the first deal holds for the game;
* ``single_hand``: one 7-trick deal; the stock serves only the turn-up.

Scoring (5.5): 1 point per trick; the trump ace 5, jack 4, queen 3 to the
winner of the trick holding it (DK-6 option: to the player who held and
played it).  An honour never played scores for nobody.  The highest total
wins; ties are shared, or broken by most tricks or most honour points (DK-9).

Bidding (5.5, optional): after the deal and the turn-up, from the dealer's
left round to the dealer, each player bids the tricks he will take (in the
game, or per deal with ``bid_scope`` ``deal``).  Made (at least the bid, or
exactly it, DK-7): 2 x bid + (tricks - bid) trick points; missed:
tricks - 2 x |bid - tricks|.  Honours are scored apart.  Scores run live:
each trick adds its point and honours at once; with bidding the trick points
are added when the bid's scope (the game, or the deal) is over.

Hidden-hand duties (5.8): following suit (and must_trump / must_overtrump)
depend on unseen cards.  Without known hands a play is never rejected for
them: a player who shows out of a suit *claims* to hold none of it, and a
later card of that suit from him *proves* a revoke only if it cannot have
been drawn since.  Every such card either was held at the claim or was drawn
face down later; when more such cards are shown than face-down cards were
drawn since, one was held: the earlier play is flagged (``revoke``).  Else
the referee cannot tell, and records an unverifiable ``possible_revoke`` in
the state instead of accusing.  After a ``deal`` the hands are known and
such a play is rejected at once; cards drawn later stay known when the deal
also gave the ``stock`` order (top card first, the turn-up included while it
is still to be turned), else they are unknown again and the rule falls back
to claims for them.  The face-up turn-up is known wherever it goes.  One
play, one breach: once a play's revoke is proven its trumping claims
(``failed_to_trump``, ``failed_to_overtrump``) close, since only a void player
must trump (DK-5); a trumping flag proven while the revoke is still open says
that the breach is one or the other.

>>> trick_winner([(0, Card(1, "H")), (1, Card(2, "S")), (2, Card(13, "H"))], "S")
1
>>> bid_trick_points(3, 4), bid_trick_points(3, 1)
(7, -3)
>>> [game_tricks(n, 52, 7, "trick_and_draw", "bottom_of_stock") for n in range(2, 8)]
[26, 17, 13, 10, 8, 7]
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from referee.cards import ALL_CARDS, SUIT_NAMES, Card
from referee.decks import STANDARD_52, Deck
from referee.errors import Reject
from referee.game import Flag, Game, Outcome
from referee.options import Bool, Choice, Int

PIQUET_32 = Deck("piquet-32", {c: 1 for c in ALL_CARDS if c.rank == 1 or c.rank >= 7})

# Trump honours (5.5): rank -> points for the ace, jack and queen of trumps.
HONOURS = {1: 5, 11: 4, 12: 3}


def rank_value(card: Card) -> int:
    """Ace high: 2 -> 2, ..., K -> 13, A -> 14."""
    return 14 if card.rank == 1 else card.rank


def trick_winner(plays: list[tuple[int, Card]], trump: str) -> int:
    """The seat that wins a trick of ``(seat, card)`` plays, led by the first (5.4.3).

    The highest trump if any trump was played, else the highest card of the lead suit.

    >>> C = lambda r, s: Card(r, s)
    >>> trick_winner([(0, C(10, "D")), (1, C(3, "S")), (2, C(13, "D")), (3, C(5, "S"))], "S")
    3
    >>> trick_winner([(0, C(9, "C")), (1, C(11, "C")), (2, C(1, "D")), (3, C(10, "C"))], "S")
    1
    """
    lead = plays[0][1].suit
    trumps = [p for p in plays if p[1].suit == trump]
    pool = trumps or [p for p in plays if p[1].suit == lead]
    return max(pool, key=lambda p: rank_value(p[1]))[0]


def bid_trick_points(bid: int, tricks: int, exact: bool = False) -> int:
    """Trick points with bidding (5.5): made = at least the bid (DK-7), or exactly it.

    Made: 2 x bid + 1 x (tricks - bid).  Missed: tricks - 2 x |bid - tricks|
    (the book writes (bid - tricks), which only covers missing from below; an
    exact bid overshot loses 2 per trick too).

    >>> bid_trick_points(0, 0), bid_trick_points(2, 2), bid_trick_points(3, 4, exact=True)
    (0, 4, 2)
    """
    made = tricks == bid if exact else tricks >= bid
    if made:
        return 2 * bid + (tricks - bid)
    return tricks - 2 * abs(bid - tricks)


def game_tricks(players: int, deck_size: int, hand_size: int, stock_mode: str, trump_card: str) -> int:
    """Tricks in a whole game (the 5.4 table for 52 cards, 7 each, trick-and-draw).

    >>> [game_tricks(n, 52, 7, "deal_rounds", "bottom_of_stock") for n in (2, 3, 4)]
    [21, 14, 7]
    >>> game_tricks(3, 52, 7, "trick_and_draw", "set_aside"), game_tricks(2, 32, 7, "single_hand", "set_aside")
    (17, 7)
    """
    dealt = players * hand_size
    stock = deck_size - dealt - (1 if trump_card == "set_aside" else 0)
    if stock_mode == "trick_and_draw":
        return hand_size + stock // players
    if stock_mode == "deal_rounds":
        return hand_size * (1 + stock // dealt)
    return hand_size


@dataclass
class Claim:
    """What a play implied about the player's unseen cards: no card matching (suit, above).

    ``unknown_at`` is the count of face-down cards the seat had drawn when it
    claimed; ``known_after`` the face-up (known) cards it got since; ``shown``
    the matching cards it has played since that it may have drawn face down.
    """

    code: str
    seat: int
    index: int
    suit: str
    above: int                      # rank value: the claim covers cards of ``suit`` above it (0 = all)
    unknown_at: int
    message: str
    known_after: set = field(default_factory=set)
    shown: int = 0

    def matches(self, card: Card) -> bool:
        return card.suit == self.suit and rank_value(card) > self.above


# Where the turned-up card may lie while it is in nobody's hand.
ON_TABLE = ("bottom_of_stock", "awaiting_winner", "set_aside", "dead")
STOCK_MODES = ("trick_and_draw", "deal_rounds", "single_hand")
TURN_UP_PLACES = ("bottom_of_stock", "taken_by_first_winner", "set_aside")


class Trumf(Game):
    name = "trumf"
    title = "Trumf (Danish trump trick game with honour bonuses)"
    summary = ("Whist-style tricks with a turned-up trump; draw from the stock after each trick; "
               "1 point a trick, 5/4/3 for capturing the trump ace, jack and queen.")
    option_prefix = "dk"
    min_players, max_players = 2, 7
    options = (
        Choice("deck", "52", "Pack: 52 cards A high, or the 32-card piquet pack A K Q J 10 9 8 7 (DK-1)",
               choices=("52", "32")),
        Int("hand_size", 7, "Cards dealt to each player (5.3, dk.hand_size)", minimum=1, maximum=13),
        Choice("stock_mode", "trick_and_draw", "Use of the stock: everyone draws after each trick; repeated "
               "deals from the stock; or one hand (DK-3)", choices=STOCK_MODES),
        Choice("trump_card", "bottom_of_stock", "Where the turned-up trump card goes: face up under the stock; "
               "to the first trick's winner as his draw; or out of play (DK-4)", choices=TURN_UP_PLACES),
        Bool("must_trump", False, "A player void in the lead suit must play a trump if he has one (DK-5)"),
        Bool("must_overtrump", False, "Playing a trump to a trick that holds a trump, you must beat it if you "
             "can (DK-5)"),
        Choice("honours_to", "captor", "Who scores the trump A/J/Q: the winner of the trick holding it, or "
               "the player who held it (DK-6)", choices=("captor", "holder")),
        Bool("bidding", False, "Optional bidding (Annoncering): each player bids his tricks after the deal (5.5)"),
        Choice("bid_success", "at_least", "A bid is made with at least, or exactly, the tricks bid (DK-7)",
               choices=("at_least", "exact")),
        Choice("bid_scope", "game", "A bid covers the whole game, or each deal (with deal_rounds) (DK-8)",
               choices=("game", "deal")),
        Choice("tiebreak", "shared", "Tied totals: shared, or won by most tricks, or most honour points (DK-9)",
               choices=("shared", "most_tricks", "most_honours")),
    )

    @staticmethod
    def check_options(options: dict[str, Any], players: int) -> None:
        size = 32 if options["deck"] == "32" else 52
        if options["hand_size"] * players + 1 > size:
            raise Reject("bad_option", f"option 'hand_size' {options['hand_size']} is too many for {players} "
                         f"players from {size} cards (one card must be left to turn up)", option="hand_size")
        if options["trump_card"] == "taken_by_first_winner" and options["stock_mode"] != "trick_and_draw":
            raise Reject("bad_option", "option 'trump_card' taken_by_first_winner needs stock_mode "
                         "trick_and_draw: the first winner takes the turn-up as his draw", option="trump_card")

    def the_deck(self) -> Deck:
        return self.draw_deck(self.opt)

    @classmethod
    def draw_deck(cls, options: dict[str, Any]) -> Deck:
        return PIQUET_32 if options["deck"] == "32" else STANDARD_52

    def __init__(self, players: tuple[str, ...], options: dict[str, Any], dealer: int):
        n = len(players)
        # the game, across deals
        self.trump: str | None = None
        self.turn_up: Card | None = None
        self.turn_up_where: str | None = None     # bottom_of_stock, awaiting_winner, set_aside, hand, played, dead
        self.turn_up_seat: int | None = None      # who got it (drawn or dealt)
        self.stock_count = (PIQUET_32 if options["deck"] == "32" else STANDARD_52).size   # face-down cards
        self.gone: Counter[Card] = Counter()      # played in earlier deals
        self.tricks = [0] * n
        self.honour_points = [0] * n
        self.honours: list[list[str]] = [[] for _ in range(n)]
        self.tricks_played = 0
        self.bids: list[int | None] = [None] * n
        self.bid_tricks = [0] * n                 # tricks won in the current bid's scope
        self.possible_revokes: list[dict] = []
        self.last_trick: dict | None = None
        self.dead_cards = 0
        self._carry_stock: list[Card] | None = None
        self._pending_stock: tuple[Card, ...] | None = None
        self.total_tricks = game_tricks(n, self.stock_count, options["hand_size"], options["stock_mode"],
                                        options["trump_card"])
        super().__init__(players, options, dealer)

    # -- the deal (5.3) -------------------------------------------------------------------
    def deal_sizes(self) -> list[int]:
        return [self.opt["hand_size"]] * self.n

    def start_hand(self) -> None:
        n, size = self.n, self.opt["hand_size"]
        self.hand_counts = [size] * n
        self.known: list[Counter[Card]] = [Counter() for _ in range(n)]   # cards known to be in each hand
        self.unknown = [size] * n                                        # cards in each hand not known
        self.drawn_unknown = [0] * n                                     # face-down cards received this deal
        self.claims: list[Claim] = []
        self.trick: list[tuple[int, Card, int]] = []     # (seat, card, log index) in play order
        self.tricks_hand = [0] * n
        self.points_hand = [0] * n
        self.honours_hand: list[list[str]] = [[] for _ in range(n)]
        self.ledger.add(self.gone)
        self.leader = (self.dealer + 1) % n
        # the stock: the first deal comes from the whole pack; later deals (deal_rounds) from the stock
        dealt = n * size
        if self.stock_count >= dealt:
            self.stock_count -= dealt
        else:      # the face-up turn-up at the bottom is the last card dealt: the dealer gets it, seen by all
            self.stock_count = 0
            self.turn_up_where, self.turn_up_seat = "hand", self.dealer
            self._receive(self.dealer, self.turn_up, count=False)
            self.unknown[self.dealer] -= 1
        carry, self._carry_stock = self._carry_stock, None
        if carry is not None:     # the stock order is known: so is this deal, one card at a time from the left
            for k, card in enumerate(carry[:dealt]):
                seat = (self.dealer + 1 + k) % n
                if self.unknown[seat]:
                    self.known[seat][card] += 1
                    self.unknown[seat] -= 1
            self.stock_known = list(carry[dealt:])
            self.hands = self.known
        if self.bid_scope_is_deal() or self.hand_number == 1:
            self.bids = [None] * n
            self.bid_tricks = [0] * n
        self._open_play_or_bidding()

    def bid_scope_is_deal(self) -> bool:
        """Bids per deal (DK-8): only with deal_rounds; otherwise the one deal is the game."""
        return self.opt["bid_scope"] == "deal" and self.opt["stock_mode"] == "deal_rounds"

    def _open_play_or_bidding(self) -> None:
        if self.trump is None:
            self.phase, self.to_act = "trump", None
        elif self.opt["bidding"] and None in self.bids:
            self.phase, self.to_act = "bidding", self.leader
        else:
            self.phase, self.to_act = "play", self.leader

    def cards_out_of_play(self) -> Counter[Card]:
        """Earlier deals' cards and the face-up turn-up (it is in no hand and not in the face-down stock)."""
        out = Counter(self.gone)
        if self.turn_up is not None and self.turn_up_where in ON_TABLE:
            out[self.turn_up] += 1
        return out

    def _deal(self, hands, stock, index):
        self._pending_stock = stock          # on_deal checks it (the base hook is not given the stock)
        outcome = super()._deal(hands, stock, index)
        self.known = self.hands
        self.unknown = [0] * self.n
        return outcome

    def on_deal(self, hands: list[Counter[Card]], index: int) -> Outcome:
        stock = self._pending_stock
        if stock is not None:
            expected = self.ledger.deck.size - sum(self.cards_out_of_play().values()) - sum(self.deal_sizes())
            if len(stock) != expected:
                raise Reject("bad_deal", f"the stock should hold {expected} face-down cards, the deal lists "
                             f"{len(stock)}")
        for seat in range(self.n):
            for card, k in self.known[seat].items():
                if k and hands[seat][card] < k:
                    raise Reject("bad_deal", f"{self.seat_name(seat)} was seen to get {card}")
        where = "the first card of the stock is the one to turn up" if self.trump is None else "play on"
        return Outcome(f"the hands are known: following suit is checked at once; {where}"
                       if stock is None else
                       f"the hands and the stock are known: following suit is checked at once; {where}")

    # -- the turn-up (5.3, DK-4) ---------------------------------------------------------------
    def on_trump(self, card: Card, index: int) -> Outcome:
        if self.trump is not None:
            raise Reject("trump_already_turned", f"the trump card was already turned ({self.turn_up}): "
                         f"{SUIT_NAMES[self.trump]} are trumps for the whole game")
        self.ledger.check([card])
        for seat in range(self.n):
            if self.known[seat].get(card):
                raise Reject("not_in_stock", f"{card} was dealt to {self.seat_name(seat)}: the trump card "
                             "is turned from the stock")
        if self.stock_known is not None and self.stock_known[0] != card:
            raise Reject("wrong_trump", f"the top card of the stock is {self.stock_known[0]}, not {card}")
        # -- accepted
        self.trump, self.turn_up = card.suit, card
        self.stock_count -= 1
        if self.stock_known is not None:
            self.stock_known.pop(0)
        place = self.opt["trump_card"]
        self.turn_up_where = "awaiting_winner" if place == "taken_by_first_winner" else place
        where = {"bottom_of_stock": "it goes face up under the stock, drawn last",
                 "taken_by_first_winner": "the winner of the first trick takes it",
                 "set_aside": "it is set aside, out of play"}[place]
        self._open_play_or_bidding()
        return Outcome(f"{card} turned up: {SUIT_NAMES[card.suit]} are trumps; {where}")

    # -- bidding (5.5, optional) ----------------------------------------------------------------
    def bid_limit(self) -> int:
        """Any number of tricks from 0 to all the tricks the bid covers (5.5)."""
        return self.opt["hand_size"] if self.bid_scope_is_deal() else self.total_tricks

    def on_bid(self, seat: int, tricks: int, index: int) -> Outcome:
        if not self.opt["bidding"]:
            raise Reject("bidding_off", "bidding is off in this game (option 'bidding')")
        if self.phase == "trump":
            raise Reject("trump_not_turned", "turn up the trump card before the bidding")
        if self.phase != "bidding":
            raise Reject("not_bidding", "bids are made after the deal, before the first card is played")
        self.check_turn(seat)
        if tricks > self.bid_limit():
            raise Reject("bad_bid", f"a bid is 0-{self.bid_limit()} tricks, not {tricks}")
        self.bids[seat] = tricks
        message = f"{self.players[seat]} bids {tricks} trick{'s' if tricks != 1 else ''}"
        if seat == self.dealer:
            self.phase, self.to_act = "play", self.leader
            message += f"; bidding over, {self.players[self.leader]} leads"
        else:
            self.to_act = (seat + 1) % self.n
        return Outcome(message)

    # -- trick play (5.4) ----------------------------------------------------------------------
    def on_play(self, seat: int, cards: tuple[Card, ...], index: int) -> Outcome:
        if self.phase == "trump":
            raise Reject("trump_not_turned", "the trump card must be turned up (a trump event) before the first play")
        if self.phase == "bidding":
            raise Reject("bidding_not_over", f"{self.players[self.to_act]} (seat {self.to_act}) has still to bid")
        self.check_turn(seat)
        if len(cards) != 1:
            raise Reject("wrong_card_count", f"one card per turn, not {len(cards)}")
        card = cards[0]
        self._check_held(seat, card)
        breach = self.duty_breach(seat, card, self.known[seat])
        if breach is not None:
            raise breach
        new_claims = self._claims_of(seat, card, index)
        # -- accepted: from here on, change the position
        outcome = Outcome(f"{self.players[seat]} {'leads' if not self.trick else 'plays'} {card}")
        self._test_claims(seat, card, index, outcome)
        mine = self.known[seat]
        if mine.get(card):
            mine[card] -= 1
            if not mine[card]:
                del mine[card]
        else:
            self.unknown[seat] -= 1
        self.hand_counts[seat] -= 1
        self.ledger.add([card])
        if card == self.turn_up:
            self.turn_up_where = "played"
        if self.unknown[seat]:
            self.claims.extend(new_claims)
        self.trick.append((seat, card, index))
        if len(self.trick) < self.n:
            self.to_act = (seat + 1) % self.n
        else:
            self._end_trick(outcome)
        self._update_hands_known()
        return outcome

    def _check_held(self, seat: int, card: Card) -> None:
        """Could ``seat`` hold ``card``?  Reject what is proven impossible."""
        if card == self.turn_up and self.turn_up_where in ON_TABLE:
            where = {"bottom_of_stock": "face up under the stock", "awaiting_winner": "face up, for the first "
                     "trick's winner", "set_aside": "set aside", "dead": "left in the stock"}[self.turn_up_where]
            raise Reject("card_out_of_play", f"{card} is the turned-up trump card, {where}: it is in nobody's hand",
                         card=str(card))
        if self.gone.get(card):
            raise Reject("card_already_played", f"{card} was played in an earlier deal", card=str(card))
        self.ledger.check([card])
        for other in range(self.n):
            if other != seat and self.known[other].get(card):
                raise Reject("card_not_in_hand", f"{card} is in {self.seat_name(other)}'s hand", card=str(card))
        if self.stock_known is not None and card in self.stock_known:
            raise Reject("card_not_in_hand", f"{card} is still in the stock", card=str(card))
        if not self.unknown[seat] and not self.known[seat].get(card):
            raise Reject("card_not_in_hand", f"{self.seat_name(seat)} does not hold {card}", card=str(card))

    def duty_breach(self, seat: int, card: Card, held: Counter[Card]) -> Reject | None:
        """The duty (follow suit; must_trump; must_overtrump) that playing ``card`` breaks,
        proven by cards ``held`` (all of them, or the part of the hand that is known)."""
        if not self.trick:
            return None
        lead = self.trick[0][1].suit
        trump = self.trump
        mine = [c for c, k in held.items() if k > 0]
        name = self.players[seat]
        if card.suit != lead:
            follow = [c for c in mine if c.suit == lead]
            if follow:
                return Reject("must_follow_suit", f"{name} must follow {SUIT_NAMES[lead]} (holds {follow[0]}), "
                              f"not play {card}")
            if self.opt["must_trump"] and card.suit != trump:
                trumps = [c for c in mine if c.suit == trump]
                if trumps:
                    return Reject("must_trump", f"{name} is void in {SUIT_NAMES[lead]} and must trump "
                                  f"(holds {trumps[0]}), not play {card}")
        if self.opt["must_overtrump"] and card.suit == trump:
            top = self._top_trump()
            if top and rank_value(card) < top:
                higher = [c for c in mine if c.suit == trump and rank_value(c) > top]
                if higher:
                    return Reject("must_overtrump", f"{name} must beat the trump on the table (holds "
                                  f"{higher[0]}), not play {card}")
        return None

    def _top_trump(self) -> int:
        """Rank value of the highest trump in the current trick (0 if none)."""
        return max((rank_value(c) for _, c, _ in self.trick if c.suit == self.trump), default=0)

    # -- hidden-hand claims (5.8) -----------------------------------------------------------------
    def _claims_of(self, seat: int, card: Card, index: int) -> list[Claim]:
        """What playing ``card`` now says about the rest of the hand (checked later)."""
        if not self.trick:
            return []
        lead = self.trick[0][1].suit
        trump, name, got = self.trump, self.players[seat], self.drawn_unknown[seat]
        claims = []
        if card.suit != lead:
            claims.append(Claim("revoke", seat, index, lead, 0, got,
                                f"{name} showed out of {SUIT_NAMES[lead]} with {card} while holding "
                                f"a {SUIT_NAMES[lead][:-1]}"))
            if self.opt["must_trump"] and card.suit != trump and lead != trump:
                claims.append(Claim("failed_to_trump", seat, index, trump, 0, got,
                                    f"{name} discarded {card} while holding a trump"))
        if self.opt["must_overtrump"] and card.suit == trump:
            top = self._top_trump()
            if top and rank_value(card) < top:
                claims.append(Claim("failed_to_overtrump", seat, index, trump, top, got,
                                    f"{name} played {card} under the table's trump while holding a higher one"))
        return claims

    def _test_claims(self, seat: int, card: Card, index: int, outcome: Outcome) -> None:
        """Does ``card`` prove (or only suggest) that an earlier claim of ``seat`` was false?

        A proven revoke also closes the same play's other claims (``failed_to_trump``,
        ``failed_to_overtrump``): a player who held the lead suit was not void, the trumping
        duties bind only a void player (DK-5), so a trump he shows later proves nothing more
        about that play.  One breach, one flag, as with known hands (``duty_breach``).

        The other way round, a trump shown after a discard proves a breach of that play
        only as "failed to trump, or revoked": while its revoke claim is open the referee
        cannot tell whether the player was void, and the flag's message says so (a revoke
        proven later then names the breach exactly).
        """
        kept = []
        revoked: set[int] = set()
        for claim in self.claims:
            if claim.seat != seat or not claim.matches(card) or card in claim.known_after:
                kept.append(claim)
                continue
            claim.shown += 1
            drawn_since = self.drawn_unknown[seat] - claim.unknown_at
            if claim.shown > drawn_since:        # one of them was held at the claim: proven
                message = claim.message
                open_revoke = next((c for c in self.claims if c.index == claim.index and c.code == "revoke"), None)
                if claim.code != "revoke" and open_revoke is not None:
                    duty = "trump" if claim.code == "failed_to_trump" else "beat the trump"
                    message += (f" (if void in {SUIT_NAMES[open_revoke.suit]} he had to {duty}, "
                                f"otherwise to follow suit)")
                outcome.flags.append(Flag(claim.code, seat, claim.index, message))
                self.possible_revokes = [p for p in self.possible_revokes
                                         if not (p["refers_to"] == claim.index and p["code"] == claim.code)]
                outcome.message += f" (proves a {claim.code.replace('_', ' ')} at line {claim.index})"
                if claim.code == "revoke":
                    revoked.add(claim.index)
                continue
            self.possible_revokes.append({"code": claim.code, "seat": seat, "refers_to": claim.index,
                                          "at": index, "card": str(card)})
            outcome.message += (f" (possible {claim.code.replace('_', ' ')} at line {claim.index}: cannot tell, "
                                f"{card} may have been drawn since)")
            kept.append(claim)
        self.claims = [c for c in kept if c.index not in revoked]
        self.possible_revokes = [p for p in self.possible_revokes if p["refers_to"] not in revoked]

    def _receive(self, seat: int, card: Card | None, count: bool = True) -> None:
        """``seat`` gets a card from the stock: a known one (face up, or the stock is known) or an unseen one."""
        if count:
            self.hand_counts[seat] += 1
        if card is None:
            self.unknown[seat] += 1
            self.drawn_unknown[seat] += 1
            return
        self.known[seat][card] += 1
        for claim in self.claims:
            if claim.seat == seat:
                claim.known_after.add(card)

    def _update_hands_known(self) -> None:
        self.hands = self.known if not any(self.unknown) else None

    # -- the end of a trick: winner, honours, draws (5.4.3-5, 5.5) -------------------------------
    def _end_trick(self, outcome: Outcome) -> None:
        plays = [(s, c) for s, c, _ in self.trick]
        winner = trick_winner(plays, self.trump)
        won = []
        for seat, card in plays:
            if card.suit == self.trump and card.rank in HONOURS:
                scorer = winner if self.opt["honours_to"] == "captor" else seat
                points = HONOURS[card.rank]
                self.honour_points[scorer] += points
                self.honours[scorer].append(str(card))
                self.honours_hand[scorer].append(str(card))
                self._score(scorer, points)
                won.append({"card": str(card), "points": points, "seat": scorer})
        self.tricks[winner] += 1
        self.tricks_hand[winner] += 1
        self.bid_tricks[winner] += 1
        self.tricks_played += 1
        if not self.opt["bidding"]:
            self._score(winner, 1)
        outcome.trick_winner = winner
        outcome.message += f"; {self.players[winner]} wins the trick" + (" (" + ", ".join(
            f"{h['card']} {h['points']} to {self.players[h['seat']]}" for h in won) + ")" if won else "")
        self.last_trick = {"winner": winner, "plays": trick_json(self.trick), "honours": won}
        self.trick = []
        if self.opt["stock_mode"] == "trick_and_draw":
            self._draw_round(winner, outcome)
        if not any(self.hand_counts):
            self._end_hand(outcome)
        else:
            self.to_act = winner

    def _score(self, seat: int, points: int) -> None:
        self.scores[seat] += points
        self.points_hand[seat] += points

    def stock_left(self) -> int:
        """Cards still to be had from the stock: the face-down ones and a face-up turn-up waiting there."""
        return self.stock_count + (1 if self.turn_up_where in ("bottom_of_stock", "awaiting_winner") else 0)

    def _draw_round(self, winner: int, outcome: Outcome) -> None:
        """Everyone draws one card, the winner first, while the stock can serve every player (DK-3)."""
        if self.stock_left() < self.n:
            if self.turn_up_where == "awaiting_winner":
                self.turn_up_where = "dead"     # the first trick brought no draw: nobody ever takes it
            return
        for k in range(self.n):
            seat = (winner + k) % self.n
            if k == 0 and self.turn_up_where == "awaiting_winner" or self.stock_count == 0:
                self.turn_up_where, self.turn_up_seat = "hand", seat
                self._receive(seat, self.turn_up)
                outcome.message += f"; {self.players[seat]} takes the turned-up {self.turn_up}"
            else:
                self.stock_count -= 1
                self._receive(seat, self.stock_known.pop(0) if self.stock_known is not None else None)
        outcome.message += f"; everyone draws ({self.stock_left()} left in the stock)"

    # -- the end of a deal and of the game (5.5) -----------------------------------------------------
    def _end_hand(self, outcome: Outcome) -> None:
        mode = self.opt["stock_mode"]
        over = mode != "deal_rounds" or self.stock_left() < self.n * self.opt["hand_size"]
        settle = self.opt["bidding"] and (over or self.bid_scope_is_deal())
        result = []
        for seat in range(self.n):
            trick_points = self.tricks_hand[seat] if not self.opt["bidding"] else 0
            entry: dict[str, Any] = {"tricks": self.tricks_hand[seat], "honours": list(self.honours_hand[seat]),
                                     "honour_points": self.points_hand[seat] - trick_points}
            if settle:
                bid = self.bids[seat]
                trick_points = bid_trick_points(bid, self.bid_tricks[seat], self.opt["bid_success"] == "exact")
                self._score(seat, trick_points)
                made = (self.bid_tricks[seat] == bid if self.opt["bid_success"] == "exact"
                        else self.bid_tricks[seat] >= bid)
                entry.update(bid=bid, bid_tricks=self.bid_tricks[seat], bid_made=made)
            entry["trick_points"] = trick_points
            entry["points"] = self.points_hand[seat]
            result.append(entry)
        outcome.hand_result = result
        outcome.message += "; the deal is played out"
        self.claims = []            # every card of the deal is out: nothing left to prove
        if over:
            self.dead_cards = self.stock_count + (self.turn_up_where in ("bottom_of_stock", "awaiting_winner",
                                                                           "dead"))
            if self.turn_up_where in ("bottom_of_stock", "awaiting_winner"):
                self.turn_up_where = "dead"
            self.end_game(self._winners())
            outcome.game_over = True
            outcome.message += "; game over: " + " and ".join(self.players[s] for s in self.winners) + \
                (" win" if len(self.winners) > 1 else " wins") + f" with {self.scores[self.winners[0]]}"
            return
        self._carry_stock = list(self.stock_known) if self.stock_known is not None else None
        self.gone = Counter(self.ledger.seen)
        self.dealer = (self.dealer + 1) % self.n
        outcome.message += f"; {self.players[self.dealer]} deals the next hand from the stock"
        self.start_next_hand()

    def _winners(self) -> list[int]:
        best = max(self.scores)
        tied = [s for s in range(self.n) if self.scores[s] == best]
        if len(tied) > 1 and self.opt["tiebreak"] != "shared":
            key = self.tricks if self.opt["tiebreak"] == "most_tricks" else self.honour_points
            most = max(key[s] for s in tied)
            tied = [s for s in tied if key[s] == most]
        return tied

    # -- moves and state ---------------------------------------------------------------------------
    def legal_moves(self) -> list[dict]:
        """The trump turn-up, the bids, or the plays of the seat to act (hands known)."""
        if self.game_over:
            return []
        if self.hands is None:
            raise Reject("hands_unknown", "legal moves need the hands (a deal event)")
        if self.phase == "trump":
            if self.stock_known is not None:
                return [{"event": "trump", "card": str(self.stock_known[0])}]
            held = sum(self.known, Counter())
            return [{"event": "trump", "card": str(c)} for c in self.ledger.deck.cards() if not held[c]]
        seat = self.to_act
        if self.phase == "bidding":
            return [{"event": "bid", "seat": seat, "tricks": t} for t in range(self.bid_limit() + 1)]
        held = self.hands[seat]
        return [{"event": "play", "seat": seat, "cards": [str(c)]}
                for c in sorted(c for c, k in held.items() if k > 0)
                if self.duty_breach(seat, c, held) is None]

    def extra_state(self) -> dict[str, Any]:
        return {
            "phase": "over" if self.game_over else self.phase,
            "stock_mode": self.opt["stock_mode"],
            "trump": self.trump,
            "trump_card": str(self.turn_up) if self.turn_up else None,
            "turn_up": None if self.turn_up is None else {"card": str(self.turn_up), "where": self.turn_up_where,
                                                          "seat": self.turn_up_seat},
            "stock_count": self.stock_left(),
            "deal_number": self.hand_number,
            "trick": trick_json(self.trick),
            "lead_suit": self.trick[0][1].suit if self.trick else None,
            "last_trick": self.last_trick,
            "tricks": list(self.tricks),
            "tricks_this_deal": list(self.tricks_hand),
            "tricks_played": self.tricks_played,
            "tricks_in_game": self.total_tricks,
            "honours": [list(h) for h in self.honours],
            "honour_points": list(self.honour_points),
            "bids": list(self.bids) if self.opt["bidding"] else None,
            "bid_tricks": list(self.bid_tricks) if self.opt["bidding"] else None,
            "open_claims": [{"code": c.code, "seat": c.seat, "refers_to": c.index,
                             "suit": c.suit, "above": c.above} for c in self.claims],
            "possible_revokes": [dict(p) for p in self.possible_revokes],
            "dead_cards": self.dead_cards if self.game_over else None,
            "next_game_dealer": (self.dealer + 1) % self.n,
        }


def trick_json(trick: list[tuple[int, Card, int]]) -> list[dict]:
    """A trick's plays for the state: seat, card and log index of each."""
    return [{"seat": seat, "card": str(card), "index": index} for seat, card, index in trick]
