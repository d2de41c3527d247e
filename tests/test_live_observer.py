"""The live pipeline on simple drawn frames: stillness, voting, attribution, corrections, bad input.

These frames are drawn here (white card shapes, a skin-coloured hand) and read
by a :class:`~vision.card_reader.LookupReader` that knows what each frame
shows: a deterministic stand-in for the recogniser, so each rule of the
observer and the live table is tested on its own, without the card art.
Whole rendered hands of the four games are in ``test_live_games.py``.
"""

from __future__ import annotations

import itertools
import math
import threading

import cv2
import numpy as np
import pytest

from cardtable.session import Session
from cardtable.store import Store
from vision.card_reader import LookupReader, Reading, fingerprint
from vision.footage import table_geometry_for
from vision.live import LiveTable
from vision.observer import Observer, ObserverConfig, sort_cards
from vision.sources import CameraFeed, Frame, ListSource, SourceEnded, SourceError
from vision.table_geometry import CARD_MM

SIZE = (640, 360)


class DrawnTable:
    """A table drawn with plain shapes; every frame registered with its true readings."""

    def __init__(self, seats=4, seed=0, scoreboard=False):
        self.geometry = table_geometry_for(SIZE, seats, scoreboard=scoreboard)
        self.reader = LookupReader()
        rng = np.random.default_rng(seed)
        base = cv2.resize(rng.integers(40, 90, (9, 16, 3)).astype(np.uint8), SIZE, interpolation=cv2.INTER_CUBIC)
        base[:, :, 1] = np.clip(base[:, :, 1].astype(int) + 40, 0, 255)
        self.base = base
        self.noise = [rng.normal(0, 2, (SIZE[1], SIZE[0], 3)).round().astype(np.int16) for _ in range(3)]
        self.cards: dict[str, tuple[np.ndarray, float]] = {}   # card -> (pos mm, angle deg)
        self.hand: np.ndarray | None = None                   # palm position in mm
        self.misread: dict[str, list[tuple[str, float]]] = {}  # card -> [(reading, confidence)] per frame, cycled
        self.n = 0
        self.hand_frames: set[str] = set()

    def put(self, card, pos, angle=0.0):
        self.cards[card] = (np.asarray(pos, float), angle)

    def take(self, *cards):
        for c in cards:
            self.cards.pop(c)

    def seat_spot(self, seat, k=0):
        zone = next(z for z in self.geometry.zones if z.kind == "seat" and z.seat == seat)
        c = np.array(self.geometry.table_mm) / 2
        return c + (np.asarray(zone.polygon).mean(axis=0) - c) * 1.5 + np.array([k * 22.0, 0.0])

    def _card_quad(self, pos, angle):
        w, h = CARD_MM
        a = math.radians(angle)
        R = np.array([[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]])
        local = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
        return self.geometry.to_px(local @ R.T + pos)

    def frame(self) -> np.ndarray:
        img = self.base.copy()
        readings = []
        for i, (card, (pos, angle)) in enumerate(self.cards.items()):
            quad = self._card_quad(pos, angle)
            cv2.fillConvexPoly(img, np.round(quad).astype(np.int32), (235, 235, 235), cv2.LINE_AA)
            colour = (40, 40, 200) if card[-1] in "HD" else (30, 30, 30)
            centre = self.geometry.to_px([pos])[0]
            cv2.putText(img, card, (int(centre[0]) - 14, int(centre[1]) + 5), cv2.FONT_HERSHEY_SIMPLEX, 0.45,
                        colour, 2)
            x1, y1 = quad.min(axis=0)
            x2, y2 = quad.max(axis=0)
            hidden = self.hand is not None and np.linalg.norm(self.hand - pos) < 60
            later = list(self.cards.values())[i + 1:]
            hidden = hidden or any(np.linalg.norm(p2 - pos) < 15 for p2, _ in later)   # covered by a card
            if not hidden:
                options = self.misread.get(card)
                name, conf = options[self.n % len(options)] if options else (card, 0.95)
                if name:
                    readings.append(Reading(name, conf, (x1, y1, x2, y2)))
        hand_seen = False
        if self.hand is not None:
            p = self.geometry.to_px([self.hand])[0]
            arm = self.geometry.to_px([self.hand + (self.hand - np.array(self.geometry.table_mm) / 2) * 3])[0]
            cv2.ellipse(img, (int(p[0]), int(p[1])), (40, 28), 20, 0, 360, (120, 150, 210), -1)
            cv2.line(img, (int(p[0]), int(p[1])), (int(arm[0]), int(arm[1])), (120, 150, 210), 30)
            hand_seen = 0 <= p[0] < SIZE[0] and 0 <= p[1] < SIZE[1]
        img = np.clip(img.astype(np.int16) + self.noise[self.n % 3], 0, 255).astype(np.uint8)
        img[0, 0] = (self.n % 256, self.n // 256, 0)     # every frame unique (one pixel: not motion)
        self.n += 1
        self.reader.add(img, readings)
        if hand_seen:
            self.hand_frames.add(fingerprint(img))
        return img

    def still(self, n):
        return [self.frame() for _ in range(n)]

    def reach(self, seat, then, k=0):
        """A hand comes in from the seat's edge, ``then()`` changes the cards under it, it leaves."""
        spot = self.seat_spot(seat, k)
        edge = np.array(self.geometry.table_mm) / 2 + (spot - np.array(self.geometry.table_mm) / 2) * 2.0
        out = []
        for f in (0.4, 0.8, 1.0):
            self.hand = edge + (spot - edge) * f
            out.append(self.frame())
        then()
        for f in (1.0, 0.6, 0.2):
            self.hand = edge + (spot - edge) * f
            out.append(self.frame())
        self.hand = None
        return out


class CountingReader:
    """Wraps a reader and records which frames it was asked to read."""

    def __init__(self, inner):
        self.inner, self.seen = inner, []

    def read(self, image):
        self.seen.append(fingerprint(image))
        return self.inner.read(image)


def new_session(tmp_path, game="big-two", players=4, options=None):
    session = Session(Store(str(tmp_path / "table.sqlite")))
    verdict = session.submit({"event": "new_game", "game": game, "players": [f"P{i}" for i in range(players)],
                              "dealer": 0, "options": options or {}})
    assert verdict["ok"], verdict
    return session


def run(live, frames=None):
    while live.step():
        pass
    return [e for e, _ in live.sent]


def make_live(table, session, frames, **kw):
    reader = kw.pop("reader", None) or CountingReader(table.reader)
    live = LiveTable(ListSource(frames, fps=10), table.geometry, reader, session, **kw)
    return live, reader


# ---------------------------------------------------------------------------------------------
# stillness


def test_still_frames_with_nothing_new_are_not_read(tmp_path):
    t = DrawnTable()
    t.put("3C", t.seat_spot(0))
    frames = t.still(40)
    obs_reader = CountingReader(t.reader)
    obs = Observer(t.geometry, obs_reader)
    changes = [obs.feed(Frame(f, i / 10, i)) for i, f in enumerate(frames)]
    found = [c for c in changes if c is not None]
    assert len(found) == 1 and [g.cards for g in found[0].groups] == [["3C"]]
    assert len(obs_reader.seen) == 2                      # one look of two agreeing frames, then nothing
    assert obs.status()["state"] == "still"


def test_a_play_is_read_only_once_the_hand_has_gone_and_the_table_is_still(tmp_path):
    t = DrawnTable()
    session = new_session(tmp_path)
    frames = t.still(6) + t.reach(1, lambda: t.put("3C", t.seat_spot(1))) + t.still(3)
    n_before = len(frames)
    frames += t.still(5)
    live, reader = make_live(t, session, frames)
    sent = run(live)
    assert sent == [{"event": "play", "seat": 1, "cards": ["3C"]}]
    assert not set(reader.seen) & t.hand_frames            # never read a frame with a hand in it
    assert live.sent[0][1]["ok"] and live.sent[0][1]["message"] == "P1 leads 3C"
    # rest-to-event in frame time: 0.3 s still + a second agreeing frame
    assert live.latencies == [pytest.approx(0.4)]
    assert n_before < len(frames)


def test_a_hand_holding_still_for_less_than_the_stillness_time_is_not_read(tmp_path):
    t = DrawnTable()
    spot = t.seat_spot(0)
    frames = t.still(6)
    t.hand = spot + np.array([0, 30.0])
    hover = [t.frame() for _ in range(3)]                  # 0.2 s of a still hand (3 identical frames)
    t.hand = None
    frames += hover + t.still(1)
    reader = CountingReader(t.reader)
    obs = Observer(t.geometry, reader)
    for i, f in enumerate(frames):
        obs.feed(Frame(f, i / 10, i))
    assert not set(reader.seen) & t.hand_frames


def test_several_cards_put_down_together_are_one_play_in_card_order(tmp_path):
    t = DrawnTable()
    session = new_session(tmp_path)

    def fan():
        for k, c in enumerate(["9S", "9D", "9H"]):
            t.put(c, t.seat_spot(2) + np.array([k * 18.0, k * 3.0]), angle=k * 8)
    frames = t.still(5) + t.reach(2, fan) + t.still(8)
    live, _ = make_live(t, session, frames)
    assert run(live) == [{"event": "play", "seat": 2, "cards": ["9D", "9H", "9S"]}]
    assert sort_cards(["KS", "10H", "AC", "2D", "10C"]) == ["AC", "2D", "10C", "10H", "KS"]


# ---------------------------------------------------------------------------------------------
# voting


def test_a_card_seen_in_only_one_still_frame_does_not_count():
    t = DrawnTable()
    t.put("5H", t.seat_spot(0))
    t.misread["5H"] = [("5H", 0.9), ("", 0), ("", 0)]     # seen in one frame of three
    frames = t.still(12)
    obs = Observer(t.geometry, t.reader)
    changes = [obs.feed(Frame(f, i / 10, i)) for i, f in enumerate(frames)]
    assert all(c is None for c in changes) and obs.tracks == []


def test_the_better_supported_reading_wins_within_a_look():
    t = DrawnTable()
    t.put("8H", t.seat_spot(0))
    t.misread["8H"] = [("6H", 0.7), ("8H", 0.9), ("8H", 0.9)]
    frames = t.still(12)
    obs = Observer(t.geometry, t.reader, ObserverConfig(votes=5, need=2))
    changes = [c for c in (obs.feed(Frame(f, i / 10, i)) for i, f in enumerate(frames)) if c]
    assert [g.cards for g in changes[0].groups] == [["8H"]]
    assert changes[0].groups[0].tracks[0].votes["6H"] == pytest.approx(0.7)


def test_a_reading_that_changes_later_amends_the_play(tmp_path):
    t = DrawnTable()
    session = new_session(tmp_path)
    t.misread["8H"] = [("6H", 0.9)]
    frames = t.still(5) + t.reach(1, lambda: t.put("8H", t.seat_spot(1))) + t.still(8)
    t.misread["8H"] = [("8H", 0.97)]                     # better light: now it reads right, again and again
    frames += t.reach(2, lambda: t.put("9H", t.seat_spot(2))) + t.still(8)
    frames += t.reach(3, lambda: t.put("10H", t.seat_spot(3))) + t.still(8)
    live, _ = make_live(t, session, frames)
    sent = run(live)
    assert sent == [
        {"event": "play", "seat": 1, "cards": ["6H"]},
        # the look that sees 9H arrive reads the first card as 8H twice more: 8H now has the
        # most support, so the play is corrected first, then the new play is judged
        {"event": "amend", "index": 1, "with": {"event": "play", "seat": 1, "cards": ["8H"]}},
        {"event": "play", "seat": 2, "cards": ["9H"]},
        {"event": "play", "seat": 3, "cards": ["10H"]},
    ]
    assert all(v["ok"] for _, v in live.sent)
    assert session.referee.events_json()[1]["cards"] == ["8H"]
    assert any(w["code"] == "relabelled" for w in live.warnings)


def test_a_correction_made_by_hand_is_not_overruled_by_the_camera(tmp_path):
    t = DrawnTable()
    session = new_session(tmp_path)
    t.misread["8H"] = [("6H", 0.9)]
    frames = t.still(5) + t.reach(1, lambda: t.put("8H", t.seat_spot(1))) + t.still(8)
    split = len(frames)
    t.misread["8H"] = [("8H", 0.97)]
    frames += t.reach(2, lambda: t.put("9H", t.seat_spot(2))) + t.still(8)
    live, _ = make_live(t, session, frames)
    for _ in range(split):
        live.step()
    # someone at the dashboard corrects the card to 7H (wrongly, but it is theirs to say)
    session.submit({"event": "amend", "index": 1, "with": {"event": "play", "seat": 1, "cards": ["7H"]}})
    run(live)
    assert [e["event"] for e, _ in live.sent] == ["play", "play"]
    assert session.referee.events_json()[1]["cards"] == ["7H"]
    assert any(w["code"] == "kept_by_hand" for w in live.warnings)


# ---------------------------------------------------------------------------------------------
# attribution


def test_a_play_from_the_wrong_seat_is_reported_and_judged_not_moved(tmp_path):
    t = DrawnTable()
    session = new_session(tmp_path)
    frames = t.still(5) + t.reach(1, lambda: t.put("3C", t.seat_spot(1))) + t.still(8)
    frames += t.reach(3, lambda: t.put("5C", t.seat_spot(3))) + t.still(8)      # seat 2 is to act
    live, _ = make_live(t, session, frames)
    sent = run(live)
    assert sent[1] == {"event": "play", "seat": 3, "cards": ["5C"]}
    assert live.sent[1][1]["code"] == "not_your_turn"
    warning = next(w for w in live.warnings if w["code"] == "not_their_turn")
    assert warning["seat"] == 3 and warning["expected"] == 2 and "P2's turn" in warning["message"]
    assert live.status()["warnings"][-1]["code"] == "rejected"


def test_two_seats_in_one_still_moment_go_in_turn_order(tmp_path):
    t = DrawnTable()
    session = new_session(tmp_path)
    frames = t.still(5) + t.reach(1, lambda: t.put("3C", t.seat_spot(1))) + t.still(8)

    def both():
        t.put("5C", t.seat_spot(3))
        t.put("4C", t.seat_spot(2))
    frames += t.reach(2, both) + t.still(8)
    live, _ = make_live(t, session, frames)
    assert [e.get("seat") for e in run(live)] == [1, 2, 3]
    assert all(v["ok"] for _, v in live.sent)


def test_cards_straddling_two_seats_are_reported_not_guessed(tmp_path):
    t = DrawnTable()
    session = new_session(tmp_path)
    # seat 0 / seat 1 border runs from the table centre to the bottom-left corner
    a, b = np.array([150.0, 470.0]), np.array([90.0, 420.0])
    assert t.geometry.seat_at(a) == 0 and t.geometry.seat_at(b) == 1

    def put():
        t.put("7C", a)
        t.put("7D", b)
    frames = t.still(5) + t.reach(0, put) + t.still(8)
    live, _ = make_live(t, session, frames)
    assert run(live) == []
    w = live.warnings[-1]
    assert w["code"] == "ambiguous_zone" and "seat 0 and seat 1" in w["message"]


def test_centre_cards_are_not_plays_but_a_trump_turn_up_is(tmp_path):
    t = DrawnTable(seats=3)
    session = new_session(tmp_path, "trumf", 3, {"stock_mode": "single_hand"})
    centre = np.array(t.geometry.table_mm) / 2
    frames = t.still(5) + t.reach(0, lambda: t.put("QH", centre)) + t.still(8)
    frames += t.reach(1, lambda: t.put("2C", centre + np.array([40.0, 0]))) + t.still(8)
    live, _ = make_live(t, session, frames)
    assert run(live) == [{"event": "trump", "card": "QH"}]
    assert live.sent[0][1]["ok"] and session.state()["trump"] == "H"
    assert live.warnings[-1]["code"] == "centre"


def test_draw_for_first_dealer_from_the_seat_zones(tmp_path):
    t = DrawnTable(seats=2)
    session = Session(Store(str(tmp_path / "t.sqlite")))
    session.submit({"event": "new_game", "game": "big-two", "players": ["A", "B"], "dealer": None})
    frames = t.still(5) + t.reach(0, lambda: t.put("2S", t.seat_spot(0))) + t.still(8)
    frames += t.reach(1, lambda: t.put("KD", t.seat_spot(1))) + t.still(8)
    live, _ = make_live(t, session, frames)
    assert run(live) == [{"event": "draw", "seat": 0, "card": "2S"}, {"event": "draw", "seat": 1, "card": "KD"}]
    assert session.state()["dealer"] == 0


def test_a_button_pressed_while_a_play_settles_waits_for_that_play(tmp_path):
    t = DrawnTable(seats=2)
    session = new_session(tmp_path, players=2)
    first = t.still(5) + t.reach(0, lambda: t.put("3C", t.seat_spot(0))) + t.still(8)
    first += t.reach(1, lambda: t.put("5C", t.seat_spot(1)))
    rest = t.still(8)
    live, _ = make_live(t, session, first + rest)
    for _ in first:
        live.step()
    # the table's one pass button is pressed at once, before the camera has seen 5C come to rest:
    # it is seat 0's pass (to act after seat 1's play), not seat 1's (to act when it was pressed)
    assert session.state()["to_act"] == 1
    assert live.submit({"event": "pass", "seat": "to_act"}) is None
    assert len(session.referee.raw) == 2
    run(live)
    assert session.referee.raw[2:] == [{"event": "play", "seat": 1, "cards": ["5C"]}, {"event": "pass", "seat": 0}]
    assert live.sent_manual[0][1]["ok"]


def test_a_button_is_not_held_for_ever_by_a_busy_scene(tmp_path):
    t = DrawnTable(seats=2)
    session = new_session(tmp_path, players=2)
    rng = np.random.default_rng(9)
    frames = t.still(8) + [rng.integers(0, 256, (SIZE[1], SIZE[0], 3), dtype=np.uint8) for _ in range(40)]
    live, _ = make_live(t, session, frames)
    for _ in range(10):
        live.step()
    assert live.observer.busy
    assert live.submit({"event": "pass", "seat": 1}) is None
    steps = 0
    while not live.sent_manual:
        assert live.step()
        steps += 1
    assert steps == 20                          # hold_s = 2 s of frames at 10 frames/s


# ---------------------------------------------------------------------------------------------
# cards taken away


def test_cleared_trick_is_forgotten_and_early_clearing_is_reported(tmp_path):
    t = DrawnTable(seats=2)
    session = new_session(tmp_path, players=2)
    frames = t.still(5) + t.reach(0, lambda: t.put("3C", t.seat_spot(0))) + t.still(8)
    frames += t.reach(1, lambda: t.put("5C", t.seat_spot(1))) + t.still(8)
    frames += t.reach(0, lambda: t.take("3C", "5C")) + t.still(12)        # nobody has passed yet
    frames += t.reach(1, lambda: t.put("7C", t.seat_spot(1))) + t.still(8)
    live, _ = make_live(t, session, frames)
    sent = run(live)
    assert [e["cards"] for e in sent] == [["3C"], ["5C"], ["7C"]]
    early = [w for w in live.warnings if w["code"] == "taken_early"]
    assert len(early) == 1 and early[0]["cards"] == ["3C", "5C"]
    assert [tr.card for tr in live.observer.tracks] == ["7C"]


def test_a_card_covered_by_a_later_play_is_not_taken_away(tmp_path):
    t = DrawnTable(seats=2)
    session = new_session(tmp_path, players=2)
    frames = t.still(5) + t.reach(0, lambda: t.put("3C", t.seat_spot(0))) + t.still(8)
    frames += t.reach(1, lambda: t.put("5C", t.seat_spot(1))) + t.still(8)
    frames += t.reach(0, lambda: t.put("8C", t.seat_spot(0) + np.array([10.0, 5.0]))) + t.still(8)
    live, _ = make_live(t, session, frames)
    assert [e["cards"] for e in run(live)] == [["3C"], ["5C"], ["8C"]]
    states = {tr.card: tr.state for tr in live.observer.tracks}
    assert states == {"3C": "covered", "5C": "on", "8C": "on"}
    assert not [w for w in live.warnings if w["code"].startswith("taken")]


def test_a_hand_resting_on_a_card_does_not_take_it_or_play_it_again(tmp_path):
    t = DrawnTable(seats=2)
    session = new_session(tmp_path, players=2)
    spot = t.seat_spot(0)
    frames = t.still(5) + t.reach(0, lambda: t.put("3C", spot)) + t.still(8)
    t.hand = spot + np.array([0.0, 10.0])            # the player rests a hand on the card, 1.5 s
    frames += [t.frame() for _ in range(15)]
    t.hand = None
    frames += t.still(10)
    live, _ = make_live(t, session, frames)
    assert run(live) == [{"event": "play", "seat": 0, "cards": ["3C"]}]
    assert [(tr.card, tr.state) for tr in live.observer.tracks] == [("3C", "on")]
    assert live.observer.tracks[0].event_index == 1


def test_a_bumped_table_moves_the_cards_it_does_not_play_them_again(tmp_path):
    t = DrawnTable()
    session = new_session(tmp_path)
    frames = t.still(5)
    for seat, card in ((1, "3C"), (2, "5C"), (3, "7C")):
        frames += t.reach(seat, lambda s=seat, c=card: t.put(c, t.seat_spot(s))) + t.still(8)

    def bump():
        for card, (pos, angle) in list(t.cards.items()):
            t.put(card, pos + np.array([45.0, 25.0]), angle)
    frames += t.reach(0, bump) + t.still(8)
    live, _ = make_live(t, session, frames)
    assert [e["cards"] for e in run(live)] == [["3C"], ["5C"], ["7C"]]
    assert live.warnings[-1]["code"] == "table_moved" and live.warnings[-1]["cards"] == ["3C", "5C", "7C"]
    assert {tr.card: tr.event_index for tr in live.observer.tracks} == {"3C": 1, "5C": 2, "7C": 3}


# ---------------------------------------------------------------------------------------------
# bad input: noise, black, another size, a lost camera


def test_a_frame_of_noise_is_motion_not_cards(tmp_path):
    t = DrawnTable()
    session = new_session(tmp_path)
    noise = np.random.default_rng(3).integers(0, 256, (SIZE[1], SIZE[0], 3), dtype=np.uint8)
    t.reader.add(noise, [Reading("AS", 0.99, (0, 0, 50, 50))])          # were it read, it would be a card
    rng = np.random.default_rng(4)
    more = [rng.integers(0, 256, noise.shape, dtype=np.uint8) for _ in range(5)]   # a burst of garbage
    frames = t.still(6) + [noise] + t.still(8) + more + t.still(8)
    live, reader = make_live(t, session, frames)
    assert run(live) == []
    assert fingerprint(noise) not in reader.seen


def test_black_frames_blank_the_view_but_take_no_cards(tmp_path):
    t = DrawnTable()
    session = new_session(tmp_path)
    frames = t.still(5) + t.reach(1, lambda: t.put("3C", t.seat_spot(1))) + t.still(8)
    black = np.zeros((SIZE[1], SIZE[0], 3), np.uint8)
    frames += [black] * 15                                  # lens covered for 1.5 s
    frames += t.still(10)
    live, reader = make_live(t, session, frames)
    seen_states = []
    while live.step():
        seen_states.append(live.status()["observer"]["state"])
    assert [e["cards"] for e, _ in live.sent] == [["3C"]]
    assert "blank" in seen_states
    assert [tr.card for tr in live.observer.tracks] == ["3C"] and not live.warnings
    assert fingerprint(black) not in reader.seen


def test_a_frame_of_another_size_is_skipped_with_a_status(tmp_path):
    t = DrawnTable()
    session = new_session(tmp_path)
    odd = np.full((480, 640, 3), 90, np.uint8)
    frames = t.still(5) + [odd] + t.reach(1, lambda: t.put("3C", t.seat_spot(1))) + t.still(8)
    live = LiveTable(ListSource(frames, fps=10), t.geometry, t.reader, session)
    states = []
    while live.step():
        states.append(live.status()["camera"]["state"])
    assert "bad_frame" in states and live.feed.skipped == 1
    assert "calibrated for 640x360" in live.feed.status()["message"] or states[-1] == "ok"
    assert [e["cards"] for e, _ in live.sent] == [["3C"]]


class DyingSource:
    """A live camera showing ``frames``; reads ``die_from``..``die_to`` fail (unplugged)."""

    live = True
    name = "usb:9"

    def __init__(self, frames, die_from, die_to):
        self.frames, self.die_from, self.die_to = frames, die_from, die_to
        self.i = 0
        self.reads = 0
        self.opens = 0

    def open(self):
        self.opens += 1

    def read(self):
        self.reads += 1
        if self.die_from <= self.reads < self.die_to:
            raise SourceError("VIDIOC_DQBUF: No such device")
        if self.i >= len(self.frames):
            raise SourceEnded(self.name)
        i, self.i = self.i, self.i + 1
        return Frame(self.frames[i], i / 10, i)

    def close(self):
        pass


def test_a_lost_camera_is_reported_retried_and_the_game_goes_on(tmp_path):
    t = DrawnTable()
    session = new_session(tmp_path)
    frames = t.still(5) + t.reach(1, lambda: t.put("3C", t.seat_spot(1))) + t.still(8)
    split = len(frames)
    frames += t.reach(2, lambda: t.put("4C", t.seat_spot(2))) + t.still(8)
    src = DyingSource(frames, die_from=split + 1, die_to=split + 8)
    now = [0.0]
    feed = CameraFeed(src, clock=lambda: now[0], lost_after=3, backoff=(1.0, 8.0))
    fed = []
    live = LiveTable(feed, t.geometry, t.reader, session, frame_seen=fed.append, sleep=lambda s: None)
    states = []
    for _ in range(1000):
        if not live.step():
            break
        states.append(live.status()["state"])
        now[0] += 0.1
    assert "lost" in states and live.status()["state"] == "ended"
    assert src.opens >= 2 and feed.reopened >= 1
    assert [e["cards"] for e, _ in live.sent] == [["3C"], ["4C"]]
    assert len(fed) == len(frames)                         # the watchdog is fed only by frames


def test_frame_seen_latest_jpeg_and_a_thread_that_stops(tmp_path):
    t = DrawnTable()
    session = new_session(tmp_path)
    frames = t.still(5) + t.reach(1, lambda: t.put("3C", t.seat_spot(1))) + t.still(8)
    endless = itertools.cycle(frames[-3:])
    seen = threading.Event()
    count = [0]

    def hook(frame):
        count[0] += 1
        if count[0] > len(frames) + 20:
            seen.set()
    live = LiveTable(ListSource(itertools.chain(frames, endless), fps=10), t.geometry, t.reader, session,
                     frame_seen=hook)
    assert live.latest_jpeg() is None
    live.start()
    assert seen.wait(30)
    live.stop()
    assert not live._thread.is_alive()
    jpeg = live.latest_jpeg()
    image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert image.shape == (SIZE[1], SIZE[0], 3)
    status = live.status()
    assert status["camera"]["state"] == "ok" and status["events_sent"] == 1
    assert status["observer"]["cards"][0]["card"] == "3C" and status["observer"]["cards"][0]["seat"] == 1
    # what web/protocols.py reads: pixels of the JPEG, boxes as x, y, w, h
    assert status["frame_size"] == [SIZE[0], SIZE[1]] and status["fps"] == pytest.approx(10.0)
    assert {z["seat"] for z in status["zones"] if z["kind"] == "seat"} == {0, 1, 2, 3}
    (det,) = status["detections"]
    assert det["card"] == "3C" and det["seat"] == 1 and det["confidence"] == 1.0
    x, y, w, h = det["box"]
    centre = t.geometry.to_px([t.seat_spot(1)])[0]
    assert x < centre[0] < x + w and y < centre[1] < y + h
    live.draw_on_jpeg = False
    plain = cv2.imdecode(np.frombuffer(live.latest_jpeg(), np.uint8), cv2.IMREAD_COLOR)
    assert plain.shape == image.shape and not np.array_equal(plain, image)


def test_no_game_yet_warns_instead_of_sending(tmp_path):
    t = DrawnTable()
    session = Session(Store(str(tmp_path / "t.sqlite")))
    frames = t.still(5) + t.reach(1, lambda: t.put("3C", t.seat_spot(1))) + t.still(8)
    live, _ = make_live(t, session, frames)
    assert run(live) == [] and live.warnings[-1]["code"] == "no_game"


def test_observer_config_is_checked():
    with pytest.raises(ValueError):
        ObserverConfig(votes=2, need=3)
    with pytest.raises(ValueError):
        ObserverConfig(need=0)


def test_the_tables_own_pattern_read_as_a_card_is_not_reported_after_every_play(tmp_path):
    """A printed cloth or a newspaper's letter that the recogniser takes for an index it cannot
    read stays where it is: once the first look has seen it, it is the table, not a card
    put down, and no play brings the warning back.  A card put down unreadable still warns."""
    t = DrawnTable()
    session = new_session(tmp_path)
    mark = np.array([40.0, 40.0])                              # a corner of the table, away from the plays
    px = t.geometry.to_px([mark])[0]
    cv2.putText(t.base, "K", (int(px[0]) - 6, int(px[1]) + 6), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (200, 200, 200), 2)
    pattern = (px[0] - 20, px[1] - 30, px[0] + 20, px[1] + 30)
    frames = t.still(5)
    for seat, card in ((1, "8H"), (2, "9H"), (3, "10H")):
        frames += t.reach(seat, lambda seat=seat, card=card: t.put(card, t.seat_spot(seat))) + t.still(8)
    frames += t.reach(0, lambda: t.put("3C", t.seat_spot(0))) + t.still(8)
    unread = t._card_quad(t.seat_spot(0), 0.0)
    unread_box = (*unread.min(axis=0), *unread.max(axis=0))
    frames += t.reach(1, lambda: t.put("JH", t.seat_spot(1, 1))) + t.still(8)

    class Patterned:
        """The drawn table's reader, which also takes the mark for a card it cannot read, and
        cannot read 3C either."""
        last_unknown: list = []

        def read(self, image):
            readings = t.reader.read(image)
            self.last_unknown = [pattern] + [unread_box for r in readings if r.card == "3C"]
            return [r for r in readings if r.card != "3C"]
    live = LiveTable(ListSource(frames, fps=10), t.geometry, Patterned(), session)
    sent = run(live)
    assert [e.get("cards") for e in sent] == [["8H"], ["9H"], ["10H"], ["JH"]]
    warned = [w for w in live.warnings if w["code"] == "unreadable"]
    # the first look cannot tell the pattern from a card lying there from the start: it warns
    # once at the mark; after that only 3C warns, once, when it is put down
    at_mark = [w for w in warned if abs(w["x_mm"] - 40) < 30 and abs(w["y_mm"] - 40) < 30]
    assert len(warned) == 2 and at_mark == warned[:1] and warned[1]["zone"] == "seat 0"


def test_the_recogniser_adapter_maps_its_result_to_readings():
    from vision.card_reader import RecogniserReader
    from vision.recogniser import CardReading, Recognition, UnknownCard

    class Fake:
        def recognise(self, image):
            return Recognition(cards=[CardReading("10H", 0.97, (10, 20, 60, 90)), CardReading("qs", 0.4, (0, 0, 5, 5)),
                                      CardReading("ZZ", 0.99, (1, 1, 2, 2))],
                               unknown=[UnknownCard((100, 100, 150, 170))])
    reader = RecogniserReader(Fake(), min_confidence=0.5)
    readings = reader.read(np.zeros((10, 10, 3), np.uint8))
    assert [(r.card, r.confidence, r.centre) for r in readings] == [("10H", 0.97, (35.0, 55.0))]
    assert reader.last_unknown == [(100.0, 100.0, 150.0, 170.0)]
    assert [r.card for r in RecogniserReader(Fake()).read(None)] == ["10H", "QS"]


def test_a_card_the_recogniser_cannot_read_is_reported_once(tmp_path):
    t = DrawnTable()
    session = new_session(tmp_path)
    frames = t.still(5) + t.reach(2, lambda: t.put("3C", t.seat_spot(2))) + t.still(12)
    quad = t._card_quad(t.seat_spot(2), 0.0)
    box = (*quad.min(axis=0), *quad.max(axis=0))

    class Unsure:
        """Finds the card, cannot read it (the recogniser's 'unknown')."""
        last_unknown: list = []

        def read(self, image):
            self.last_unknown = [box] if t.reader.read(image) else []
            return []
    live = LiveTable(ListSource(frames, fps=10), t.geometry, Unsure(), session)
    assert run(live) == []
    (w,) = live.warnings
    assert w["code"] == "unreadable" and w["zone"] == "seat 2" and "cannot be read" in w["message"]
