"""Khanhoo: the 60-card multi-trick game (seed 002; rule book section 3).

Read this module top to bottom against ``shared/rules.md`` section 3.

Deck (3.2): A-9 of clubs, diamonds and hearts and J Q K of spades, every card
twice (:data:`~referee.decks.KHANHOO_60`).  A 10, a spade pip or a club,
diamond or heart court is ``not_in_deck``; a third copy of a card is
``card_already_played``.  Suit cards rank 9 high down to A low; the six
courts have no rank or suit in play and are all alike.

Deal (3.3): hand size, packet size and the points needed to win depend on the
number of players still in (options ``hand_size``, ``packets`` and
``win_threshold``, K60-1 and K60-2).  The dealer's left leads the first trick.

Leads (3.4): a *single* (any card), a *sequence* (3+ cards of one suit with
consecutive ranks, ace low, no wrap, no courts), a *group* (3+ cards of one
rank with at least one each of clubs, diamonds and hearts, no courts), an
*ace group* (a group of aces plus any number of courts).  Anything else is
``invalid_combination``, with the reason in the message.

Following (3.5): every other player in turn plays exactly as many cards as
were led (``wrong_card_count`` otherwise), any cards at all.  A follower's
play *contends* only if it is a valid combination of the same type and size;
against an ace group only a Group of rank 2-9 of exactly that size contends
(three-suit rule unless ``group_three_suits`` is off, K60-8; courts only with
``follower_courts_in_group``, K60-7).

Deciding the trick (3.6): highest contender wins, ties go to the earliest
played (so play order matters, duplicates included).  A court led as a single
wins only if every card played is a court; otherwise the first non-court
card in play order, even a follower's, fixes the suit.  The winner scores as
many points as cards were led and leads next.

End of hand (3.7): M is the highest point total of the hand; everyone else
pays (M - points) chips into the pot.  A player whose points this hand reach
the threshold wins the game and by default takes the pot; otherwise the deal
passes left and the pot carries over.  A player who cannot pay pays what he
has and is out (K60-10); the game goes on while two players remain.

State.  ``scores`` are chips.  The state adds ``pot``, ``points`` (this hand's
points by seat), ``points_total`` (all hands), ``tricks_won``, ``debts`` (bank
loans under ``bankrupt: borrow``), ``hand_size``, ``packets``,
``win_threshold`` (for the players in this hand), the ``lead`` and ``trick``
in progress, ``last_trick`` and ``last_hand`` (its points, payments and pot).
A hand-ending verdict's ``hand_result`` gives per seat ``points`` (the change
in chips), ``hand_points``, ``paid``, ``borrowed``, ``pot_won``, ``chips``,
``bankrupt`` and ``in_hand``.

Face-down discards (``facedown_discards``, K60-6).  With the option on, a
follower may lay his cards face down.  The camera cannot read them, so the
log records such a follow as an ``exchange`` event: ``{"event": "exchange",
"seat": s, "count": k}``.  Only the count is checked (it must equal the lead);
the cards never contend and do not fix the suit of a court-led single.  With
the hands known (a ``deal``), the exchange must name its cards in
``discards`` so the referee can take them out of the hand.

Gaps the rule book leaves, and the defaults chosen here:

* hand size and threshold follow the players *still in*: after a bankruptcy
  the next hand is dealt for one player fewer (so options are checked for
  every count from 2 up to the starting number);
* a player who pays his last chip exactly stays in; he is out when he owes
  more than he has (K60-10);
* ``next_dealer`` top scorer / lowest scorer: ties go to the first of them
  clockwise from the dealer's left, among the players still in;
* the pot shared (several winners with a low custom threshold, or
  ``pot_to: split``) goes in equal whole chips; the odd chips stay in the pot;
* the game also ends when only one player is left: he wins;
* ``bankrupt: borrow``: the shortfall is lent by the bank (``debts``), his
  chips stay at 0, and chips he wins later repay the loan first.

There are no hidden-hand duties in this game (no duty to follow suit or to
beat, K60-5), so it never raises flags: everything is checked at once.

>>> from referee.cards import parse_cards
>>> classify(parse_cards(["4D", "5D", "6D"]))
Lead(kind='sequence', size=3, rank=6, suit='D')
>>> classify(parse_cards(["AC", "AD", "AH", "JS", "QS"])).kind
'ace_group'
>>> why_not_a_lead(parse_cards(["8H", "9H", "AH"]))
'8H 9H AH is not a sequence: the ace is low only, a sequence does not wrap from 9 to A'
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Iterator, NamedTuple

from referee.cards import Card, card_names
from referee.decks import KHANHOO_60
from referee.errors import Reject
from referee.game import Game, Outcome
from referee.options import Bool, Choice, Int, IntTable

SUITED = ("C", "D", "H")                 # the three suits of the suit cards
SUIT_WORDS = {"C": "clubs", "D": "diamonds", "H": "hearts"}
COUNTS = (2, 3, 4, 5)


def names(cards: Iterable[Card]) -> str:
    return " ".join(card_names(cards))


def card_order(card: Card) -> tuple[int, str]:
    """Display and enumeration order: by rank (courts last), then suit."""
    return (10 if card.is_court else card.rank, card.suit)


# -- 3.4 combinations -----------------------------------------------------------------------
class Lead(NamedTuple):
    """A legal lead.  ``rank``: the card's rank for a single (0 for a court), the top
    rank of a sequence, the rank of a group (1 for an ace group)."""

    kind: str                 # "single", "sequence", "group" or "ace_group"
    size: int
    rank: int
    suit: str | None          # the suit of a suit-card single or of a sequence


def _classify(cards: tuple[Card, ...]) -> tuple[Lead | None, str]:
    """The lead these cards make, or None and the reason they make none."""
    k = len(cards)
    shown = names(cards)
    if k == 1:
        c = cards[0]
        return (Lead("single", 1, 0, None) if c.is_court else Lead("single", 1, c.rank, c.suit)), ""
    if k == 2:
        return None, (f"{shown} is two cards: a pair or any other two cards is no lead; lead one card, "
                      "a sequence of 3 or more, or a group of 3 or more")
    courts = [c for c in cards if c.is_court]
    pips = [c for c in cards if not c.is_court]
    ranks = {c.rank for c in pips}
    suits = {c.suit for c in pips}
    missing = [SUIT_WORDS[s] for s in SUITED if s not in suits]
    if not pips:
        return None, f"{shown}: courts are led one at a time, or added to an ace group"
    if courts:
        if ranks == {1}:
            if not missing and len(pips) >= 3:
                return Lead("ace_group", k, 1, None), ""
            return None, (f"{shown}: courts may join an ace group, which needs at least 3 aces with one each "
                          f"of clubs, diamonds and hearts" + (f" (no {' or '.join(missing)})" if missing else ""))
        return None, f"{shown}: courts may only join aces (an ace group), never a sequence or another group"
    if len(ranks) == 1:
        rank = next(iter(ranks))
        if not missing:
            return Lead("ace_group" if rank == 1 else "group", k, rank, None), ""
        return None, (f"{shown} is not a group: a group needs at least one each of clubs, diamonds and "
                      f"hearts (no {' or '.join(missing)})")
    if len(suits) == 1:
        if len(ranks) < k:
            return None, f"{shown} is not a sequence: a sequence cannot repeat a rank"
        if max(ranks) - min(ranks) + 1 == k:
            return Lead("sequence", k, max(ranks), next(iter(suits))), ""
        if 1 in ranks and 9 in ranks:
            return None, f"{shown} is not a sequence: the ace is low only, a sequence does not wrap from 9 to A"
        return None, f"{shown} is not a sequence: the ranks are not consecutive"
    return None, f"{shown} mixes ranks and suits: a sequence is of one suit, a group of one rank"


def classify(cards: tuple[Card, ...]) -> Lead | None:
    """The combination ``cards`` make as a lead (3.4), or None."""
    return _classify(tuple(cards))[0]


def why_not_a_lead(cards: tuple[Card, ...]) -> str:
    return _classify(tuple(cards))[1]


def ace_group_beater(cards: tuple[Card, ...], size: int, three_suits: bool = True,
                     courts_allowed: bool = False) -> int | None:
    """The rank of a follower's Group that contends against an ace group of ``size``, or None.

    A Group of rank 2-9 of exactly ``size`` cards; at least one each of clubs, diamonds
    and hearts unless ``three_suits`` is off (K60-8); courts only if ``courts_allowed``
    (K60-7), and then besides a Group of at least 3 suit cards.
    """
    if len(cards) != size:
        return None
    pips = [c for c in cards if not c.is_court]
    if len(pips) < len(cards) and not courts_allowed:
        return None
    ranks = {c.rank for c in pips}
    if len(pips) < 3 or len(ranks) != 1 or 1 in ranks:
        return None
    if three_suits and not set(SUITED) <= {c.suit for c in pips}:
        return None
    return next(iter(ranks))


# -- enumeration for legal_moves ---------------------------------------------------------------
def _multisets(items: list[tuple[Card, int]], k: int) -> Iterator[tuple[Card, ...]]:
    """Every multiset of ``k`` cards from ``items`` (card, copies held), each once."""
    room = [0] * (len(items) + 1)
    for i in range(len(items) - 1, -1, -1):
        room[i] = room[i + 1] + items[i][1]

    def rec(i: int, left: int, acc: list[Card]) -> Iterator[tuple[Card, ...]]:
        if left == 0:
            yield tuple(acc)
            return
        if room[i] < left:
            return
        card, held = items[i]
        for take in range(min(held, left), -1, -1):
            yield from rec(i + 1, left - take, acc + [card] * take)

    return rec(0, k, [])


def _count_multisets(copies: list[int], k: int) -> int:
    ways = [1] + [0] * k
    for held in copies:
        ways = [sum(ways[j - t] for t in range(min(held, j) + 1)) for j in range(k + 1)]
    return ways[k]


def _combinations(held: Counter[Card], courts_with_groups: bool = False) -> Iterator[tuple[Card, ...]]:
    """Every legal multi-card lead in a hand: sequences, groups, ace groups (with courts),
    and, if ``courts_with_groups``, groups of rank 2-9 with courts added (K60-7)."""
    for suit in SUITED:
        ranks = [r for r in range(1, 10) if held[Card(r, suit)] > 0]
        for lo in ranks:
            hi = lo
            while held[Card(hi + 1, suit)] > 0:
                hi += 1
                if hi - lo >= 2:
                    yield tuple(Card(r, suit) for r in range(lo, hi + 1))
    court_items = sorted(((c, n) for c, n in held.items() if c.is_court and n > 0), key=lambda kv: card_order(kv[0]))
    court_sets = [()] + [m for c in range(1, sum(n for _, n in court_items) + 1) for m in _multisets(court_items, c)]
    for rank in range(1, 10):
        per_suit = [held[Card(rank, s)] for s in SUITED]
        if min(per_suit) == 0:
            continue
        for nc in range(1, per_suit[0] + 1):
            for nd in range(1, per_suit[1] + 1):
                for nh in range(1, per_suit[2] + 1):
                    group = (Card(rank, "C"),) * nc + (Card(rank, "D"),) * nd + (Card(rank, "H"),) * nh
                    if rank == 1 or courts_with_groups:
                        for extra in court_sets:
                            yield group + extra
                    else:
                        yield group


def _relaxed_groups(held: Counter[Card], size: int) -> Iterator[tuple[Card, ...]]:
    """Groups of rank 2-9 of ``size`` suit cards without the three-suit rule (K60-8 relaxed)."""
    for rank in range(2, 10):
        items = [(Card(rank, s), held[Card(rank, s)]) for s in SUITED if held[Card(rank, s)] > 0]
        yield from _multisets(items, size)


class Play(NamedTuple):
    """One turn in the current trick; ``cards`` is None for a face-down follow."""

    seat: int
    cards: tuple[Card, ...] | None
    count: int
    index: int

    def to_json(self) -> dict:
        out: dict[str, Any] = {"seat": self.seat, "index": self.index, "count": self.count,
                               "cards": card_names(self.cards) if self.cards is not None else None}
        if self.cards is None:
            out["face_down"] = True
        return out


class Khanhoo(Game):
    name = "khanhoo"
    title = "Khanhoo (60-card multi-trick game)"
    summary = ("Lead singles, sequences or three-suit groups from a doubled 60-card pack; everyone follows "
               "with as many cards; win a majority of the hand's points to take the pot of chips.")
    option_prefix = "k60"
    min_players, max_players = 2, 5
    deck = KHANHOO_60
    options = (
        IntTable("hand_size", {2: 20, 3: 16, 4: 15, 5: 12}, "Cards dealt to each player, by number of "
                 "players (K60-1)", minimum=1, counts=COUNTS),
        IntTable("packets", {2: 2, 3: 2, 4: 3, 5: 3}, "Cards per packet in the deal, by number of players; "
                 "the hand size must be a multiple of it (3.3)", minimum=1, counts=COUNTS),
        IntTable("win_threshold", {2: 11, 3: 9, 4: 8, 5: 7}, "Points that win the game, by number of "
                 "players (K60-2)", minimum=1, counts=COUNTS),
        Choice("threshold", "per_hand", "The threshold counts the points of one hand, or the points of all "
               "hands added up (K60-11)", choices=("per_hand", "cumulative")),
        Choice("pot_to", "winner", "Who collects the pot at the end of the game: the winner; nobody (it "
               "carries into the next game, see pot_start); or everyone still in, in equal shares (K60-3)",
               choices=("winner", "carry", "split")),
        Int("pot_start", 0, "Chips in the pot when the game starts: a pot carried over from the last "
            "game (K60-3)", minimum=0),
        Choice("next_dealer", "left", "Who deals the next hand: the dealer's left, the hand's top scorer, "
               "or its lowest scorer (K60-4)", choices=("left", "top_scorer", "loser")),
        Bool("facedown_discards", False, "Followers may lay their cards face down (an exchange event of "
             "that many cards); only the count is checked and they never contend (K60-6)"),
        Bool("follower_courts_in_group", False, "A follower's Group that beats an ace group may include "
             "courts (K60-7)"),
        Bool("group_three_suits", True, "A Group that beats an ace group must hold clubs, diamonds and "
             "hearts; false relaxes this (K60-8)"),
        Choice("court_draw", "high", "Courts in the draw for first dealer count above 9; or 'redraw': a "
               "player who draws a court sets it aside and draws again (K60-9)",
               choices=("high", "redraw")),
        Choice("bankrupt", "out", "A player who cannot pay: pays what he has and is out; borrows the rest "
               "from the bank (repaid from later winnings); or goes below zero (K60-10)",
               choices=("out", "borrow", "unlimited")),
        Int("chips_start", 310, "Chips each player starts with, in white units (10 W + 5 B + 5 R = 310, "
            "3.2)", minimum=1),
    )

    @staticmethod
    def check_options(options: dict[str, Any], players: int) -> None:
        size, packets, needed = options["hand_size"], options["packets"], options["win_threshold"]
        # eliminations shrink the table, so every count from 2 up to the start must work
        for n in range(2, players + 1):
            if size[n] * n > KHANHOO_60.size:
                raise Reject("bad_option", f"option 'hand_size' {size[n]} for {n} players needs {size[n] * n} "
                             f"cards; the deck has {KHANHOO_60.size}", option="hand_size")
            if size[n] % packets[n]:
                raise Reject("bad_option", f"option 'hand_size' {size[n]} for {n} players cannot be dealt "
                             f"in packets of {packets[n]}", option="hand_size")
            if options["threshold"] == "per_hand" and needed[n] > size[n]:
                raise Reject("bad_option", f"option 'win_threshold' {needed[n]} for {n} players can never be "
                             f"reached in a hand of {size[n]} points", option="win_threshold")

    @classmethod
    def draw_key(cls, card: Card) -> int:
        """The draw for first dealer (3.3, K60-9): A low ... 9, every court above 9, courts tie."""
        return 10 if card.is_court else card.rank

    @classmethod
    def draws_again(cls, card: Card, options: dict[str, Any]) -> bool:
        """With ``court_draw = "redraw"`` a court drawn for first dealer is set aside (K60-9)."""
        return options["court_draw"] == "redraw" and card.is_court

    # -- the hand (3.3) ------------------------------------------------------------------------
    def start_hand(self) -> None:
        if self.hand_number == 1:
            self.scores = [self.opt["chips_start"]] * self.n
            self.pot = self.opt["pot_start"]
            self.debts = [0] * self.n
            self.points_total = [0] * self.n
            self.last_hand: dict | None = None
            self.last_trick: dict | None = None
        self.hand_players = len(self.active)
        self.hand_size = self.opt["hand_size"][self.hand_players]
        self.hand_counts = [0 if s in self.eliminated else self.hand_size for s in range(self.n)]
        self.points = [0] * self.n
        self.tricks_won = [0] * self.n
        self._new_trick(self.next_seat(self.dealer))

    def _new_trick(self, leader: int) -> None:
        self.lead: Lead | None = None
        self.trick: list[Play] = []
        self.to_act = leader

    def deal_sizes(self) -> list[int]:
        return [0 if s in self.eliminated else self.hand_size for s in range(self.n)]

    # -- plays (3.4-3.6) ---------------------------------------------------------------------------
    def _check_in_deck(self, cards: tuple[Card, ...]) -> None:
        for card in cards:
            if self.deck.copies(card) == 0:
                why = ("there are no 10s" if card.rank == 10 else
                       "spades are only J Q K" if card.suit == "S" else
                       "the only courts are J Q K of spades")
                raise Reject("not_in_deck", f"{card} is not in the khanhoo deck ({why}): a misread or a "
                             "foreign card", card=str(card))

    def on_play(self, seat: int, cards: tuple[Card, ...], index: int) -> Outcome:
        self.check_turn(seat)
        self._check_in_deck(cards)
        if self.lead is None:
            lead, why = _classify(cards)
            if lead is None:
                raise Reject("invalid_combination", why)
            self.check_cards(seat, cards)
        else:
            self._check_count(len(cards))
            self.check_cards(seat, cards)
        # -- accepted: from here on, change the position -------------------------------
        self.take_cards(seat, cards)
        play = Play(seat, tuple(cards), len(cards), index)
        if self.lead is None:
            self.lead = lead
            text = f"{self.players[seat]} leads {names(cards)}" + \
                ("" if lead.kind == "single" else f" ({lead.kind.replace('_', ' ')} of {lead.size})")
        else:
            text = f"{self.players[seat]} plays {names(cards)}"
            if self.lead.size > 1:
                text += " (contends)" if self._contends(cards) is not None else " (does not contend)"
        return self._after_play(play, Outcome(text))

    def on_exchange(self, seat: int, count: int, index: int, discards: tuple[Card, ...] | None) -> Outcome:
        """A face-down follow (K60-6): ``count`` cards the camera cannot read."""
        if not self.opt["facedown_discards"]:
            raise Reject("not_in_this_game", "cards are played face up (option facedown_discards is off); "
                         "log a play with the cards")
        self.check_turn(seat)
        if self.lead is None:
            raise Reject("must_lead_face_up", f"{self.players[seat]} leads: a lead is played face up")
        self._check_count(count)
        if discards is not None:
            self._check_in_deck(discards)
            self.check_cards(seat, discards)
        elif self.hands is not None:
            raise Reject("discards_needed", "the hands are known: name the face-down cards in 'discards'")
        # -- accepted ------------------------------------------------------------------------------
        if discards is not None:
            self.take_cards(seat, discards)
        else:
            self.hand_counts[seat] -= count
        return self._after_play(Play(seat, None, count, index),
                                Outcome(f"{self.players[seat]} plays {count} card{'s' * (count > 1)} face down"))

    def _check_count(self, count: int) -> None:
        if count != self.lead.size:
            raise Reject("wrong_card_count", f"{self.lead.size} card{'s were' if self.lead.size > 1 else ' was'} "
                         f"led: follow with exactly {self.lead.size}, not {count}")

    def _after_play(self, play: Play, outcome: Outcome) -> Outcome:
        self.trick.append(play)
        if len(self.trick) < len(self.active):
            self.to_act = self.next_seat(play.seat)
            return outcome
        winner = self._decide()
        k = self.lead.size
        self.points[winner] += k
        self.tricks_won[winner] += 1
        outcome.trick_winner = winner
        outcome.message += f"; {self.players[winner]} wins the trick (+{k})"
        self.last_trick = {"winner": winner, "points": k, "lead": self.lead.kind,
                           "plays": [p.to_json() for p in self.trick]}
        self._new_trick(winner)
        if all(self.hand_counts[s] == 0 for s in self.active):
            self._end_hand(outcome)
        return outcome

    def _contends(self, cards: tuple[Card, ...]) -> int | None:
        """The rank a follower's multi-card play contends with (3.5-3.6), or None."""
        lead = self.lead
        if lead.kind == "ace_group":
            return ace_group_beater(cards, lead.size, self.opt["group_three_suits"],
                                    self.opt["follower_courts_in_group"])
        mine = classify(cards)
        if mine is not None and mine.kind == lead.kind and mine.size == lead.size:
            return mine.rank
        return None

    def _decide(self) -> int:
        """The trick's winner (3.6): the highest contender, the earliest of equals."""
        leader = self.trick[0].seat
        face_up = [(p.seat, p.cards) for p in self.trick if p.cards is not None]
        if self.lead.kind == "single":
            suit = self.lead.suit
            if suit is None:            # a court led: the first non-court card in play order sets the suit
                suit = next((cards[0].suit for _, cards in face_up if not cards[0].is_court), None)
                if suit is None:
                    return leader       # every card played is a court
            best_seat, best = leader, 0
            for seat, cards in face_up:
                c = cards[0]
                if not c.is_court and c.suit == suit and c.rank > best:
                    best_seat, best = seat, c.rank
            return best_seat
        best_seat, best = leader, self.lead.rank
        for seat, cards in face_up[1:]:
            rank = self._contends(cards)
            if rank is not None and rank > best:
                best_seat, best = seat, rank
        return best_seat

    # -- end of hand, settlement, game end (3.7) -----------------------------------------------------
    def _end_hand(self, outcome: Outcome) -> None:
        in_hand = self.active
        chips_before = list(self.scores)
        top = max(self.points[s] for s in in_hand)
        paid = [0] * self.n
        borrowed = [0] * self.n
        bankrupt: list[int] = []
        for seat in in_hand:
            owed = top - self.points[seat]
            if owed == 0:
                continue
            have = self.scores[seat]
            if owed > have and self.opt["bankrupt"] == "out":
                paid[seat] = max(have, 0)
                bankrupt.append(seat)
            elif owed > have and self.opt["bankrupt"] == "borrow":
                paid[seat] = owed
                borrowed[seat] = owed - max(have, 0)
            else:
                paid[seat] = owed
        for seat in in_hand:
            self.scores[seat] -= paid[seat] - borrowed[seat]
            self.debts[seat] += borrowed[seat]
            self.pot += paid[seat]
            self.points_total[seat] += self.points[seat]
        self.eliminated.extend(bankrupt)
        parts = [f"{self.players[s]} pays {paid[s]}" + (" (all he has: out)" if s in bankrupt else "")
                 + (f" (borrows {borrowed[s]})" if borrowed[s] else "") for s in in_hand if paid[s]]
        outcome.message += "; hand over: " + (", ".join(parts) if parts else "nobody pays") + f"; pot {self.pot}"

        needed = self.opt["win_threshold"][self.hand_players]
        measure = self.points if self.opt["threshold"] == "per_hand" else self.points_total
        still_in = self.active
        reached = [s for s in still_in if measure[s] >= needed]
        winners: list[int] = []
        if reached:
            best = max(measure[s] for s in reached)
            winners = [s for s in reached if measure[s] == best]
            one = len(winners) == 1
            outcome.message += "; " + " and ".join(self.players[s] for s in winners) + \
                f" reach{'es' * one} {best} of {needed} and win{'s' * one} the game"
        elif len(still_in) < 2:
            winners = still_in
            outcome.message += f"; {self.players[winners[0]]} is the last player in and wins the game"
        won = [0] * self.n
        if winners:
            takers = {"winner": winners, "split": still_in, "carry": []}[self.opt["pot_to"]]
            if takers:
                share = self.pot // len(takers)
                for seat in takers:
                    won[seat] = share
                    repay = min(self.debts[seat], share)
                    self.debts[seat] -= repay
                    self.scores[seat] += share - repay
                self.pot -= share * len(takers)
                if share:
                    outcome.message += f"; {' and '.join(self.players[s] for s in takers)} " \
                        f"take{'s' * (len(takers) == 1)} {share} from the pot" + \
                        (f" each" if len(takers) > 1 else "")
            if self.pot:
                outcome.message += f"; {self.pot} chip{'s' * (self.pot != 1)} stay{'s' * (self.pot == 1)} in the pot"
        result = []
        for seat in range(self.n):
            result.append({
                "points": self.scores[seat] - chips_before[seat],
                "hand_points": self.points[seat],
                "tricks": self.tricks_won[seat],
                "paid": paid[seat],
                "borrowed": borrowed[seat],
                "pot_won": won[seat],
                "chips": self.scores[seat],
                "points_total": self.points_total[seat],
                "bankrupt": seat in bankrupt,
                "in_hand": seat in in_hand,
            })
        outcome.hand_result = result
        self.last_hand = {"hand_number": self.hand_number, "hand_size": self.hand_size, "top": top,
                          "points": list(self.points), "paid": paid, "paid_in": sum(paid),
                          "pot_won": won, "pot": self.pot}
        if winners:
            self.end_game(winners)
            outcome.game_over = True
            return
        self.dealer = self._next_dealer()
        outcome.message += f"; {self.players[self.dealer]} deals hand {self.hand_number + 1}"
        self.start_next_hand()

    def _next_dealer(self) -> int:
        """K60-4: the dealer's left, or the hand's top (lowest) scorer; ties go to the first
        of them clockwise from the dealer's left; only players still in deal."""
        rule = self.opt["next_dealer"]
        first = self.next_seat(self.dealer)
        if rule == "left":
            return first
        order = [(first + i) % self.n for i in range(self.n)]
        order = [s for s in order if s not in self.eliminated]
        pick = max if rule == "top_scorer" else min
        target = pick(self.points[s] for s in order)
        return next(s for s in order if self.points[s] == target)

    # -- simulator support ------------------------------------------------------------------------------
    MAX_LISTED = 500        # above this many k-card follows, list a sample (see legal_moves)

    def legal_moves(self) -> list[dict]:
        """The legal events of the seat to act, from its known hand.

        A leader's list is complete.  A follower may play any ``k`` cards: when a hand
        holds more than :attr:`MAX_LISTED` different ``k``-card plays, the list holds
        every contending play and a sample of the rest (each run of ``k`` neighbours
        in the hand sorted by rank, and sorted by suit), each once.  With
        ``facedown_discards`` every non-contending play is also offered face down.
        """
        seat = self.to_act
        if self.hands is None or seat is None:
            raise Reject("hands_unknown", "legal moves need the hands (a deal event)")
        held = +self.hands[seat]
        items = sorted(held.items(), key=lambda kv: card_order(kv[0]))
        if self.lead is None:
            plays = [(c,) for c, _ in items] + list(_combinations(held))
            return [{"event": "play", "seat": seat, "cards": card_names(p)} for p in plays]
        k = self.lead.size
        if _count_multisets([n for _, n in items], k) <= self.MAX_LISTED:
            plays = list(_multisets(items, k))
        else:
            plays = self._contending_plays(held, k) + self._sample_plays(held, k)
        moves, seen = [], set()
        for p in plays:
            key = tuple(sorted(p, key=card_order))
            if key in seen:
                continue
            seen.add(key)
            moves.append({"event": "play", "seat": seat, "cards": card_names(key)})
            if self.opt["facedown_discards"] and (k == 1 or self._contends(key) is None):
                moves.append({"event": "exchange", "seat": seat, "count": k, "discards": card_names(key)})
        return moves

    def _contending_plays(self, held: Counter[Card], k: int) -> list[tuple[Card, ...]]:
        combos = list(_combinations(held, courts_with_groups=self.opt["follower_courts_in_group"]))
        if self.lead.kind == "ace_group" and not self.opt["group_three_suits"]:
            combos += list(_relaxed_groups(held, k))
        return [c for c in combos if len(c) == k and self._contends(c) is not None]

    @staticmethod
    def _sample_plays(held: Counter[Card], k: int) -> list[tuple[Card, ...]]:
        out = []
        for order in (card_order, lambda c: (c.suit, c.rank)):
            cards = sorted(held.elements(), key=order)
            out += [tuple(cards[i:i + k]) for i in range(len(cards) - k + 1)]
        return out

    # -- state -----------------------------------------------------------------------------------------------
    def extra_state(self) -> dict[str, Any]:
        lead = None
        if self.lead is not None:
            lead = {"seat": self.trick[0].seat, "kind": self.lead.kind, "size": self.lead.size,
                    "cards": card_names(self.trick[0].cards)}
        return {
            "pot": self.pot,
            "points": list(self.points),
            "points_total": list(self.points_total),
            "tricks_won": list(self.tricks_won),
            "debts": list(self.debts),
            "hand_size": self.hand_size,
            "packets": self.opt["packets"][self.hand_players],
            "win_threshold": self.opt["win_threshold"][self.hand_players],
            "threshold": self.opt["threshold"],
            "lead": lead,
            "trick": [p.to_json() for p in self.trick],
            "last_trick": self.last_trick,
            "last_hand": self.last_hand,
            "facedown_discards": self.opt["facedown_discards"],
        }
