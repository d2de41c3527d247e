"""Big Two, Polish 10-card variant (seed 003; rule book section 4).

Read this module top to bottom against ``shared/rules.md`` section 4.

Ranking (4.2): ranks 3 < 4 < ... < K < A < 2, suits clubs < diamonds < hearts
< spades; a single card is ranked by rank, then suit, so 3C is the lowest card
and 2S the highest.

Combinations (4.4): singles, pairs, triples and five-card hands (straight <
flush < full house < four of a kind + any card < straight flush).  A play must
have as many cards as the round's lead and beat the top play; or the player
passes.  When play comes back to the last player to play, he leads a new
round (a *trick*).  The first player to shed all his cards wins the hand; the
others score a penalty point per card left (20 if "packed": never played),
and every quads or straight flush played earns -5.

Hidden-hand duties, checked after the fact when the hands are unknown:

* the first hand is led by the holder of the lowest card dealt (4.3);
* D2 (4.5): following in a singles round when the next player holds one
  card, you must play your highest single if it beats the table: a pass or
  a lower single breaks it (a bomb, an option, is neither).  With
  ``d2_on_lead`` (B2-8) a *single* lead in that position must be your
  highest; leading a pair or more is free.

>>> from referee.cards import parse_cards
>>> combo(parse_cards(["QS", "QC"])) > combo(parse_cards(["QH", "QD"]))
True
>>> combo(parse_cards(["3C", "4D", "5H", "6S", "7C"])).category
'straight'
>>> combo(parse_cards(["JC", "QD", "KH", "AS", "2C"])) is None
True
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from typing import Any, NamedTuple

from referee.cards import Card, card_names
from referee.errors import Reject
from referee.game import Flag, Game, Outcome
from referee.options import Bool, Choice, Int

SUIT_ORDER = {"C": 0, "D": 1, "H": 2, "S": 3}


def rank_index(rank: int) -> int:
    """3 -> 0, ..., K -> 10, A -> 11, 2 -> 12."""
    return (rank - 3) % 13


def card_key(card: Card) -> int:
    """Single-card order: rank, then suit (4.2: ``rank_index*4 + suit_index``)."""
    return rank_index(card.rank) * 4 + SUIT_ORDER[card.suit]


LOWEST_CARD = Card(3, "C")

# Straights (B2-2): A-2-3-4-5, 2-3-4-5-6, ..., 10-J-Q-K-A; never J-Q-K-A-2,
# Q-K-A-2-3 or K-A-2-3-4.  Keyed by the set of ranks, the value is
# (position in poker order, rank of the top card).
STRAIGHTS: dict[frozenset[int], tuple[int, int]] = {}
for _start in range(1, 11):
    _ranks = [((_start - 1 + i) % 13) + 1 for i in range(5)]
    STRAIGHTS[frozenset(_ranks)] = (_start - 1, _ranks[-1])

FIVE_CATEGORIES = ("straight", "flush", "full_house", "four_of_a_kind", "straight_flush")


class Combo(NamedTuple):
    """A legal combination: compare two of the same ``size`` with ``<``."""

    size: int
    rank: tuple            # (category order, key...) -- tuples compare lexicographically
    category: str

    @property
    def earns_bonus(self) -> bool:
        return self.category in ("four_of_a_kind", "straight_flush", "bomb")


def _straight_position(ranks: frozenset[int], straight_rank: str) -> tuple[int, int] | None:
    found = STRAIGHTS.get(ranks)
    if found is None:
        return None
    position, top = found
    if straight_rank == "bigtwo":
        # straights holding a 2 (A-2-3-4-5 and 2-3-4-5-6) rank above 10-J-Q-K-A
        position = position + 8 if position < 2 else position - 2
    return position, top


def combo(cards: tuple[Card, ...], straight_rank: str = "poker", flush_compare: str = "rank",
          bombs: bool = False) -> Combo | None:
    """Classify a play; ``None`` if it is no legal combination."""
    n = len(cards)
    if n == 1:
        return Combo(1, (0, card_key(cards[0])), "single")
    ranks = Counter(c.rank for c in cards)
    if n in (2, 3, 4) and len(ranks) == 1:
        if n == 4:
            return Combo(4, (9, rank_index(cards[0].rank)), "bomb") if bombs else None
        top_suit = max(SUIT_ORDER[c.suit] for c in cards)
        return Combo(n, (0, rank_index(cards[0].rank), top_suit), ("pair", "triple")[n - 2])
    if n != 5:
        return None
    suits = {c.suit for c in cards}
    straight = _straight_position(frozenset(ranks), straight_rank) if len(ranks) == 5 else None
    if straight is not None:
        position, top = straight
        top_suit = SUIT_ORDER[next(c.suit for c in cards if c.rank == top)]
        if len(suits) == 1:
            return Combo(5, (4, position, top_suit), "straight_flush")
        return Combo(5, (0, position, top_suit), "straight")
    if len(suits) == 1:
        by_rank = tuple(sorted((rank_index(c.rank) for c in cards), reverse=True))
        suit = SUIT_ORDER[cards[0].suit]
        key = (suit, by_rank) if flush_compare == "suit" else (by_rank, suit)
        return Combo(5, (1, *key), "flush")
    counts = sorted(ranks.values())
    if counts == [2, 3]:
        triple = next(r for r, k in ranks.items() if k == 3)
        return Combo(5, (2, rank_index(triple)), "full_house")
    if counts == [1, 4]:
        quad = next(r for r, k in ranks.items() if k == 4)
        return Combo(5, (3, rank_index(quad)), "four_of_a_kind")
    return None


def beats(new: Combo, top: Combo) -> bool:
    """Does ``new`` beat ``top``?  Same size, higher rank; a bomb beats any non-bomb."""
    if new.category == "bomb":
        return top.category != "bomb" or new.rank > top.rank
    return new.size == top.size and new.rank > top.rank


class Claim(NamedTuple):
    """What a play implied about the player's unseen cards, to be proven later."""

    code: str
    seat: int
    index: int
    bound: int          # card key: the player claimed to hold no card above (or below) this
    message: str


