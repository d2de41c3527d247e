"""Twenty-Two, "22" (seed 000; rule book section 2).

Read this module top to bottom against ``shared/rules.md`` section 2.

Ranking and values (2.2): suits never matter; ranks run 2 < 3 < ... < 10 < J <
Q < K < A.  A card's penalty value is A 11, K Q J 10, 2-10 face value.

The deck (2.4): one pack (``packs`` more for big tables) less every *scoring
card* lying face up in front of a loser.  Those cards stay out for the rest of
the game, so the deck shrinks each hand; they are a scoreboard, not plays, and
one that turns up in play again is a ``deck_error``.

A hand (2.4-2.7):

1. *Deal.*  The target size is 7 on the first hand (``first_hand_size``), then
   the value of the previous hand's losing card.  Every active player gets
   ``H = min(target, |deck| // active players)`` cards (T22-6); eliminated
   players get none, even when they deal.  The rest is the face-down stock.
2. *Exchange* (2.5): from the first active player left of the dealer round to
   the dealer, each player has one chance to swap ``k`` cards face down with
   the top of the stock (an ``exchange`` event).  ``k`` is at most what is left
   in the stock, and once the stock is empty nobody else may exchange.  A seat
   that does not exchange simply lets the next one go; the first lead closes
   the exchange round.
3. *Tricks* (2.6): the leader plays one or more cards of one rank and must keep
   at least one card for the last trick.  The others, clockwise, play as many
   cards each: either cards that *head* the top play (``head_rule``; the
   default ``pairwise``: sorted, each card at least the matching card of the
   top play) or their lowest cards.  The last player to head wins the trick
   (equal heads count, so a later equal head wins) and leads the next one.
4. *Showdown* (2.7): when every active player holds one card, each shows it
   (a ``play`` each, in any order).  Every player tied on the highest rank
   loses, scores the card's value and keeps it face up in front of him.

"Play your lowest cards" is a hidden-hand rule.  With the hands unknown the
referee records, for every follow that did not head, the highest rank it
played; any later card of that player below it proves the play was not his
lowest, and the earlier play is flagged ``not_lowest`` (exact: no card is drawn
after the exchange).  With ``must_head`` on, a non-heading follow also claims
that the player could not head; his later cards prove it wrong when, together
with that play, they could have headed (``must_head``).  With a ``deal`` the
hands are known and both rules reject at once.

Elimination and the end (2.8): a total of ``elim_at`` (22) or more eliminates a
player.  The loser deals the next hand, even an eliminated one (he gets no
cards); tied losers choose by ``tied_loser_dealer`` (T22-5).  The game ends
when one active player is left (he wins) or none (everyone still in went out
on the same hand: the lowest total wins, ties shared or decided by playoff
hands, ``final_tie``).

Rule-book gaps and the defaults chosen here:

* a seat that lets its exchange chance go sends nothing (or ``count`` 0); the
  next seat's exchange, or the first lead, passes over it;
* with the hands known, an exchange must name its ``discards`` and the deal its
  ``stock`` for the hands to stay known; otherwise they become unknown and the
  hidden-hand rules fall back to flags (the exchange precedes every play);
* under ``matched_set`` a follower who does not head plays his lowest cards,
  whatever their ranks;
* ``tied_loser_dealer=random`` draws from the game so far (same log, same
  dealer); ``final_tie=playoff`` deals playoff hands to the tied players in
  which every loser goes out, until one is left;
* if the deck ever holds fewer cards than there are active players (possible
  only with a high ``elim_at``), no hand can be dealt: the game ends and the
  lowest total wins.

Reject codes: ``not_your_turn``, ``wrong_card_count``, ``invalid_combination``
(a lead of mixed ranks), ``must_keep_card``, ``not_lowest`` and ``must_head``
(known hands), ``deck_error`` (a scoring card in play), ``card_discarded``,
``card_already_played``, ``not_in_deck``, ``card_not_in_hand``,
``already_shown``, ``stock_short``, ``stock_empty``, ``exchange_over``,
``already_exchanged``, ``exchange_turn_passed``, ``eliminated``, ``bad_deal``,
``too_late``.  Flags: ``not_lowest``, ``must_head``.

>>> from referee.cards import parse_cards
>>> def r(text): return ranks_of(parse_cards(text.split()))
>>> heads(r("6C JD"), r("5C 5H"), "pairwise"), heads(r("5S AH"), r("6C JD"), "pairwise")
(True, False)
>>> heads(r("7C QD"), r("6C JD"), "all_ge_top"), heads(r("JC KD"), r("6C JD"), "all_ge_top")
(False, True)
>>> heads(r("9C 9D"), r("5C 5H"), "matched_set"), heads(r("6C JD"), r("5C 5H"), "matched_set")
(True, False)
>>> can_head(r("2S 4D 6C 9H JD"), r("5C 5H"), "pairwise"), value(parse_cards(["AS"])[0])
(True, 11)
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Iterable

from referee.cards import Card, card_names
from referee.decks import STANDARD_52, Deck
from referee.errors import Reject
from referee.game import Flag, Game, Outcome
from referee.options import Bool, Choice, Int

CARDS_PER_PACK_PLAYERS = 6        # 2-6 players per 52-card pack (2.2); more need another pack


def rank_key(card: Card) -> int:
    """2 -> 2, ..., K -> 13, A -> 14 (2.2: ace high, suits ignored)."""
    return 14 if card.rank == 1 else card.rank


def value(card: Card) -> int:
    """Penalty value (2.2): A 11; K, Q, J 10; 2-10 face value."""
    return 11 if card.rank == 1 else min(card.rank, 10)


def ranks_of(cards: Iterable[Card]) -> tuple[int, ...]:
    """The ranks of some cards, ascending (the form the heading rules compare)."""
    return tuple(sorted(rank_key(c) for c in cards))


def rank_name(key: int) -> str:
    return {11: "J", 12: "Q", 13: "K", 14: "A"}.get(key, str(key))


def heads(play: tuple[int, ...], top: tuple[int, ...], rule: str) -> bool:
    """Does a follow (ascending ranks) head the top play, under ``head_rule`` (T22-3)?

    ``pairwise``: each card at least the matching card of the top play;
    ``all_ge_top``: every card at least the top play's highest card;
    ``matched_set``: cards of one rank, at least the top play's highest card.
    Equal counts as heading.
    """
    if len(play) != len(top):
        return False
    if rule == "pairwise":
        return all(p >= w for p, w in zip(play, top))
    if rule == "all_ge_top":
        return play[0] >= top[-1]
    return len(set(play)) == 1 and play[0] >= top[-1]          # matched_set


def can_head(held: Iterable[int], top: tuple[int, ...], rule: str) -> bool:
    """Could a player holding these ranks head ``top`` with ``len(top)`` of them?"""
    held = sorted(held)
    m = len(top)
    if len(held) < m:
        return False
    if rule == "pairwise":
        return heads(tuple(held[-m:]), top, rule)      # the highest m dominate every other choice
    if rule == "all_ge_top":
        return sum(1 for h in held if h >= top[-1]) >= m
    return any(k >= m and r >= top[-1] for r, k in Counter(held).items())


def _names(cards: Iterable[Card]) -> str:
    return " ".join(card_names(cards))


@dataclass
class Claim:
    """What a non-heading follow implied about the player's unseen cards.

    ``not_lowest``: the player held no card below ``bound``.  ``must_head``: he
    could not head ``top``; ``held`` collects the cards he is seen to have held
    then (the play itself and all his later cards, since nothing is drawn).
    """

    code: str
    seat: int
    index: int
    bound: int
    top: tuple[int, ...]
    held: list[int] = field(default_factory=list)
    message: str = ""


class TwentyTwo(Game):
    name = "twenty-two"
    title = "Twenty-Two"
    summary = ("Last-trick elimination game: don't be left with the highest card; "
               "22 penalty points and you are out.")
    option_prefix = "t22"
    min_players, max_players = 2, 3 * CARDS_PER_PACK_PLAYERS
    options = (
        Int("packs", 1, "Number of 52-card packs shuffled together; one per 6 players (T22-1)",
            minimum=1, maximum=3),
        Int("first_hand_size", 7, "Cards dealt to each player on the first hand (2.4)", minimum=1, maximum=13),
        Choice("head_rule", "pairwise", "How a multi-card play is headed: pairwise (sorted, card by card), "
               "all_ge_top (every card at least the top card), matched_set (one rank, at least the top card) "
               "(T22-3)", choices=("pairwise", "all_ge_top", "matched_set")),
        Bool("must_head", False, "A follower who can head the trick must do so (T22-4)"),
        Choice("tied_loser_dealer", "clockwise", "Who of several tied losers deals next: the first clockwise "
               "from the previous dealer's left, the lowest total, or one drawn at random (T22-5)",
               choices=("clockwise", "lowest_total", "random")),
        Int("elim_at", 22, "Total that eliminates a player (2.8)", minimum=1, maximum=100),
        Choice("final_tie", "shared", "Players tied for the lowest total when all are eliminated at once: "
               "shared win, or playoff hands among them (T22-8)", choices=("shared", "playoff")),
        Choice("deal_from", "left", "Deal order, shown to the dashboard (T22-2; cosmetic): from the dealer's "
               "left clockwise, or from his right counter-clockwise", choices=("left", "right")),
    )

    def __init__(self, players: tuple[str, ...], options: dict[str, Any], dealer: int):
        # game-long state, needed by the first start_hand (called from Game.__init__)
        self.scoreboard: list[list[Card]] = [[] for _ in players]   # scoring cards face up, by seat
        self.board: Counter[Card] = Counter()                       # the same cards, counted
        packs = options["packs"]
        self.pack = STANDARD_52 if packs == 1 else STANDARD_52.times(packs)
        self.target = options["first_hand_size"]
        self.playoff = False
        self.last_hand: dict | None = None
        super().__init__(players, options, dealer)

    @staticmethod
    def check_options(options: dict[str, Any], players: int) -> None:
        if players > CARDS_PER_PACK_PLAYERS * options["packs"]:
            need = -(-players // CARDS_PER_PACK_PLAYERS)
            raise Reject("bad_option", f"option 'packs' {options['packs']} is too few for {players} players: "
                         f"one pack serves up to {CARDS_PER_PACK_PLAYERS}, use packs={need}", option="packs")

    def the_deck(self) -> Deck:
        return self.pack

    @classmethod
    def draw_deck(cls, options: dict[str, Any]) -> Deck:
        """With several packs the same card can be drawn twice in one round of the draw."""
        return STANDARD_52.times(options["packs"])

    def cards_out_of_play(self) -> Counter[Card]:
        """The scoring cards face up in front of the losers (2.4): out for the rest of the game."""
        return Counter(self.board)

    def deck_size(self) -> int:
        """|D|: the pack less the scoreboard."""
        return self.pack.size - sum(self.board.values())

    def hand_size(self, target: int, players: int) -> int:
        """H = min(target, |D| // active players) (2.4, T22-6)."""
        return min(target, self.deck_size() // players)

    # -- the hand: deal and exchange (2.4, 2.5) ----------------------------------------
    def start_hand(self) -> None:
        active = self.active
        self.size = self.hand_size(self.target, len(active))
        self.stock_size = self.deck_size() - self.size * len(active)
        self.stock_left = self.stock_size
        self.hand_counts = [self.size if s in active else 0 for s in range(self.n)]
        self.first_leader = self.next_seat(self.dealer)
        # exchange order: first active player left of the dealer, clockwise, ending with the dealer if active
        self.exchange_order = [self.first_leader]
        while len(self.exchange_order) < len(active):
            self.exchange_order.append(self.next_seat(self.exchange_order[-1]))
        self.exchange_at = 0                      # position in exchange_order of the next chance
        self.exchanges: list[dict] = []
        self.discarded: Counter[Card] = Counter()
        self.stock_used = 0                       # cards taken from the top of the stock so far
        self.claims: list[Claim] = []
        self.played: list[list[Card]] = [[] for _ in range(self.n)]
        self.showdown: dict[int, dict] = {}
        self.last_trick: dict | None = None
        self._new_trick(self.first_leader)
        if self.stock_left > 0:
            self.phase = "exchange"
            self.to_act = self.exchange_order[0]
        else:
            self._close_exchange()

    def deal_sizes(self) -> list[int]:
        return [self.size if s in self.active else 0 for s in range(self.n)]

    def _new_trick(self, leader: int) -> None:
        self.leader = leader
        self.trick: list[dict] = []
        self.top: tuple[int, ...] | None = None      # ranks of the top play, ascending
        self.top_seat: int | None = None
        self.top_cards: list[str] = []

    def _close_exchange(self) -> None:
        """The exchange round is over: the first trick, or at once the showdown (T22-7)."""
        self.exchange_at = len(self.exchange_order)
        if all(self.hand_counts[s] == 1 for s in self.active):
            self.phase = "showdown"
            self.to_act = None
        else:
            self.phase = "play"
            self.to_act = self.leader

    def apply(self, event: Any, index: int) -> Outcome:
        if event.kind == "deal" and not self.game_over:
            if self.exchanges:
                raise Reject("too_late", "the deal can only be given before the exchange round starts")
            if event.stock is not None and len(event.stock) != self.stock_size:
                raise Reject("bad_deal", f"the stock should hold {self.stock_size} cards "
                             f"({self.deck_size()} in the deck, {self.size} each to {len(self.active)} players), "
                             f"the deal gives {len(event.stock)}")
        return super().apply(event, index)

    def on_exchange(self, seat: int, count: int, index: int, discards: tuple[Card, ...] | None) -> Outcome:
        if self.phase != "exchange":
            if self.stock_size == 0:
                raise Reject("stock_empty", "there is no stock this hand: nobody may exchange")
            if self.stock_left == 0 and not self.plays_this_hand:
                raise Reject("stock_empty", f"the stock is empty: {self.players[seat]} cannot exchange")
            raise Reject("exchange_over", "the exchange round is over"
                         + (": play has begun" if self.plays_this_hand else ": everyone has had his chance"))
        if seat in (e["seat"] for e in self.exchanges):
            raise Reject("already_exchanged", f"{self.seat_name(seat)} has already had his exchange this hand")
        waiting = self.exchange_order[self.exchange_at:]
        if seat not in waiting:
            raise Reject("exchange_turn_passed", f"{self.seat_name(seat)}'s chance to exchange has passed "
                         f"(the exchange goes clockwise from {self.players[self.first_leader]})")
        if count > self.hand_counts[seat]:
            raise Reject("wrong_card_count", f"{self.players[seat]} holds {self.hand_counts[seat]} cards "
                         f"and cannot exchange {count}")
        if count > self.stock_left:
            raise Reject("stock_short", f"the stock has only {self.stock_left} card"
                         f"{'s' if self.stock_left != 1 else ''} left: {self.players[seat]} may exchange at most "
                         f"{self.stock_left}, not {count}")
        if discards is not None:
            self._check_cards(seat, discards)
        # -- accepted ---------------------------------------------------------------------
        self.exchanges.append({"seat": seat, "count": count, "index": index})
        self.exchange_at = self.exchange_order.index(seat) + 1
        self.stock_left -= count
        if discards is not None:
            self.discarded.update(discards)
        message = (f"{self.players[seat]} exchanges {count} card{'s' if count != 1 else ''}"
                   if count else f"{self.players[seat]} keeps his hand")
        if self.hands is not None and count:
            if discards is not None and self.stock_known is not None:
                drawn = self.stock_known[self.stock_used:self.stock_used + count]
                self.hands[seat].subtract(discards)
                self.hands[seat].update(drawn)
                self.hands[seat] = +self.hands[seat]
            else:
                self.hands = None
                message += "; the cards taken are not known, so the hands are unknown from here on"
        self.stock_used += count
        message += f"; {self.stock_left} left in the stock"
        if self.stock_left == 0 or self.exchange_at >= len(self.exchange_order):
            self._close_exchange()
            message += "; the exchange round is over"
        else:
            self.to_act = self.exchange_order[self.exchange_at]
        return Outcome(message)

    # -- card checks -------------------------------------------------------------------------
    def _check_cards(self, seat: int, cards: tuple[Card, ...]) -> None:
        """Like :meth:`Game.check_cards`, and cards on the scoreboard (2.11: a deck error) or
        discarded this hand cannot be played."""
        ledger = self.ledger
        ledger.check(cards)
        board, discarded = self.board, self.discarded
        distinct = cards if len(cards) == 1 else tuple(set(cards))
        if board or discarded:
            for card in distinct:
                out = board.get(card, 0) + discarded.get(card, 0)
                n = cards.count(card)
                if out and ledger.seen[card] + n + out > ledger.deck.copies(card):
                    if ledger.seen[card] + n + board.get(card, 0) > ledger.deck.copies(card):
                        owner = next(s for s in range(self.n) if card in self.scoreboard[s])
                        raise Reject("deck_error", f"{card} is a scoring card face up in front of "
                                     f"{self.players[owner]}: it is out of the deck for the rest of the game",
                                     card=str(card))
                    raise Reject("card_discarded", f"{card} was discarded in the exchange: it is out of play "
                                 f"this hand", card=str(card))
        if len(cards) > self.hand_counts[seat]:
            raise Reject("wrong_card_count",
                         f"{self.players[seat]} holds only {self.hand_counts[seat]} cards, not {len(cards)}")
        if self.hands is not None:
            held = self.hands[seat]
            for card in distinct:
                if held[card] < cards.count(card):
                    raise Reject("card_not_in_hand", f"{self.players[seat]} does not hold {card}",
                                 card=str(card))

    # -- plays (2.6, 2.7) ----------------------------------------------------------------------
    def on_play(self, seat: int, cards: tuple[Card, ...], index: int) -> Outcome:
        closes_exchange = False
        if self.phase == "exchange":
            if all(self.hand_counts[s] == 1 for s in self.active):
                closes_exchange = True                   # T22-7: straight to the showdown
            elif seat == self.leader:
                closes_exchange = True
            else:
                raise Reject("not_your_turn", f"the exchange round is on: {self.players[self.to_act]} may "
                             f"exchange, or {self.players[self.leader]} lead to end it; not seat {seat}")
        showdown = self.phase == "showdown" or (closes_exchange and self.size == 1)
        if showdown:
            return self._showdown_play(seat, cards, index, closes_exchange)
        if not closes_exchange:
            self.check_turn(seat)
        self._check_cards(seat, cards)
        played = ranks_of(cards)
        names = _names(cards)
        rule, must_head = self.opt["head_rule"], self.opt["must_head"]
        if self.top is None:
            # the lead: one rank, and keep a card for the last trick (P)
            if len(set(played)) != 1:
                raise Reject("invalid_combination", f"a lead must be cards of one rank, not {names}")
            if len(cards) > self.hand_counts[seat] - 1:
                raise Reject("must_keep_card", f"{self.players[seat]} holds {self.hand_counts[seat]} cards and "
                             f"must keep one for the last trick: lead at most {self.hand_counts[seat] - 1}")
            headed = True
        else:
            m = len(self.top)
            if len(cards) != m:
                raise Reject("wrong_card_count", f"the lead was {m} card{'s' if m != 1 else ''}: "
                             f"{self.players[seat]} must play {m}, not {len(cards)}")
            headed = heads(played, self.top, rule)
            if not headed and self.hands is not None:
                held = sorted(rank_key(c) for c in self.hands[seat].elements())
                if must_head and can_head(held, self.top, rule):
                    raise Reject("must_head", f"{names} does not head {' '.join(self.top_cards)} and "
                                 f"{self.players[seat]} can head it: heading is compulsory")
                if played != tuple(held[:m]):
                    raise Reject("not_lowest", f"{names} does not head {' '.join(self.top_cards)} and is not "
                                 f"{self.players[seat]}'s {m} lowest card{'s' if m != 1 else ''} "
                                 f"({' '.join(rank_name(r) for r in held[:m])})")
        # -- accepted -----------------------------------------------------------------------
        outcome = Outcome()
        if closes_exchange:
            self._close_exchange()
        self._prove_claims(seat, cards, outcome)
        if not headed and self.hands is None:
            who = self.players[seat]
            self.claims.append(Claim("not_lowest", seat, index, played[-1], self.top,
                                     message=f"{who}'s {names} did not head the trick and "
                                     + ("was not his lowest card" if len(cards) == 1
                                        else f"were not his {len(cards)} lowest cards")))
            if must_head:
                self.claims.append(Claim("must_head", seat, index, 0, self.top, list(played),
                                         message=f"{who} played {names} but could have headed "
                                         f"{' '.join(self.top_cards)}"))
        self.take_cards(seat, cards)
        self.played[seat].extend(cards)
        leading = self.top is None
        self.trick.append({"seat": seat, "cards": card_names(cards), "index": index, "heads": headed})
        if headed:
            self.top, self.top_seat, self.top_cards = played, seat, card_names(cards)
        if leading:
            outcome.message = f"{self.players[seat]} leads {names}"
        else:
            outcome.message = f"{self.players[seat]} plays {names}" + (" and heads the trick" if headed else "")
        nxt = self.next_seat(seat)
        if nxt != self.leader:
            self.to_act = nxt
            return outcome
        # the trick is complete (2.6.3): the last header wins and leads
        winner = self.top_seat
        outcome.trick_winner = winner
        self.last_trick = {"winner": winner, "plays": self.trick}
        self._new_trick(winner)
        if all(self.hand_counts[s] == 1 for s in self.active):
            self.phase, self.to_act = "showdown", None
            outcome.message += f"; {self.players[winner]} wins the trick; showdown: everyone shows his last card"
        else:
            self.to_act = winner
            outcome.message += f"; {self.players[winner]} wins the trick and leads"
        return outcome

    def _showdown_play(self, seat: int, cards: tuple[Card, ...], index: int, closes_exchange: bool) -> Outcome:
        """One active seat shows its last card; the last of them ends the hand (2.7)."""
        if seat in self.showdown:
            raise Reject("already_shown", f"{self.players[seat]} has already shown his last card, "
                         f"{self.showdown[seat]['card']}")
        if len(cards) != 1:
            raise Reject("wrong_card_count", f"the showdown is one card each, not {len(cards)}")
        self._check_cards(seat, cards)
        # -- accepted ------------------------------------------------------------------------
        outcome = Outcome(f"{self.players[seat]} shows {cards[0]}")
        if closes_exchange:
            self._close_exchange()
        self._prove_claims(seat, cards, outcome)
        self.take_cards(seat, cards)
        self.played[seat].extend(cards)
        self.showdown[seat] = {"card": str(cards[0]), "index": index}
        if len(self.showdown) == len(self.active):
            self._end_hand(outcome)
        return outcome

    def _prove_claims(self, seat: int, cards: tuple[Card, ...], outcome: Outcome) -> None:
        """Flag earlier follows of this seat that these cards prove illegal (2.11)."""
        if not self.claims:
            return
        shown = [rank_key(c) for c in cards]
        kept = []
        for claim in self.claims:
            proven = False
            if claim.seat == seat:
                if claim.code == "not_lowest":
                    proven = min(shown) < claim.bound
                else:
                    claim.held.extend(shown)
                    proven = can_head(claim.held, claim.top, self.opt["head_rule"])
            if proven:
                outcome.flags.append(Flag(claim.code, claim.seat, claim.index, claim.message))
            else:
                kept.append(claim)
        self.claims = kept

    # -- end of the hand and the game (2.7, 2.8) ------------------------------------------------
    def _end_hand(self, outcome: Outcome) -> None:
        shown = {s: self.played[s][-1] for s in self.showdown}
        top = max(rank_key(c) for c in shown.values())
        losers = [s for s in self.active if rank_key(shown[s]) == top]
        was_active = self.active
        points = value(shown[losers[0]])
        result = []
        out_now = []
        for seat in range(self.n):
            lost = seat in losers
            if lost:
                self.scores[seat] += points
                self.scoreboard[seat].append(shown[seat])
                self.board[shown[seat]] += 1
            gone = lost and (self.playoff or self.scores[seat] >= self.opt["elim_at"])
            if gone:
                out_now.append(seat)
            result.append({"points": points if lost else 0, "card": str(shown[seat]) if seat in shown else None,
                           "loser": lost, "total": self.scores[seat], "eliminated": gone})
        self.eliminated = sorted(set(self.eliminated) | set(out_now))
        outcome.hand_result = result
        loser_names = " and ".join(self.players[s] for s in losers)
        outcome.message += (f"; {loser_names} {'loses' if len(losers) == 1 else 'lose'} with "
                            f"{rank_name(top)} and score{'s' if len(losers) == 1 else ''} {points}")
        if out_now:
            outcome.message += "; " + " and ".join(self.players[s] for s in out_now) + " eliminated"
        self.last_hand = {"hand_number": self.hand_number, "showdown": {str(s): str(c) for s, c in shown.items()},
                          "losers": losers, "points": points}
        dealer = self._next_dealer(losers)
        active = self.active
        if len(active) == 1:
            self._finish([active[0]], outcome)
            return
        if not active:
            best = min(self.scores[s] for s in was_active)
            tied = [s for s in was_active if self.scores[s] == best]
            if len(tied) == 1 or self.opt["final_tie"] == "shared":
                self._finish(tied, outcome)
                return
            self.eliminated = sorted(set(self.eliminated) - set(tied))
            self.playoff = True
            for s in tied:  # they come back for the playoff: not out after all
                result[s]["eliminated"] = False
            outcome.message += "; " + " and ".join(self.players[s] for s in tied) + \
                f" tie on {best}: playoff hand"
        self.dealer = dealer
        self.target = points
        if self.hand_size(points, len(self.active)) == 0:
            # the deck holds fewer cards than there are players: no hand can be dealt
            best = min(self.scores[s] for s in self.active)
            outcome.message += "; the deck is too small for another hand"
            self._finish([s for s in self.active if self.scores[s] == best], outcome)
            return
        self.start_next_hand()
        outcome.message += (f"; {self.players[dealer]} deals {self.size} card{'s' if self.size != 1 else ''} "
                            f"each")

    def _next_dealer(self, losers: list[int]) -> int:
        """The loser deals; tied losers per ``tied_loser_dealer`` (T22-5)."""
        if len(losers) == 1:
            return losers[0]
        rule = self.opt["tied_loser_dealer"]
        clockwise = sorted(losers, key=lambda s: (s - self.dealer - 1) % self.n)
        if rule == "lowest_total":
            best = min(self.scores[s] for s in losers)
            return next(s for s in clockwise if self.scores[s] == best)
        if rule == "random":
            # deterministic from the game so far, so a replay names the same dealer
            seed = f"{self.hand_number}:{self.scores}:{[card_names(b) for b in self.scoreboard]}"
            return random.Random(seed).choice(sorted(losers))
        return clockwise[0]

    def _finish(self, winners: list[int], outcome: Outcome) -> None:
        self.end_game(winners)
        self.phase = "over"
        outcome.game_over = True
        outcome.message += "; game over: " + " and ".join(self.players[s] for s in self.winners) + \
            (" wins" if len(self.winners) == 1 else " win")

    # -- moves and state --------------------------------------------------------------------------
    def legal_moves(self) -> list[dict]:
        """Every legal event now, from the known hands.

        Exchange round: the exchanges of the seat whose chance it is (0 to what
        the stock allows, every choice of discards) and the leader's leads,
        which end the round.  Showdown: every seat's last card (any order).
        """
        if self.game_over:
            return []
        if self.hands is None:
            raise Reject("hands_unknown", "legal moves need the hands (a deal event)")
        moves: list[dict] = []
        if self.phase == "showdown" or (self.phase == "exchange" and self.size == 1):
            if self.phase == "exchange":
                moves.extend(self._exchange_moves())
            for seat in self.active:
                if seat not in self.showdown:
                    card = next(c for c, k in sorted(self.hands[seat].items()) if k > 0)
                    moves.append({"event": "play", "seat": seat, "cards": [str(card)]})
            return moves
        if self.phase == "exchange":
            moves.extend(self._exchange_moves())
        seat = self.leader if self.phase == "exchange" else self.to_act
        held = sorted(self.hands[seat].elements(), key=lambda c: (rank_key(c), c.suit))
        if self.top is None:
            for key in sorted({rank_key(c) for c in held}):
                same = [c for c in held if rank_key(c) == key]
                for m in range(1, min(len(same), len(held) - 1) + 1):
                    for cards in dict.fromkeys(combinations(same, m)):
                        moves.append({"event": "play", "seat": seat, "cards": card_names(cards)})
            return moves
        rule, m = self.opt["head_rule"], len(self.top)
        ranks = [rank_key(c) for c in held]
        lowest = tuple(ranks[:m])
        forced = self.opt["must_head"] and can_head(ranks, self.top, rule)
        for cards in dict.fromkeys(combinations(held, m)):
            played = ranks_of(cards)
            if heads(played, self.top, rule) or (not forced and played == lowest):
                moves.append({"event": "play", "seat": seat, "cards": card_names(cards)})
        return moves

    def _exchange_moves(self) -> list[dict]:
        seat = self.to_act
        moves = [{"event": "exchange", "seat": seat, "count": 0, "discards": []}]
        if self.stock_known is None:
            return moves
        held = sorted(self.hands[seat].elements(), key=lambda c: (rank_key(c), c.suit))
        for k in range(1, min(len(held), self.stock_left) + 1):
            for cards in dict.fromkeys(combinations(held, k)):
                moves.append({"event": "exchange", "seat": seat, "count": k, "discards": card_names(cards)})
        return moves

    def extra_state(self) -> dict[str, Any]:
        deal_order: list[int] = []
        if not self.game_over:
            step = 1 if self.opt["deal_from"] == "left" else -1
            deal_order.append(self.next_seat(self.dealer, step))
            while len(deal_order) < len(self.active):
                deal_order.append(self.next_seat(deal_order[-1], step))
        return {
            "phase": self.phase if not self.game_over else "over",
            "hand_size": self.size,
            "target_size": self.target,
            "deck_size": self.deck_size(),
            "stock_size": self.stock_size,
            "stock_left": self.stock_left,
            "deal_order": deal_order,
            "exchange": {"order": list(self.exchange_order), "waiting": self.exchange_order[self.exchange_at:],
                         "done": list(self.exchanges)},
            "leader": self.leader,
            "trick": list(self.trick),
            "top": None if self.top is None else {"seat": self.top_seat, "cards": list(self.top_cards)},
            "lead_count": len(self.trick[0]["cards"]) if self.trick else None,
            "last_trick": self.last_trick,
            "showdown": {str(s): d["card"] for s, d in sorted(self.showdown.items())},
            "scoreboard": [card_names(cards) for cards in self.scoreboard],
            "cards_out_of_play": sum(len(cards) for cards in self.scoreboard),
            "last_hand": self.last_hand,
            "playoff": self.playoff,
            "open_claims": [{"code": c.code, "seat": c.seat, "refers_to": c.index} for c in self.claims],
        }
