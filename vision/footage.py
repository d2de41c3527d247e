"""Scripted footage of a real table, rendered by the project's scene renderer.

Given a table geometry and a script of table actions (a card play by a seat,
a pass said aloud and pressed on a button, a trick swept away, a trump turned
up), :class:`Footage` renders the frames an overhead camera would see: a hand
reaching in from the player's edge, cards put down (fanned when several),
the hand leaving, the table still; a hand sweeping a finished trick away.
Frames carry deterministic times (``i / fps``) and mild sensor noise.

It also knows the truth: :attr:`Footage.reader` is a
:class:`~vision.card_reader.LookupReader` that reads, for each rendered frame,
exactly the cards whose corner index is visible (optionally with injected
misses and misreads).  That is a deterministic *stand-in* for the recogniser,
for testing the live pipeline on whole hands; it is not the recogniser.

:func:`script_from_log` turns a referee log (e.g. from
:func:`referee.simulate.random_game`) into a script and the event log the
camera plus the buttons should produce.

Used by ``tests/test_live_*.py`` and ``bench/bench_live.py``; needs the face
cache of ``vision.synth`` (``scripts/fetch-art.sh``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from vision.card_reader import LookupReader, Reading, fingerprint
from vision.observer import sort_cards
from vision.table_geometry import CARD_MM, TableGeometry


@dataclass
class Action:
    """One thing that happens at the table.

    ``kind``: ``play`` (seat, cards), ``draw`` (seat, cards=[card]), ``trump``
    (cards=[card], in the centre), ``manual`` (event: submitted as by a button
    or the dashboard), ``clear`` (every card in the seat zones swept away;
    ``to_scoreboard`` lists cards moved to the scoreboard instead), ``idle``
    (``frames`` still frames).
    """

    kind: str
    seat: int | None = None
    cards: list[str] = field(default_factory=list)
    event: dict | None = None
    to_scoreboard: list[str] = field(default_factory=list)
    frames: int = 0


@dataclass
class _Card:
    card: str
    pos: np.ndarray          # mm
    up: float                # direction the card's top points, degrees in the mm frame (y down, CCW 0 = up)
    zone: str                # seat | centre | scoreboard


def script_from_log(log: Sequence[dict], one_hand: bool = True) -> tuple[list[Action], list[dict]]:
    """A table script for a referee log, and the log the live table should give.

    ``deal`` lines are dropped (a camera does not see the deal) and so are
    ``discards`` of exchanges; plays list their cards in :func:`sort_cards`
    order.  A finished trick is swept away; at the end of a twenty-two hand
    the losers' cards go to the scoreboard.  With ``one_hand`` the script
    stops at the end of the first hand.
    """
    from referee.log import Referee

    referee = Referee()
    actions: list[Action] = []
    expected: list[dict] = []
    for e in log:
        kind = e.get("event")
        if kind == "deal":
            continue
        event = dict(e)
        if kind == "exchange":
            event.pop("discards", None)
        if kind == "play":
            event["cards"] = sort_cards([str(c).upper() for c in event["cards"]])
        verdict = referee.submit(event)
        if not verdict["ok"]:
            raise ValueError(f"the log does not replay without its deal: {event} -> {verdict['code']}")
        expected.append(event)
        if kind == "play":
            actions.append(Action("play", seat=event["seat"], cards=list(event["cards"])))
        elif kind == "draw":
            actions.append(Action("draw", seat=event["seat"], cards=[event["card"]]))
        elif kind == "trump":
            actions.append(Action("trump", cards=[event["card"]]))
        else:
            actions.append(Action("manual", event=event))
        result = verdict.get("hand_result")
        if verdict.get("trick_winner") is not None or result:
            losers = []
            if result and event.get("event") == "play" and isinstance(result, list):
                losers = [r["card"] for r in result if isinstance(r, dict) and r.get("loser") and r.get("card")]
            actions.append(Action("clear", to_scoreboard=losers))
        if result and one_hand:
            break
    return actions, expected


class Footage:
    """Frames of a scripted table (see the module docstring).

    ``geometry`` maps the table (mm) into the picture of ``size`` pixels.
    ``flaky`` = (miss, misread): per frame and card, the chance that the
    stand-in reader misses a visible card, or reads it as another card with a
    lower confidence.  Everything is seeded by ``seed``.

    ``lean`` (degrees) and ``lean_direction`` film the table from a camera that
    leans off straight down (:class:`vision.synth.view.CameraView`): ``geometry``
    then lays the table out as seen from overhead, and :attr:`seen_geometry` is
    the calibration such a camera's markers give (picture pixels to millimetres).
    """

    def __init__(self, geometry: TableGeometry, actions: Sequence[Action], size: tuple[int, int] = (640, 360),
                 fps: float = 10.0, deck: str = "letele", table: str = "felt", seed: int = 0,
                 noise: float = 2.0, still_frames: int = 7, flaky: tuple[float, float] = (0.0, 0.0),
                 confidence: float = 0.95, lean: float = 0.0, lean_direction: float = 0.0):
        self.geometry = geometry
        self.lean, self.lean_direction = float(lean), float(lean_direction)
        self.actions = list(actions)
        self.size = (int(size[0]), int(size[1]))
        self.fps = float(fps)
        self.deck = deck
        self.table = table
        self.seed = seed
        self.still_frames = still_frames
        self.flaky = flaky
        self.confidence = confidence
        self.reader = LookupReader()
        self.frame_count = 0
        self.rest_frames: list[int] = []        # per play/draw/trump action: index of the frame it came to rest
        self.hand_frames: set[str] = set()      # fingerprints of frames with a hand in view
        self.injected = {"missed": 0, "misread": 0}   # errors the flaky stand-in reader made
        rng = np.random.default_rng(seed + 7)
        self._noise = [np.round(rng.normal(0, noise, (self.size[1], self.size[0], 3))).astype(np.int16)
                       for _ in range(5)] if noise > 0 else []
        self._cards: list[_Card] = []
        self._trick_plays: dict[int, int] = {}
        self._scoreboard_n = 0
        self._flaky_rng = np.random.default_rng(seed + 11)
        self._cache: dict[Any, tuple[np.ndarray, list]] = {}
        self._table_image: np.ndarray | None = None

    @property
    def seen_geometry(self) -> TableGeometry:
        """The table as the camera sees it: ``geometry`` itself straight down; leaning, the
        calibration whose corners lie where the leaning camera sees the table's corners."""
        if self.lean == 0.0:
            return self.geometry
        from vision.synth.view import CameraView

        view = CameraView(self.size[0], self.size[1], self.lean, self.lean_direction)
        g = self.geometry
        return TableGeometry(view.to_picture(g.corners_px), g.table_mm, g.seats, image_size=self.size,
                             scoreboard=g.scoreboard)

    # -- layout (mm) ----------------------------------------------------------------
    def _centre(self) -> np.ndarray:
        return np.array(self.geometry.table_mm) / 2.0

    def seat_spot(self, seat: int) -> tuple[np.ndarray, np.ndarray]:
        """Where ``seat`` puts its cards (mm), and the unit vector from there to the table centre."""
        zone = next(z for z in self.geometry.zones if z.kind == "seat" and z.seat == seat)
        poly = np.array(zone.polygon)
        c = self._centre()
        centroid = poly.mean(axis=0)
        d = centroid - c
        spot = c + 0.95 * d * (1.0 if len(poly) <= 3 else 1.1)
        to_centre = (c - spot) / max(1e-6, np.linalg.norm(c - spot))
        return spot, to_centre

    def _place(self, seat: int, cards: Sequence[str]) -> list[_Card]:
        spot, to_c = self.seat_spot(seat)
        j = self._trick_plays.get(seat, 0)
        self._trick_plays[seat] = j + 1
        tangent = np.array([-to_c[1], to_c[0]])
        shift = [0.0, 40.0, -40.0, 20.0, -20.0, 55.0, -55.0][j % 7]
        base = spot + tangent * shift - to_c * (6.0 * (j // 2))
        up = math.degrees(math.atan2(-to_c[0], -to_c[1]))
        n = len(cards)
        out = []
        for k, card in enumerate(cards):
            off = (k - (n - 1) / 2.0)
            # a fan: each card a little to the right of and turned from the one under it
            a = up - off * 9.0
            right = np.array([math.cos(math.radians(a)), -math.sin(math.radians(a))])
            pos = base + right * off * 16.0 + to_c * abs(off) * 2.0
            out.append(_Card(card, pos, a, "seat"))
        return out

    # -- rendering ------------------------------------------------------------------
    def _spec_cards(self) -> list:
        from vision.synth.scene import CardPlacement

        out = []
        for c in self._cards:
            px = self.geometry.to_px([c.pos])[0]
            tip = self.geometry.to_px([c.pos + 10 * np.array([-math.sin(math.radians(c.up)),
                                                               -math.cos(math.radians(c.up))])])[0]
            v = tip - px
            angle = math.degrees(math.atan2(-v[0], -v[1]))
            height = CARD_MM[1] * self.geometry.scale_at(c.pos)
            out.append(CardPlacement(c.card, (float(px[0]), float(px[1])), float(angle), float(height), self.deck))
        return out

    def _hand(self, target_mm: np.ndarray, frac: float, from_mm: np.ndarray) -> Any:
        from vision.synth.scene import Hand

        palm = from_mm + (target_mm - from_mm) * frac
        p = self.geometry.to_px([palm])[0]
        q = self.geometry.to_px([target_mm])[0]
        s = self.geometry.to_px([from_mm])[0]
        v = q - s
        angle = math.degrees(math.atan2(-v[0], -v[1]))
        length = 2.4 * CARD_MM[1] * self.geometry.scale_at(target_mm)
        return Hand((float(p[0]), float(p[1])), float(angle), float(length), skin=(0.45, 0.55, 0.78))

    def _render(self, hands: list) -> tuple[np.ndarray, list[Reading]]:
        from vision.synth.scene import Camera, Lighting, SceneSpec, render_scene

        if self._table_image is None:   # the empty table, rendered once (textures are slow)
            empty = SceneSpec(self.size[0], self.size[1], [], table=self.table, table_seed=self.seed,
                              lighting=Lighting(shadow=0.0), camera=Camera())
            self._table_image = render_scene(empty, np.random.default_rng(self.seed))[0]
        key = (tuple((c.card, float(c.pos[0]), float(c.pos[1]), float(c.up)) for c in self._cards),
               tuple((h.centre, h.angle) for h in hands))
        hit = self._cache.get(key)
        if hit is None:
            spec = SceneSpec(self.size[0], self.size[1], self._spec_cards(), table=self._table_image,
                             hands=hands, lighting=Lighting(shadow=0.3),
                             camera=Camera(lean=self.lean, lean_direction=self.lean_direction))
            image, ann = render_scene(spec, np.random.default_rng(self.seed))
            readable = [(a.card, a.box) for a in ann.cards if a.readable]
            if len(self._cache) > 4:
                self._cache.clear()
            self._cache[key] = (image, readable)
            hit = (image, readable)
        image, readable = hit
        return image, readable

    def _frame(self, image: np.ndarray, readable: list) -> np.ndarray:
        i = self.frame_count
        self.frame_count += 1
        if self._noise:
            out = np.clip(image.astype(np.int16) + self._noise[i % len(self._noise)], 0, 255).astype(np.uint8)
        else:
            out = image.copy()
        miss, wrong = self.flaky
        readings = []
        for card, box in readable:
            r = self._flaky_rng.random()
            if r < miss:
                self.injected["missed"] += 1
                continue
            if r < miss + wrong:
                self.injected["misread"] += 1
                readings.append(Reading(_other(card, self._flaky_rng), 0.6, tuple(map(float, box))))
            else:
                readings.append(Reading(card, self.confidence, tuple(map(float, box))))
        self.reader.add(out, readings)
        return out

    def _still(self, n: int) -> Iterator[np.ndarray]:
        image, readable = self._render([])
        for _ in range(n):
            yield self._frame(image, readable)

    def _reach(self, target: np.ndarray, edge: np.ndarray, put: Callable[[], None],
               fractions=(0.5, 1.0, 1.0, 0.45)) -> Iterator[np.ndarray]:
        placed = False
        for k, f in enumerate(fractions):
            if not placed and k >= fractions.index(1.0):
                put()
                placed = True
            hand = self._hand(target, f, edge)
            image, readable = self._render([hand])
            frame = self._frame(image, readable)
            if 0 <= hand.centre[0] < self.size[0] and 0 <= hand.centre[1] < self.size[1]:
                self.hand_frames.add(fingerprint(frame))
            yield frame

    def frames(self, submit: Callable[[dict], Any] | None = None) -> Iterator[np.ndarray]:
        """The frames, in order.  ``manual`` actions are given to ``submit`` (a
        session's) when the footage reaches them: after the table has been
        still for ``still_frames`` since the previous action."""
        yield from self._still(self.still_frames)
        centre = self._centre()
        for action in self.actions:
            if action.kind == "manual":
                if submit is not None:
                    submit(dict(action.event))
                yield from self._still(2)
                continue
            if action.kind == "idle":
                yield from self._still(action.frames)
                continue
            if action.kind in ("play", "draw"):
                new = self._place(action.seat, action.cards)
                spot = np.mean([c.pos for c in new], axis=0)
                edge = centre + (spot - centre) * 2.2
                yield from self._reach(spot, edge, lambda: self._cards.extend(new))
            elif action.kind == "trump":
                c = _Card(action.cards[0], centre.copy() + np.array([-30.0, 0.0]), 90.0, "centre")
                edge = centre + np.array([0.0, self.geometry.table_mm[1]])
                yield from self._reach(c.pos, edge, lambda: self._cards.append(c))
            elif action.kind == "clear":
                yield from self._clear(action)
                self._trick_plays = {}
                continue
            else:
                raise ValueError(f"unknown action {action.kind!r}")
            self.rest_frames.append(self.frame_count)
            yield from self._still(self.still_frames)

    def _clear(self, action: Action) -> Iterator[np.ndarray]:
        centre = self._centre()
        seat_cards = [c for c in self._cards if c.zone == "seat"]
        if not seat_cards:
            return
        target = np.mean([c.pos for c in seat_cards], axis=0)
        edge = centre + np.array([0.0, self.geometry.table_mm[1] * 0.9])

        def sweep() -> None:
            keep = [c for c in self._cards if c.zone != "seat"]
            sb = next((z for z in self.geometry.zones if z.kind == "scoreboard"), None)
            for name in action.to_scoreboard:
                if sb is None:
                    continue
                poly = np.array(sb.polygon)
                x0, y0 = poly.min(axis=0)
                x1, y1 = poly.max(axis=0)
                k = self._scoreboard_n
                self._scoreboard_n += 1
                pos = np.array([x0 + 40 + (k % 3) * 30.0, y0 + 50 + (k // 3) * 20.0])
                pos = np.minimum(pos, [x1 - 30, y1 - 45])
                keep.append(_Card(name, pos, 0.0, "scoreboard"))
            self._cards = keep

        yield from self._reach(target, edge, sweep, fractions=(0.5, 1.0, 1.0, 0.4))
        yield from self._still(self.still_frames)


def _other(card: str, rng: np.random.Generator) -> str:
    ranks = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
    rank, suit = card[:-1], card[-1]
    choices = [r for r in ranks if r != rank]
    return str(rng.choice(choices)) + suit


def table_geometry_for(size: tuple[int, int], seats: int, table_mm: tuple[float, float] = (900.0, 560.0),
                       scoreboard: bool = False, tilt: float = 0.06) -> TableGeometry:
    """A calibrated overhead view of a table filling ``size``, with a little
    perspective (the far edge ``tilt`` narrower), as the footage uses."""
    w, h = size
    mx, my = 0.02 * w, 0.03 * h
    corners = [[mx + tilt * w, my], [w - mx - tilt * w, my], [w - mx, h - my], [mx, h - my]]
    return TableGeometry(corners, table_mm, seats, image_size=size, scoreboard=scoreboard)
