"""Benchmark of the live table at 1280x720 on one core.

Prints:

1. the cost of one frame through :meth:`LiveTable.step` when the table is
   still and nothing is new (the motion gate only; target <= 5 ms);
2. the cost of a frame while a hand moves (gate only, nothing read);
3. the cost of a frame with new cards (a look frame: gate + reading + the
   observer's bookkeeping), with the ground-truth stand-in reader (pipeline
   cost alone) and, when its model is installed, with the real recogniser;
4. the delay from a card coming to rest to its event, in real time: rendered
   footage is replayed at 30 frames per second by wall clock, a camera-like
   source hands out the newest frame (dropping frames while the pipeline is
   busy), and the delay runs from the moment the first frame showing the
   card at rest is released to the moment the session has judged the play
   (stillness wait included; target <= 500 ms).

Run: ``python bench/bench_live.py [--plays N] [--frames N]`` (about a minute).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import cv2

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from cardtable.session import Session  # noqa: E402
from cardtable.store import Store  # noqa: E402
from vision.footage import Action, Footage, table_geometry_for  # noqa: E402
from vision.live import LiveTable  # noqa: E402
from vision.sources import Frame, ListSource, SourceEnded  # noqa: E402

SIZE = (1280, 720)
FPS = 30.0


def percentiles(xs):
    xs = sorted(xs)
    return statistics.median(xs), xs[min(len(xs) - 1, int(0.95 * len(xs)))], xs[-1]


def fmt_ms(xs):
    med, p95, top = percentiles(xs)
    return f"median {med * 1000:6.2f} ms   p95 {p95 * 1000:6.2f} ms   max {top * 1000:6.2f} ms   (n={len(xs)})"


def script(plays: int):
    cards = ["3C", "5D", "7H", "9S", "JC", "KD", "4H", "6S", "8C", "10D"]
    actions = [Action("manual", event={"event": "new_game", "game": "big-two", "players": ["A", "B", "C", "D"],
                                       "dealer": 0, "options": {}})]
    for k in range(plays):
        actions.append(Action("play", seat=(1 + k) % 4, cards=[cards[k % len(cards)]]))
    return actions


def render(plays: int, still: int):
    geometry = table_geometry_for(SIZE, 4)
    footage = Footage(geometry, script(plays), size=SIZE, fps=FPS, still_frames=still, seed=2)
    frames, manual = [], []
    for image in footage.frames(lambda e: manual.append((len(frames), e))):
        frames.append(image)
    return geometry, footage, frames, manual


def new_session():
    return Session(Store(os.path.join(tempfile.mkdtemp(), "bench.sqlite")))


class TimedReader:
    def __init__(self, inner):
        self.inner, self.times = inner, []

    def read(self, image):
        t0 = time.perf_counter()
        out = self.inner.read(image)
        self.times.append(time.perf_counter() - t0)
        return out


def per_frame_costs(geometry, footage, frames, manual, reader):
    """Step every frame (synthetic time) and time it; classify by what the observer did."""
    session = new_session()
    for _, event in manual:
        if event["event"] == "new_game":
            session.submit(event)
    live = LiveTable(ListSource(frames, fps=FPS), geometry, reader, session)
    still, moving, looking = [], [], []
    while True:
        before = live.observer.looks, len(reader.times)
        t0 = time.perf_counter()
        more = live.step()
        dt = time.perf_counter() - t0
        if not more:
            break
        state = live.observer.status()["state"]
        if len(reader.times) > before[1]:
            looking.append(dt)
        elif state == "still":
            still.append(dt)
        elif state in ("moving", "settling"):
            moving.append(dt)
    return still, moving, looking, live


class PacedCamera:
    """Replays frames at ``fps`` by wall clock; ``read`` gives the newest released frame
    (waiting for the next one if the newest was already given), like a live camera."""

    live = True
    name = "paced"

    def __init__(self, frames, fps):
        self.frames, self.fps = frames, fps
        self.start = None
        self.last = -1
        self.dropped = 0

    def open(self):
        self.start = time.perf_counter()

    def release_time(self, i):
        return self.start + i / self.fps

    def read(self):
        now = time.perf_counter()
        i = int((now - self.start) * self.fps)
        if i <= self.last:
            i = self.last + 1
            wait = self.release_time(i) - now
            if wait > 0:
                time.sleep(wait)
        if i >= len(self.frames):
            raise SourceEnded(self.name)
        self.dropped += max(0, i - self.last - 1)
        self.last = i
        return Frame(self.frames[i], self.release_time(i), i)

    def close(self):
        pass


def rest_to_event(geometry, footage, frames, reader):
    session = new_session()
    session.submit(script(0)[0].event)
    cam = PacedCamera(frames, FPS)
    submitted = []

    class Timed:
        def submit(self, event):
            v = session.submit(event)
            submitted.append((event, time.perf_counter()))
            return v

        def state(self):
            return session.state()

    live = LiveTable(cam, geometry, reader, Timed())
    live.feed.lost_after = 10 ** 9
    while live.step():
        pass
    delays = []
    plays = [(e, t) for e, t in submitted if e["event"] == "play"]
    for (event, t_event), rest_index in zip(plays, footage.rest_frames):
        delays.append(t_event - cam.release_time(rest_index))
    return delays, len(plays), len(footage.rest_frames), cam.dropped


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plays", type=int, default=6, help="plays in the footage (default 6)")
    ap.add_argument("--still", type=int, default=24, help="still frames after each play (default 24 = 0.8 s)")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    print(f"live table benchmark: {SIZE[0]}x{SIZE[1]}, one core (cv2.setNumThreads(1)), "
          f"{FPS:.0f} frames/s footage, {args.plays} single-card plays with a hand reaching in")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} "
          "(a loaded machine shows as a long tail: compare medians)")
    t0 = time.perf_counter()
    geometry, footage, frames, manual = render(args.plays, args.still)
    print(f"rendered {len(frames)} frames in {time.perf_counter() - t0:.1f} s (not part of the figures)")

    readers = [("stand-in reader (ground truth; pipeline cost only)", footage.reader)]
    try:
        from vision.recogniser import ModelError, Recogniser
        from vision.card_reader import RecogniserReader
        try:
            readers.append(("real recogniser (vision.recogniser)", RecogniserReader(Recogniser(threads=1))))
        except ModelError as exc:
            print(f"real recogniser: not measured ({exc})")
    except ImportError as exc:
        print(f"real recogniser: not measured ({exc})")

    for name, inner in readers:
        print(f"\n== {name}")
        reader = TimedReader(inner)
        still, moving, looking, live = per_frame_costs(geometry, footage, frames, manual, reader)
        print(f"still frame, nothing new : {fmt_ms(still)}   target <= 5 ms")
        print(f"frame while a hand moves : {fmt_ms(moving)}")
        print(f"frame with new cards     : {fmt_ms(looking)}")
        print(f"  of which reading       : {fmt_ms(reader.times)}")
        sent = [e for e, _ in live.sent if e["event"] == "play"]
        print(f"plays sent {len(sent)} of {args.plays}; looks {live.observer.looks}")
        reader = TimedReader(inner)
        delays, n_sent, n_rest, dropped = rest_to_event(geometry, footage, frames, reader)
        if delays:
            med, p95, top = percentiles(delays)
            print(f"rest to event (30 fps, real time): median {med * 1000:.0f} ms   max {top * 1000:.0f} ms   "
                  f"(n={len(delays)}, {n_sent}/{n_rest} plays sent, {dropped} frames dropped)   target <= 500 ms")
        else:
            print("rest to event: no play was sent")
    return 0


if __name__ == "__main__":
    sys.exit(main())
