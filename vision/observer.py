"""Stable observations: from a stream of frames to "these cards came, these went".

The :class:`Observer` keeps a model of the face-up cards on the table
(:class:`Track`: a physical card at a position in millimetres, with the votes
for what it reads as) and updates it only from *still* frames:

1. **Motion gate** (every frame, cheap): the frame is shrunk to
   ``gate_width`` pixels wide (each pixel the mean of 4x4 or more; about
   0.3 ms at 1280x720) and
   compared with the previous one; if more than ``motion_mm2`` of table
   changed, something is moving (a hand, a card in flight, motion blur) and
   nothing is read.  A frame with almost no contrast (lens covered, lights
   off) is *blank* and counts as motion too.
2. **Still**: once nothing has moved for ``still_s`` (0.3 s), the scene is
   compared with the last frame that was read (the *reference*).  Unchanged
   means nothing new: done, no recognition (this is the common case, and it
   costs only step 1).
3. **A look**: otherwise the card reader reads consecutive still frames:
   ``need`` (2) when they agree, more (up to ``votes``, 5) while a card is
   seen in some and missed in others without a lead of two.  A card counts
   when it is seen in most of the frames read and in at least ``need``; its
   reading is the one with the most support (summed confidence).
4. **Reconcile** with the tracks: a reading within ``match_mm`` of a known
   card is that card (no event).  When the reading differs, the part of the
   frame where the card lies tells whether the card was touched: untouched,
   it is the same card read differently, and its votes decide (a *relabel*,
   when the best-supported reading changes); touched, the old card went and
   a new one came.  A known card not seen is kept while its place is
   untouched (a missed reading), is *covered* when a card now lies on it
   (within ``cover_mm``), and otherwise is *leaving*: removed when the next
   look (at least ``confirm_s`` later, or when the scene changes again) still
   does not see it.  A hand resting on the table hides cards for a moment; it
   does not take them; and a card taken for gone that is seen again where it
   was, read the same, within ``return_s`` is the same card, not a new play.
   With one copy of each card in the deck, a card read at a new place while
   the card of that name is no longer seen at its old place has *moved*
   (nudged, swept to the scoreboard, a bumped table): no event.
5. New cards of one look are grouped: cards within ``cluster_mm`` of each
   other are one group, and the groups in one seat's zone are one play.  A
   new card where nothing changed since the last look was there already (the
   last look missed it): its group is marked ``late``, so the live table can
   add it to the play it belongs to.

Every threshold is in millimetres on the table (through the calibrated
homography) or in grey levels, never in raw pixels.  Times come from the
frames (synthetic for files), so replays are deterministic.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

import cv2
import numpy as np

from vision.card_reader import CardReader, Reading
from vision.sources import Frame
from vision.table_geometry import CARD_MM, TableGeometry

_EPS = 1e-6


@dataclass
class ObserverConfig:
    still_s: float = 0.3          # the scene must be still this long before it is read
    need: int = 2                 # a card must be seen in at least this many still frames of a look ...
    votes: int = 5                # ... and in most of them; a look reads at most this many frames
    gate_width: int = 160         # width of the motion gate's shrunken frame (pixels)
    pixel_delta: int = 20         # a grey-level change at least this large is a changed pixel
    motion_mm2: float = 250.0     # changed table area that means motion (about 1/20 of a card)
    new_mm2: float = 250.0        # changed area since the last look that means "look again"
    touched: float = 0.2          # fraction of a card's place changed that means it was touched
    match_mm: float = 30.0        # a reading this close to a known card is that card
    cluster_mm: float = 110.0     # new cards this close to each other are put down together
    cover_mm: float = 100.0       # a vanished card with a card now this close was covered
    confirm_s: float = 0.3        # a leaving card is removed by a look at least this much later
    blank_std: float = 4.0        # a frame with less contrast than this is blank
    copies: int = 1               # how many of each card the deck holds (khanhoo: 2)
    return_s: float = 10.0        # a card gone and seen again where it was within this long is the same card
    card_mm: tuple[float, float] = CARD_MM

    def __post_init__(self) -> None:
        if not 1 <= self.need <= self.votes:
            raise ValueError(f"need ({self.need}) must be 1..votes ({self.votes})")


@dataclass
class Track:
    """One face-up card on the table."""

    id: int
    pos: np.ndarray                     # centre in table mm
    box: tuple[float, float, float, float]   # last box in image pixels
    zone: str                           # "seat", "centre", "scoreboard" or "off"
    seat: int | None
    since: float                        # time it came to rest
    votes: Counter = field(default_factory=Counter)
    state: str = "on"                   # on | covered | leaving
    leaving_since: float | None = None
    looks: int = 0
    event_index: int | None = None      # the log line of the play it was part of (set by the live table)
    arrived: int = 0                    # the first look that had it in view (earlier than seen, if missed)
    reported: str | None = None         # the reading that was reported (for relabels)

    @property
    def card(self) -> str:
        """The best-supported reading (ties: the earlier reported one, then name order)."""
        best = max(self.votes.values())
        tied = sorted(k for k, v in self.votes.items() if v >= best - _EPS)
        return self.reported if self.reported in tied else tied[0]

    def to_dict(self) -> dict:
        return {"card": self.card, "x_mm": round(float(self.pos[0]), 1), "y_mm": round(float(self.pos[1]), 1),
                "zone": self.zone, "seat": self.seat, "state": self.state,
                "votes": {k: round(v, 2) for k, v in sorted(self.votes.items())}}


@dataclass
class Group:
    """New cards put down together: a play when ``kind`` is seat."""

    kind: str                  # seat | centre | scoreboard | off
    seat: int | None
    tracks: list[Track]
    zones: list[str]           # the zone names of its cards (more than one: ambiguous)
    late: bool = False         # cards that were already there at the last look, which missed them

    @property
    def cards(self) -> list[str]:
        return sort_cards([t.card for t in self.tracks])

    @property
    def ambiguous(self) -> bool:
        return len(set(self.zones)) > 1


@dataclass
class Change:
    """What a look found: new cards (grouped), cards taken away, readings changed."""

    t: float                   # time of the frame that completed the look
    t_rest: float              # when the scene came to rest
    groups: list[Group] = field(default_factory=list)
    look: int = 0              # the look's number (1, 2, ...)
    removed: list[Track] = field(default_factory=list)
    relabelled: list[tuple[Track, str, str]] = field(default_factory=list)   # (track, old, new)
    unreadable: list[tuple[np.ndarray, str, tuple]] = field(default_factory=list)  # (mm, zone name, box)
    moved: list[Track] = field(default_factory=list)   # known cards seen again elsewhere (no event)

    @property
    def empty(self) -> bool:
        return not (self.groups or self.removed or self.relabelled or self.unreadable or self.moved)


_RANK_ORDER = {r: i for i, r in enumerate(["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"])}
_SUIT_ORDER = {"C": 0, "D": 1, "H": 2, "S": 3}


def sort_cards(cards: Sequence[str]) -> list[str]:
    """The order a play's cards are listed in: rank (A low), then suit (C D H S)."""
    return sorted(cards, key=lambda c: (_RANK_ORDER.get(c[:-1], 99), _SUIT_ORDER.get(c[-1], 9), c))


