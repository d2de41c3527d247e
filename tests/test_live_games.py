"""Whole hands of the four games, as footage rendered by the project's scene renderer.

Each hand is a random legal game from :func:`referee.simulate.random_game`,
without its deal (the camera does not see it), acted out at a rendered table
(:mod:`vision.footage`): a hand reaches in from the player's edge, puts the
cards down (fanned when several), leaves; passes, bids and exchanges are
pressed on buttons (:meth:`LiveTable.submit`); finished tricks are swept away
by a hand; in twenty-two the loser's card goes to the scoreboard zone; in
trumf the trump card is turned up in the centre.

In the four whole-hand tests the cards are read by the footage's *ground-truth
stand-in reader*: it reads exactly the cards whose corner index the renderer
says is visible (or, in the "flaky" test, misses and misreads some on
purpose).  So those check the live pipeline (motion gate, stillness, voting,
grouping, zones, attribution, corrections, event order), not the recogniser.
The project's recogniser reads the cards end to end in
``test_whole_hand_with_the_real_recogniser`` (whole hands of big-two for two,
twenty-two and trumf at 960x540) and ``test_real_recogniser_short_scene``
(1280x720), with the committed model.

Footage is 640x360 at 10 synthetic frames per second; times below are frame times.
"""

from __future__ import annotations

import random

import pytest

from cardtable.session import Session
from cardtable.store import Store
from referee.log import replay
from referee.simulate import random_game
from vision.card_reader import fingerprint
from vision.footage import Footage, script_from_log, table_geometry_for
from vision.live import LiveTable
from vision.sources import ListSource

from vision.synth import decks as synth_decks

# The art is part of the test set-up (`make test` runs scripts/fetch-art.sh): missing art is a
# failure to see, not a reason to skip.
assert "letele" in synth_decks.available_decks(), "the letele face cache is not built: run scripts/fetch-art.sh"


class Counting:
    def __init__(self, inner):
        self.inner, self.seen = inner, []

    def read(self, image):
        self.seen.append(fingerprint(image))
        return self.inner.read(image)


def act_out(tmp_path, game, players, seed, options=None, flaky=(0.0, 0.0), size=(640, 360),
            table_mm=(900.0, 560.0), reader=None):
    log = random_game(game, players, random.Random(seed), options=options or {}, max_events=5000)
    actions, expected = script_from_log(log)
    geometry = table_geometry_for(size, players, table_mm=table_mm, scoreboard=(game == "twenty-two"))
    footage = Footage(geometry, actions, size=size, seed=seed, flaky=flaky)
    session = Session(Store(str(tmp_path / "table.sqlite")))
    reader = Counting(reader or footage.reader)
    box: dict = {}
    frames = footage.frames(lambda event: box["live"].submit(event))
    live = LiveTable(ListSource(frames, fps=10), geometry, reader, session)
    box["live"] = live
    while live.step():
        pass
    return session, live, expected, footage, reader


def check_exact(session, live, expected, footage, reader):
    assert session.referee.raw == expected
    assert session.referee.verdicts == replay(expected).verdicts
    assert all(v["ok"] for v in session.referee.verdicts)
    assert session.referee.verdicts[-1].get("hand_result")
    assert not live.warnings, list(live.warnings)
    assert not set(reader.seen) & footage.hand_frames            # no frame with a hand in it was read
    assert len(reader.seen) < footage.frame_count / 3             # still frames with nothing new: not read
    assert max(live.latencies) <= 0.5 + 1e-9                      # rest to event, stillness wait included


def test_big_two_hand(tmp_path):
    session, live, expected, footage, reader = act_out(tmp_path, "big-two", 4, seed=1)
    check_exact(session, live, expected, footage, reader)
    plays = [e for e in expected if e["event"] == "play"]
    assert any(len(e["cards"]) >= 2 for e in plays)               # fanned multi-card plays
    assert sum(e["event"] == "pass" for e in expected) > 10       # passes from the buttons


def test_twenty_two_hand_with_exchanges_and_the_scoreboard(tmp_path):
    session, live, expected, footage, reader = act_out(tmp_path, "twenty-two", 3, seed=5)
    check_exact(session, live, expected, footage, reader)
    assert any(e["event"] == "exchange" for e in expected)
    loser_cards = [r["card"] for r in session.referee.verdicts[-1]["hand_result"] if r.get("loser")]
    on_scoreboard = [t.card for t in live.observer.tracks if t.zone == "scoreboard"]
    assert loser_cards and on_scoreboard == loser_cards           # seen there, and never sent as a play


def test_khanhoo_hand_with_multi_card_leads(tmp_path):
    session, live, expected, footage, reader = act_out(tmp_path, "khanhoo", 3, seed=1)
    check_exact(session, live, expected, footage, reader)
    assert any(len(e.get("cards", [])) >= 3 for e in expected)


def test_trumf_hand_with_the_trump_turned_up_in_the_centre(tmp_path):
    session, live, expected, footage, reader = act_out(tmp_path, "trumf", 3, seed=5,
                                                       options={"stock_mode": "single_hand"})
    check_exact(session, live, expected, footage, reader)
    trump = next(e for e in expected if e["event"] == "trump")
    assert live.sent[0][0] == trump
    assert [t.card for t in live.observer.tracks if t.zone == "centre"] == [trump["card"]]