class BigTwo(Game):
    name = "big-two"
    title = "Big Two (Polish 10-card variant)"
    summary = "Shed your cards with singles, pairs, triples and poker hands; 2 is high, fewest penalty points wins."
    option_prefix = "b2"
    min_players, max_players = 2, 5
    options = (
        Int("hand_size", 10, "Cards dealt to each player", minimum=1, maximum=13),
        Choice("direction", "clockwise", "Direction of play (B2-1)", choices=("clockwise", "counterclockwise")),
        Choice("straight_rank", "poker", "Straights: poker order (A-2-3-4-5 lowest) or big-two order (straights "
               "holding a 2 highest) (B2-2)", choices=("poker", "bigtwo")),
        Choice("flush_compare", "rank", "Flushes compare ranks from the top, then suit; or suit first (B2-3)",
               choices=("rank", "suit")),
        Bool("first_lead_must_include_lowest", False, "The first lead must contain the lowest card dealt (B2-4)"),
        Bool("pass_locks_out", False, "A player who passes sits out the rest of the round (B2-5)"),
        Int("no_announce_penalty", 0, "Penalty for not announcing a last card; 0 = the dashboard announces (B2-6)",
            minimum=0),
        Bool("bombs", False, "Four of a kind may be played alone as a bomb that beats any other play (B2-7)"),
        Bool("d2_on_lead", False, "The highest-single duty also applies when leading (B2-8)"),
        Bool("allow_negative", True, "Totals may go below zero (B2-9)"),
        Int("packed_penalty", 20, "Penalty for a player who never played a card in the hand", minimum=0),
        Int("bonus", -5, "Points for each four of a kind or straight flush played", maximum=0),
        Choice("end", "points", "When the game ends (B2-11)", choices=("points", "hands")),
        Int("end_at", 50, "Total (end=points) or number of hands (end=hands) that ends the game", minimum=1),
    )

    @staticmethod
    def check_options(options: dict[str, Any], players: int) -> None:
        if options["hand_size"] * players > 52:
            raise Reject("bad_option", f"option 'hand_size' {options['hand_size']} is too many for "
                         f"{players} players from 52 cards", option="hand_size")

    @classmethod
    def draw_key(cls, card: Card) -> int:
        return card_key(card)          # 2 highest, then suits: a draw never ties

    # -- the hand -----------------------------------------------------------------
    def start_hand(self) -> None:
        size = self.opt["hand_size"]
        self.hand_counts = [size] * self.n
        self.step = 1 if self.opt["direction"] == "clockwise" else -1
        self.played_any = [False] * self.n
        self.bonuses = [0] * self.n
        self.penalties = [0] * self.n            # unannounced last cards
        self.claims: list[Claim] = []
        self.plays_by: list[tuple[int, Card]] = []   # (seat, card) of every card shown this hand
        self.pending_announce: dict[int, int] = {}
        self._new_round(leader=None)
        if self.hand_number == 1:
            self.to_act = None                   # the holder of the lowest card: unknown until seen
            self.first_lead_open = True
        else:
            self.to_act = self.dealer            # the previous winner deals and leads
            self.first_lead_open = False

    def _new_round(self, leader: int | None) -> None:
        self.top: Combo | None = None
        self.top_seat: int | None = None
        self.top_cards: list[str] = []
        self.round_plays: list[dict] = []
        self.locked: set[int] = set()
        if leader is not None:
            self.to_act = leader

    def deal_sizes(self) -> list[int]:
        return [self.opt["hand_size"]] * self.n

    def on_deal(self, hands, index) -> Outcome:
        if self.first_lead_open:
            lowest = min((c for h in hands for c in h if h[c] > 0), key=card_key)
            holder = next(s for s, h in enumerate(hands) if h[lowest] > 0)
            self.to_act = holder
            self.lowest_dealt = lowest
            return Outcome(f"hands known; {self.seat_name(holder)} holds the lowest card {lowest} and leads")
        return Outcome("hands known: the last-card duty is checked at once")

    def _next(self, seat: int) -> int:
        """The next seat to act after ``seat``, skipping players locked out of the round."""
        nxt = seat
        for _ in range(self.n):
            nxt = (nxt + self.step) % self.n
            if nxt not in self.locked or nxt == self.top_seat:
                return nxt
        return seat

    # -- plays ------------------------------------------------------------------------
    def on_play(self, seat: int, cards: tuple[Card, ...], index: int) -> Outcome:
        self.check_turn(seat)
        if len(set(cards)) != len(cards):
            raise Reject("duplicate_card", "the same card appears twice in one play")
        self.check_cards(seat, cards)
        played = combo(cards, self.opt["straight_rank"], self.opt["flush_compare"], self.opt["bombs"])
        if played is None:
            raise Reject("invalid_combination", f"{' '.join(card_names(cards))} is not a single, pair, triple "
                         f"or five-card hand" + (" (four of a kind needs a fifth card)" if len(cards) == 4 else ""))
        if self.top is not None:
            if played.size != self.top.size and played.category != "bomb":
                raise Reject("wrong_card_count", f"this round is played with {self.top.size} cards, "
                             f"not {len(cards)}")
            if not beats(played, self.top):
                raise Reject("does_not_beat", f"{' '.join(card_names(cards))} does not beat "
                             f"{' '.join(self.top_cards)}")
        first_lead = self.first_lead_open
        if first_lead and self.hands is not None and self.opt["first_lead_must_include_lowest"] \
                and self.lowest_dealt not in cards:
            raise Reject("must_include_lowest", f"the first lead must contain the lowest card dealt, {self.lowest_dealt}")
        # D2 binds single plays only (4.5): leading a pair or more under ``d2_on_lead`` is free, and
        # a bomb (option) is neither a pass nor a lower single
        duty = len(cards) == 1 and self._d2_duty(seat)
        top_key = self._top_single_key()
        if duty and self.hands is not None:
            best = max(card_key(c) for c, k in self.hands[seat].items() if k > 0)
            if best > top_key and card_key(cards[0]) != best:
                raise Reject("must_play_highest", "the next player has one card left: you must play your highest "
                             "single, " + _card_of_key(best))
        # -- accepted: from here on, change the position ------------------------------------
        outcome = Outcome()
        self._check_claims(seat, cards, outcome)
        self._penalise_unannounced(seat, outcome)
        if duty:
            self.claims.append(Claim("highest_single_duty", seat, index, card_key(cards[0]),
                                     f"{self.players[seat]} had to play his highest single"))
        if first_lead:
            self.first_lead_open = False
            low = min(cards, key=card_key)
            if self.hand_number == 1 and self.hands is None:
                self.claims.append(Claim("not_lowest_holder", seat, index, card_key(low),
                                         f"{self.players[seat]} led the first hand without the lowest card"))
                if self.opt["first_lead_must_include_lowest"]:
                    self.claims.append(Claim("lowest_not_led", seat, index, card_key(low),
                                             f"the first lead did not contain the lowest card dealt"))
            self.first_leader = seat
        self.take_cards(seat, cards)
        self.played_any[seat] = True
        self.plays_by.extend((seat, c) for c in cards)
        if played.earns_bonus:
            self.bonuses[seat] += 1
        verb = "leads" if self.top is None else "plays"
        self.top, self.top_seat, self.top_cards = played, seat, card_names(cards)
        self.round_plays.append({"seat": seat, "cards": card_names(cards), "index": index})
        outcome.message = f"{self.players[seat]} {verb} {' '.join(card_names(cards))}"
        if played.earns_bonus:
            outcome.message += f" ({played.category.replace('_', ' ')}: {self.opt['bonus']} points)"
        if self.hand_counts[seat] == 0:
            self._end_hand(seat, outcome)
            return outcome
        if self.hand_counts[seat] == 1:
            outcome.message += f"; {self.players[seat]} has one card left"
            if self.opt["no_announce_penalty"]:
                self.pending_announce[seat] = index
        self.to_act = self._next(seat)
        return outcome

    def on_pass(self, seat: int, index: int) -> Outcome:
        self.check_turn(seat)
        if self.top is None:
            raise Reject("cannot_pass", "the leader of a round must play, not pass")
        if seat == self.top_seat:
            raise Reject("cannot_pass", "everyone else has passed: you lead a new round")
        duty = self._d2_duty(seat)
        top_key = self._top_single_key()
        if duty and self.hands is not None:
            best = max(card_key(c) for c, k in self.hands[seat].items() if k > 0)
            if best > top_key:
                raise Reject("must_play_highest", "the next player has one card left and your highest single, "
                             f"{_card_of_key(best)}, beats the table: you must play it")
        outcome = Outcome(f"{self.players[seat]} passes")
        self._penalise_unannounced(seat, outcome)
        if duty:
            self.claims.append(Claim("highest_single_duty", seat, index, top_key,
                                     f"{self.players[seat]} passed though he may have held a higher single"))
        self.round_plays.append({"seat": seat, "pass": True, "index": index})
        if self.opt["pass_locks_out"]:
            self.locked.add(seat)
        nxt = self._next(seat)
        if nxt == self.top_seat:
            winner = self.top_seat
            outcome.trick_winner = winner
            outcome.message += f"; {self.players[winner]} wins the round and leads"
            self.last_trick = {"winner": winner, "plays": self.round_plays}
            self._new_round(leader=winner)
        else:
            self.to_act = nxt
        return outcome

    def on_announce(self, seat: int, index: int) -> Outcome:
        if self.hand_counts[seat] != 1:
            raise Reject("nothing_to_announce", f"{self.players[seat]} holds {self.hand_counts[seat]} cards, not one")
        self.pending_announce.pop(seat, None)
        return Outcome(f"{self.players[seat]} announces a last card")

    # -- duties ------------------------------------------------------------------------
    def _d2_duty(self, seat: int) -> bool:
        """Does the highest-single duty (D2) bind ``seat`` now, should he play a single or pass?

        Following in a singles round, or leading with ``d2_on_lead`` (B2-8: "when leading a
        single in that position, lead your highest"), when the next player holds one card.
        """
        following = self.top is not None
        if following and self.top.size != 1:
            return False
        if not following and not self.opt["d2_on_lead"]:
            return False
        nxt = self._next(seat)
        return nxt != seat and self.hand_counts[nxt] == 1

    def _top_single_key(self) -> int:
        return self.top.rank[1] if self.top is not None and self.top.size == 1 else -1

    def _check_claims(self, seat: int, cards: tuple[Card, ...], outcome: Outcome) -> None:
        """Flag earlier plays that these cards prove to have broken a hidden-hand duty."""
        keys = [card_key(c) for c in cards]
        kept = []
        for claim in self.claims:
            proven = False
            if claim.code == "highest_single_duty":
                proven = claim.seat == seat and max(keys) > claim.bound
            elif claim.code == "lowest_not_led":
                proven = min(keys) < claim.bound
            elif claim.code == "not_lowest_holder" and seat != claim.seat:
                proven = any(self._provably_lowest(card_key(c), claim.seat) for c in cards)
            if proven:
                outcome.flags.append(Flag(claim.code, claim.seat, claim.index, claim.message))
            else:
                kept.append(claim)
        self.claims = kept

    def _provably_lowest(self, key: int, leader: int) -> bool:
        """A card of another seat proves the leader lacked the lowest card dealt when
        every lower card has been seen in other seats' plays (so the leader held none)."""
        seen_elsewhere = {card_key(c) for s, c in self.plays_by if s != leader}
        return all(k in seen_elsewhere for k in range(key))

    def _penalise_unannounced(self, seat: int, outcome: Outcome) -> None:
        """Another seat acted before a player with one card announced it (B2-6)."""
        for other, index in list(self.pending_announce.items()):
            if other != seat:
                del self.pending_announce[other]
                self.penalties[other] += self.opt["no_announce_penalty"]
                outcome.flags.append(Flag("no_announce", other, index,
                                          f"{self.players[other]} did not announce his last card"))

    # -- end of hand and game -------------------------------------------------------------
    def _end_hand(self, winner: int, outcome: Outcome) -> None:
        if self.first_lead_open is False and self.hand_number == 1 and winner == getattr(self, "first_leader", None):
            # the leader's whole hand is now known: any lower card shown by others proves it
            low = min(card_key(c) for s, c in self.plays_by if s == winner)
            for claim in [c for c in self.claims if c.code == "not_lowest_holder"]:
                if any(card_key(c) < low for s, c in self.plays_by if s != winner):
                    outcome.flags.append(Flag(claim.code, claim.seat, claim.index, claim.message))
                    self.claims.remove(claim)
        result = []
        for seat in range(self.n):
            left = self.hand_counts[seat]
            packed = not self.played_any[seat]
            points = 0 if seat == winner else (self.opt["packed_penalty"] if packed else left)
            points += self.penalties[seat] + self.bonuses[seat] * self.opt["bonus"]
            total = self.scores[seat] + points
            if not self.opt["allow_negative"] and total < 0:
                points, total = -self.scores[seat], 0
            self.scores[seat] = total
            result.append({"points": points, "cards_left": left, "packed": packed and seat != winner,
                           "bonuses": self.bonuses[seat], "winner": seat == winner})
        outcome.trick_winner = winner
        outcome.hand_result = result
        outcome.message += f"; {self.players[winner]} is out of cards and wins the hand"
        if self.opt["end"] == "points":
            over = max(self.scores) >= self.opt["end_at"]
        else:
            over = self.hand_number >= self.opt["end_at"]
        if over:
            best = min(self.scores)
            self.end_game(s for s in range(self.n) if self.scores[s] == best)
            outcome.game_over = True
            outcome.message += "; game over: " + " and ".join(self.players[s] for s in self.winners) + " win" + \
                ("s" if len(self.winners) == 1 else "")
            return
        self.dealer = winner
        self.last_trick = {"winner": winner, "plays": self.round_plays}
        self.start_next_hand()

    def legal_moves(self) -> list[dict]:
        """Every legal play (and the pass) of the seat to act, from its known hand."""
        seat = self.to_act
        if self.hands is None or seat is None:
            raise Reject("hands_unknown", "legal moves need the hands (a deal event)")
        held = sorted((c for c, k in self.hands[seat].items() if k > 0), key=card_key)
        sizes = (1, 2, 3, 4, 5) if self.top is None else (self.top.size, 4) if self.opt["bombs"] else (self.top.size,)
        moves: list[dict] = []
        for size in sorted(set(sizes)):
            for cards in combinations(held, size):
                c = combo(cards, self.opt["straight_rank"], self.opt["flush_compare"], self.opt["bombs"])
                if c is None or (self.top is not None and not beats(c, self.top)):
                    continue
                if self.first_lead_open and self.opt["first_lead_must_include_lowest"] \
                        and self.lowest_dealt not in cards:
                    continue
                moves.append({"event": "play", "seat": seat, "cards": card_names(cards)})
        if self.top is not None and seat != self.top_seat:
            moves.append({"event": "pass", "seat": seat})
        if self._d2_duty(seat):
            best = held[-1]
            if card_key(best) > self._top_single_key():
                # no pass and no lower single; other sizes (a lead under d2_on_lead, a bomb) stay
                moves = [m for m in moves if m["event"] == "play"
                         and (len(m["cards"]) != 1 or m["cards"] == [str(best)])]
        return moves

    def extra_state(self) -> dict[str, Any]:
        hc = self.hand_counts
        return {
            "direction": self.opt["direction"],
            "trick": list(self.round_plays),
            "top": None if self.top is None else {"seat": self.top_seat, "category": self.top.category,
                                                  "cards": list(self.top_cards)},
            "last_trick": getattr(self, "last_trick", None),
            "last_card": [s for s in range(self.n) if hc and hc[s] == 1],
            "bonuses": list(self.bonuses),
            "open_claims": [{"code": c.code, "seat": c.seat, "refers_to": c.index} for c in self.claims],
        }


def _card_of_key(key: int) -> str:
    rank = (key // 4 + 3 - 1) % 13 + 1
    suit = "CDHS"[key % 4]
    return str(Card(rank, suit))