@dataclass
class _Slot:
    """One card position within a look: its readings over the look's frames."""

    pos: np.ndarray
    box: tuple[float, float, float, float]
    frames: set = field(default_factory=set)
    support: Counter = field(default_factory=Counter)

    @property
    def card(self) -> str:
        best = max(self.support.values())
        return sorted(k for k, v in self.support.items() if v >= best - _EPS)[0]


class Observer:
    """Frames in, :class:`Change` out (see the module docstring).

    ``feed(frame)`` returns a :class:`Change` when a look completes with
    something new, else None.  The reader is called only inside looks.
    """

    def __init__(self, geometry: TableGeometry, reader: CardReader, config: ObserverConfig | None = None):
        self.geometry = geometry
        self.reader = reader
        self.config = config or ObserverConfig()
        self.tracks: list[Track] = []
        self._ids = itertools.count(1)
        self._prev: np.ndarray | None = None
        self._ref: np.ndarray | None = None
        self._size: tuple[int, int] | None = None
        self._last_motion: float | None = None
        self._look: list[list[Reading]] = []
        self._look_small: np.ndarray | None = None
        self._look_t = 0.0
        self._last_look_t: float | None = None
        self._refs: list[tuple[int, np.ndarray]] = []   # (look number, its frame) of the last looks
        self._gone: list[tuple[float, Track]] = []       # (when, card) taken for gone lately
        self._recheck = False            # a card half-seen by the last look: look again soon
        self._this_is_recheck = False
        self._state = "starting"
        self.looks = 0
        self.frames = 0
        self.last_readings: list[Reading] = []

    # -- status ----------------------------------------------------------------
    def status(self) -> dict:
        messages = {"starting": "waiting for the first frames", "moving": "something is moving: waiting",
                    "settling": "settling", "looking": "reading the cards", "still": "still: nothing new",
                    "blank": "the picture is blank (lens covered or lights off?)"}
        return {"state": self._state, "message": messages.get(self._state, self._state),
                "cards": [t.to_dict() for t in self.tracks], "looks": self.looks}

    @property
    def busy(self) -> bool:
        """Something moved since the last look and has not been read yet, or a card was
        half-seen and is being looked at again."""
        return self._recheck or self._state in ("starting", "moving", "settling", "looking")

    def look_again(self) -> None:
        """Read the table again soon (``confirm_s`` after the last look) even if nothing changed:
        e.g. the referee rejected a play in a way a missed card would explain."""
        self._recheck = True
        self._this_is_recheck = False

    def on_table(self) -> list[Track]:
        return [t for t in self.tracks if t.state != "leaving"]

    def forget(self, tracks: Sequence[Track]) -> None:
        ids = {t.id for t in tracks}
        self.tracks = [t for t in self.tracks if t.id not in ids]

    # -- the gate ----------------------------------------------------------------
    def _shrink(self, image: np.ndarray) -> np.ndarray:
        """The frame ``gate_width`` pixels wide, each pixel the mean of (at least) 4x4 frame pixels."""
        h, w = image.shape[:2]
        gw = self.config.gate_width
        gh = max(2, round(gw * h / w))
        if w >= 4 * gw:      # bilinear to twice the size first (averages 2x2): 5x cheaper than INTER_AREA alone
            image = cv2.resize(image, (2 * gw, 2 * gh), interpolation=cv2.INTER_LINEAR)
        return cv2.resize(image, (gw, gh), interpolation=cv2.INTER_AREA)

    def _changed(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Mask (0/255) of pixels where any colour channel changed by ``pixel_delta`` or more."""
        d = cv2.absdiff(a, b)
        if d.ndim == 3:
            ch = cv2.split(d)
            d = cv2.max(cv2.max(ch[0], ch[1]), ch[2])
        return cv2.compare(d, self.config.pixel_delta, cv2.CMP_GE)

    def _changed_mm2(self, a: np.ndarray, b: np.ndarray) -> float:
        return cv2.countNonZero(self._changed(a, b)) * self._cell_mm2()

    def _cell_mm2(self) -> float:
        w = self._size[0]
        mm_per_cell = (w / self.config.gate_width) / self.geometry.px_per_mm
        return mm_per_cell * mm_per_cell

    def feed(self, frame: Frame) -> Change | None:
        cfg = self.config
        image, t = frame.image, frame.t
        size = (image.shape[1], image.shape[0])
        if self._size != size:            # first frame, or the camera came back at another size
            self._size = size
            self._prev = self._ref = None
            self._look = []
        self.frames += 1
        small = self._shrink(image)
        std = cv2.meanStdDev(small)[1]
        if float(std.max()) < cfg.blank_std:
            return self._motion(t, small, blank=True)
        prev, self._prev = self._prev, small
        if prev is None or self._changed_mm2(small, prev) > cfg.motion_mm2:
            return self._motion(t, small)
        if self._last_motion is not None and t - self._last_motion < cfg.still_s - _EPS:
            self._state = "settling"
            return None
        if not self._look:
            changed = self._ref is None or self._changed_mm2(small, self._ref) > cfg.new_mm2
            wanted = changed
            if not wanted and (self._recheck or any(tr.state == "leaving" for tr in self.tracks)):
                wanted = self._last_look_t is None or t - self._last_look_t >= cfg.confirm_s - _EPS
            self._this_is_recheck = not changed
            if not wanted:
                self._state = "still"
                return None
        # a look: read this still frame
        self._state = "looking"
        readings = self.reader.read(image)
        self.last_readings = readings
        self._look.append(readings)
        self._look_small = small
        self._look_t = t
        slots = self._slots(self._look)
        if not self._decided(slots, len(self._look)):
            return None
        return self._finish(slots, t)

    def _motion(self, t: float, small: np.ndarray, blank: bool = False) -> Change | None:
        """Something moves (or the picture is blank): stop looking.  A look cut short that
        already read ``need`` still frames is decided on those (the next hand may come quickly)."""
        change = None
        if len(self._look) >= self.config.need:
            change = self._finish(self._slots(self._look), self._look_t)
        self._state = "blank" if blank else "moving"
        self._last_motion = t
        self._look = []
        self._prev = small
        return change

    # -- a look ------------------------------------------------------------------
    def _slots(self, look: list[list[Reading]]) -> list[_Slot]:
        slots: list[_Slot] = []
        for k, readings in enumerate(look):
            if not readings:
                continue
            pos = self.geometry.to_mm([r.centre for r in readings])
            for r, p in zip(readings, pos):
                best, best_d = None, self.config.match_mm
                for s in slots:
                    if k in s.frames:
                        continue
                    d = float(np.linalg.norm(s.pos - p)) + (0.0 if r.card in s.support else 5.0)
                    if d < best_d:
                        best, best_d = s, d
                if best is None:
                    best = _Slot(p.copy(), r.box)
                    slots.append(best)
                else:
                    n = len(best.frames)
                    best.pos = (best.pos * n + p) / (n + 1)
                best.frames.add(k)
                best.support[r.card] += max(float(r.confidence), 1e-3)
                best.box = r.box
        return slots

    def _decided(self, slots: list[_Slot], n: int) -> bool:
        """Enough frames read?  At least ``need``; more while any card was seen in some frames
        and missed in others without a clear majority (a lead of two), up to ``votes``."""
        cfg = self.config
        if n >= cfg.votes:
            return True
        if n < cfg.need:
            return False
        for s in slots:
            seen = len(s.frames)
            missed = n - seen
            if abs(seen - missed) < 2 or (seen > missed and seen < cfg.need):
                return False
        return True

    def _came_back(self, slot: _Slot, t: float) -> Track | None:
        """A card that was taken for gone lately and is seen again where it was, read the same.
        (Only with one copy of each card: in khanhoo the other copy may be played there.)"""
        if self.config.copies != 1:
            return None
        for k, (tg, tr) in enumerate(self._gone):
            if (t - tg <= self.config.return_s and tr.card == slot.card
                    and float(np.linalg.norm(tr.pos - slot.pos)) <= self.config.match_mm):
                del self._gone[k]
                return tr
        return None

    def _one_deck(self, present: list[_Slot]) -> None:
        """A card lies on the table at most ``copies`` times: when more places read as the
        same card, the ones with the least support for it fall back to their next reading."""
        for _ in range(3):
            by_card: dict[str, list[_Slot]] = {}
            for s in present:
                by_card.setdefault(s.card, []).append(s)
            clash = False
            for card, places in by_card.items():
                if len(places) <= self.config.copies:
                    continue
                places.sort(key=lambda s: -s.support[card])
                for s in places[self.config.copies:]:
                    if len(s.support) > 1:
                        del s.support[card]
                        clash = True
            if not clash:
                return

    def _present(self, slot: _Slot, n: int) -> bool:
        seen = len(slot.frames)
        return seen >= self.config.need and seen > n - seen

    def _place_changed(self, pos: np.ndarray, small: np.ndarray, ref: np.ndarray | None = None) -> bool:
        """Was the part of the frame where a card at ``pos`` (mm) lies changed since the last look
        (or since ``ref``)?"""
        ref = self._ref if ref is None else ref
        if ref is None:
            return True
        px = self.geometry.to_px([pos])[0]
        scale = self.config.gate_width / self._size[0]
        r = max(1.0, 0.5 * self.config.card_mm[0] * self.geometry.scale_at(pos) * scale)
        cx, cy = px[0] * scale, px[1] * scale
        h, w = small.shape[:2]
        x0, x1 = int(max(0, math.floor(cx - r))), int(min(w, math.ceil(cx + r)))
        y0, y1 = int(max(0, math.floor(cy - r))), int(min(h, math.ceil(cy + r)))
        if x1 <= x0 or y1 <= y0:
            return True
        changed = self._changed(np.ascontiguousarray(small[y0:y1, x0:x1]), np.ascontiguousarray(ref[y0:y1, x0:x1]))
        return cv2.countNonZero(changed) / changed.size >= self.config.touched

    def _finish(self, slots: list[_Slot], t: float) -> Change | None:
        cfg = self.config
        small = self._look_small
        t_rest = self._last_motion if self._last_motion is not None else t
        n_frames = len(self._look)
        self._look = []
        self.looks += 1
        present = [s for s in slots if self._present(s, n_frames)]
        self._one_deck(present)
        change = Change(t=t, t_rest=t_rest)

        # match present slots to known cards, nearest first (same reading preferred)
        pairs = []
        for i, s in enumerate(present):
            for tr in self.tracks:
                d = float(np.linalg.norm(tr.pos - s.pos))
                if d <= cfg.match_mm:
                    pairs.append((d + (0.0 if s.card == tr.card else 5.0), i, tr.id))
        pairs.sort()
        slot_of: dict[int, int] = {}
        used: set[int] = set()
        by_id = {tr.id: tr for tr in self.tracks}
        for _, i, tid in pairs:
            if i in used or tid in slot_of:
                continue
            tr, s = by_id[tid], present[i]
            if s.card != tr.card and self._place_changed(tr.pos, small):
                continue        # touched and reading differently: another card now lies there
            slot_of[tid] = i
            used.add(i)
        # one copy of each card: a card read where no card was, while the card of that name is no
        # longer seen where it was, is that card moved (nudged, swept to the scoreboard, a bumped table)
        moved: set[int] = set()
        if cfg.copies == 1:
            for i, s in enumerate(present):
                if i in used:
                    continue
                same = [tr for tr in self.tracks if tr.id not in slot_of and tr.card == s.card]
                if same:
                    tr = min(same, key=lambda tr: float(np.linalg.norm(tr.pos - s.pos)))
                    slot_of[tr.id] = i
                    used.add(i)
                    moved.add(tr.id)

        gone: list[Track] = []
        for tr in self.tracks:
            i = slot_of.get(tr.id)
            if i is not None:
                s = present[i]
                before = tr.card
                if tr.id in moved:
                    zone = self.geometry.zone_at(s.pos)
                    tr.pos = s.pos.copy()
                    tr.zone, tr.seat = (zone.kind, zone.seat) if zone else ("off", None)
                    change.moved.append(tr)
                tr.votes.update(s.support)
                tr.box = s.box
                tr.looks += 1
                tr.state, tr.leaving_since = "on", None
                after = tr.card
                if after != before:
                    change.relabelled.append((tr, before, after))
                continue
            # not seen in this look
            if tr.state == "leaving":
                gone.append(tr)         # seen gone by the last look and not back: taken away
                continue
            if not self._place_changed(tr.pos, small):
                continue                # untouched: a missed reading (or still covered)
            near = [s for s in present if float(np.linalg.norm(s.pos - tr.pos)) <= cfg.cover_mm]
            if near:
                tr.state, tr.leaving_since = "covered", None
            else:
                tr.state, tr.leaving_since = "leaving", t
        if gone:
            self.forget(gone)
            change.removed = gone
            self._gone = [(tg, g) for tg, g in self._gone if t - tg <= cfg.return_s] + [(t, g) for g in gone]

        new_tracks, late_tracks = [], []
        for i, s in enumerate(present):
            if i in used:
                continue
            back = self._came_back(s, t)
            if back is not None:         # hidden (a resting hand) long enough to be taken for gone: it is back
                back.votes.update(s.support)
                back.box, back.state, back.leaving_since = s.box, "on", None
                self.tracks.append(back)
                continue
            zone = self.geometry.zone_at(s.pos)
            # a card where nothing changed since the last look was there already: an earlier look missed it
            late = self._ref is not None and not self._place_changed(s.pos, small)
            tr = Track(next(self._ids), s.pos.copy(), s.box, zone.kind if zone else "off",
                       zone.seat if zone else None, t_rest, Counter(s.support), looks=1, arrived=self.looks)
            if late:   # which look was the first to have it in view?
                tr.arrived = next((k for k, ref in self._refs if not self._place_changed(s.pos, small, ref)),
                                  self.looks - 1)
            (late_tracks if late else new_tracks).append(tr)
            self.tracks.append(tr)
        late_groups = []
        for arrived in sorted({tr.arrived for tr in late_tracks}):
            for g in self._group([tr for tr in late_tracks if tr.arrived == arrived]):
                g.late = True
                late_groups.append(g)
        change.groups = late_groups + self._group(new_tracks)
        change.look = self.looks
        # cards the reader found but could not read (its "unknown" boxes), where no card is known
        # and where something changed since the last look: a box where nothing changed is the
        # table's own pattern (a newspaper's letters, a printed cloth), which the reader would
        # otherwise report after every play
        unknown = [tuple(b) for b in getattr(self.reader, "last_unknown", None) or []]
        if unknown:
            centres = self.geometry.to_mm([((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for b in unknown])
            for box, pos in zip(unknown, centres):
                if all(float(np.linalg.norm(tr.pos - pos)) > cfg.match_mm for tr in self.tracks) \
                        and self._place_changed(pos, small):
                    zone = self.geometry.zone_at(pos)
                    change.unreadable.append((pos, zone.name if zone else "off the table", box))
        # a card seen in some frames of this look but not enough: look again once, soon
        known = [tr.pos for tr in self.tracks]
        present_ids = {id(s) for s in present}
        weak = [s for s in slots if id(s) not in present_ids and
                all(float(np.linalg.norm(s.pos - p)) > cfg.match_mm for p in known)]
        # ... and when the scene changed but no card came, went or read differently (a card missed by
        # every frame of the look?)
        nothing = not (change.groups or change.removed or change.relabelled or change.moved or
                       any(tr.state == "leaving" for tr in self.tracks))
        self._recheck = (bool(weak) or nothing) and not self._this_is_recheck
        self._refs = (self._refs + [(self.looks, small)])[-8:]
        self._ref = small
        self._last_look_t = t
        self._state = "still"
        return None if change.empty else change

    def _group(self, tracks: list[Track]) -> list[Group]:
        if not tracks:
            return []
        # single-link clusters of cards put down together
        parent = list(range(len(tracks)))

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for a in range(len(tracks)):
            for b in range(a + 1, len(tracks)):
                if float(np.linalg.norm(tracks[a].pos - tracks[b].pos)) <= self.config.cluster_mm:
                    parent[find(a)] = find(b)
        clusters: dict[int, list[Track]] = {}
        for i, tr in enumerate(tracks):
            clusters.setdefault(find(i), []).append(tr)
        groups: dict[tuple, Group] = {}
        for members in clusters.values():
            names = [_zone_name(tr) for tr in members]
            top = Counter(names).most_common()
            if len(top) > 1 and top[0][1] == top[1][1]:
                key: tuple = ("ambiguous", tuple(sorted(set(names))), id(members))
                groups[key] = Group("ambiguous", None, members, names)
                continue
            lead = next(tr for tr in members if _zone_name(tr) == top[0][0])
            key = (lead.zone, lead.seat)
            if key in groups:
                groups[key].tracks.extend(members)
                groups[key].zones.extend(names)
            else:
                groups[key] = Group(lead.zone, lead.seat, list(members), names)
        return sorted(groups.values(), key=lambda g: (g.kind != "seat", g.seat if g.seat is not None else 99))


def _zone_name(tr: Track) -> str:
    return f"seat {tr.seat}" if tr.zone == "seat" else tr.zone