def test_a_flaky_reader_is_corrected_by_votes_rechecks_and_amends(tmp_path):
    """5 % of visible cards missed and 5 % misread, per frame.  Votes settle most
    readings; a card missed by a whole look is found by the next one and added to
    its play with an ``amend``.  The corrected log is the expected one.  (One fixed
    seed; with these rates seeds 1-8 all came out exactly right, with 10 % missed
    7 of 8 did: see docs/live-table.md.)"""
    session, live, expected, footage, reader = act_out(tmp_path, "big-two", 4, seed=5, flaky=(0.05, 0.05))
    corrected = [e for e in session.referee.events_json() if e["event"] != "amend"]
    assert corrected == expected
    assert all(v["ok"] for v in session.referee.verdicts)
    assert footage.injected["missed"] > 20 and footage.injected["misread"] > 20


@pytest.fixture(scope="module")
def real_reader():
    from vision.card_reader import RecogniserReader
    from vision.recogniser import Recogniser

    return RecogniserReader(Recogniser())       # the committed model: its absence is a failure


@pytest.mark.parametrize("game, players, seed, options", [
    ("big-two", 2, 1, {}),
    ("twenty-two", 3, 5, {}),
    ("trumf", 3, 5, {"stock_mode": "single_hand"}),
])
def test_whole_hand_with_the_real_recogniser(tmp_path, real_reader, game, players, seed, options):
    """The same footage at 960x540 (cards about 110 px tall), read by the project's recogniser:
    the exact log and verdicts.  (Hands with three- to five-card fans, khanhoo's and four-player
    big-two's, are not yet read exactly by the recogniser: see docs/live-table.md.)"""
    session, live, expected, footage, reader = act_out(tmp_path, game, players, seed, options=options,
                                                       size=(960, 540), table_mm=(700.0, 420.0),
                                                       reader=real_reader)
    check_exact(session, live, expected, footage, reader)


def test_real_recogniser_short_scene(tmp_path):
    """The project's recogniser, end to end: a short big-two scene at 1280x720, two fanned pairs.
    (Not every fanned pair is read yet: the covered card shows one index, and on a bad frame it
    comes out as an unreadable card.  See docs/live-table.md.)"""
    from vision.card_reader import RecogniserReader
    from vision.footage import Action
    from vision.recogniser import Recogniser

    real = Recogniser()

    log = [{"event": "new_game", "game": "big-two", "players": ["A", "B"], "dealer": 0, "options": {}},
           {"event": "play", "seat": 1, "cards": ["5C", "5D"]},
           {"event": "play", "seat": 0, "cards": ["KH", "KS"]}]
    actions = [Action("manual", event=log[0]), Action("play", seat=1, cards=["5C", "5D"]),
               Action("play", seat=0, cards=["KH", "KS"])]
    size = (1280, 720)
    geometry = table_geometry_for(size, 2, table_mm=(700.0, 420.0))
    footage = Footage(geometry, actions, size=size, seed=3)
    session = Session(Store(str(tmp_path / "table.sqlite")))
    box: dict = {}
    live = LiveTable(ListSource(footage.frames(lambda e: box["live"].submit(e)), fps=10), geometry,
                     RecogniserReader(real), session)
    box["live"] = live
    while live.step():
        pass
    assert session.referee.raw == log
    assert all(v["ok"] for v in session.referee.verdicts)
    assert max(live.latencies) <= 0.5 + 1e-9


@pytest.mark.parametrize("lean, direction", [(40.0, 0.0), (40.0, 160.0)])
def test_real_recogniser_reads_a_table_filmed_at_a_slant(tmp_path, lean, direction):
    """A camera leaning 40 degrees off straight down, the table calibrated: the live reader turns
    each picture to straight down (vision/rectify.py), each card's box comes back into the picture
    on its own seat, and the referee gets the exact log.  (These cards, about 140 px tall, are read
    as they are too; what the turn saves on smaller and squeezed cards is in bench_view --turn and
    tests/test_vision_rectify.py.)"""
    import numpy as np

    from vision.card_reader import RecogniserReader
    from vision.footage import Action
    from vision.recogniser import Recogniser
    from vision.synth.view import CameraView
    from vision.table_geometry import TableGeometry

    log = [{"event": "new_game", "game": "big-two", "players": ["A", "B"], "dealer": 0, "options": {}},
           {"event": "play", "seat": 1, "cards": ["3C"]},
           {"event": "play", "seat": 0, "cards": ["8C"]},
           {"event": "play", "seat": 1, "cards": ["KC"]}]
    actions = [Action("manual", event=log[0])] + [Action("play", seat=e["seat"], cards=e["cards"]) for e in log[1:]]
    size = (1280, 720)
    # Laid out overhead that much smaller that the leaning camera's zoom keeps the table in view.
    zoom = CameraView(*size, lean, direction).zoom
    full = table_geometry_for(size, 2, table_mm=(560.0, 336.0))
    centre = np.array(size) / 2.0
    overhead = TableGeometry(centre + (full.corners_px - centre) / zoom, full.table_mm, 2, image_size=size)
    footage = Footage(overhead, actions, size=size, seed=3, lean=lean, lean_direction=direction)
    seen = footage.seen_geometry
    reader = RecogniserReader(Recogniser(), table=seen)
    session = Session(Store(str(tmp_path / "table.sqlite")))
    box: dict = {}
    live = LiveTable(ListSource(footage.frames(lambda e: box["live"].submit(e)), fps=10), seen, reader, session)
    box["live"] = live
    while live.step():
        pass
    assert reader.view_for(np.zeros((size[1], size[0], 3), np.uint8)) is not None      # it was turned
    assert session.referee.raw == log
    assert all(v["ok"] for v in session.referee.verdicts)
