"""``cardtable demo``: bundled footage of a game through the real pipeline.

The footage (``cardtable/demo/footage.mp4``, made by
``scripts/make_demo_footage.py`` with the project's own scene renderer and
the CC0 deck of ``@letele/playing-cards``) shows a game of trumf played on a
felt table.  It goes through exactly what ``cardtable run`` runs: the card
recogniser, the stillness gate and seat attribution, the referee, the SQLite
store, the (simulated) LEDs and the dashboard on http://127.0.0.1:8000/.

    cardtable demo                  # real time, then keeps serving the dashboard
    cardtable demo --speed 5        # five times faster
    cardtable demo --once --speed 20    # play it through, print the final scores, exit

With ``--once`` the exit status is 0 when the footage played through and the
game came to its end; 1 otherwise (with the reason).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
from typing import Any

from cardtable.config import Config

DEMO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo")


def load_script(folder: str = DEMO_DIR) -> dict:
    with open(os.path.join(folder, "script.json"), encoding="utf-8") as fh:
        return json.load(fh)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cardtable demo", description="Play bundled footage of a game through "
                                "the real pipeline, with the dashboard on localhost.")
    p.add_argument("--speed", type=float, default=1.0, help="play N times faster (default 1)")
    p.add_argument("--once", action="store_true", help="play it through, print the final scores and exit")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--db", help="SQLite file (default: a fresh one in a temporary folder)")
    p.add_argument("--footage", default=DEMO_DIR, help=argparse.SUPPRESS)
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.speed <= 0:
        print("cardtable demo: --speed must be above 0", file=sys.stderr)
        return 2
    from cardtable.run import Paced, Table

    script = load_script(args.footage)
    folder = None
    if args.db is None:
        folder = tempfile.mkdtemp(prefix="cardtable-demo-")
    db = args.db or os.path.join(folder, "demo.sqlite")
    config = Config(db=db, host=args.host, port=args.port, pin="0000", geometry=script["geometry"])
    manual = {}
    for item in script.get("manual", []):
        manual.setdefault(item["frame"], []).append(item["event"])
    holder: dict[str, Any] = {}

    def on_frame(i: int) -> None:
        for event in manual.get(i, []):
            holder["table"].live.submit(event, timeout=0)

    from vision.sources import OpenCVSource

    video = OpenCVSource(os.path.join(args.footage, "footage.mp4"), live=False, name="demo footage")
    source = Paced(video, args.speed, on_frame)
    try:
        table = Table(config, source=source, serve=not args.once, image_size=tuple(script["size"]))
    except Exception as exc:
        print(f"cardtable demo: cannot start: {exc}", file=sys.stderr)
        return 2
    holder["table"] = table
    table.session.submit(script["new_game"])
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    table.start()
    if table.url:
        print(f"cardtable demo: dashboard on {table.url}/ (table PIN 0000); playing "
              f"{script['frames'] / script['fps'] / args.speed:.0f} s of footage", flush=True)
    try:
        table.wait_camera(stop)
        state = table.session.state()
        names = state.get("players") or []
        scores = ", ".join(f"{n} {s}" for n, s in zip(names, state.get("scores") or []))
        print(f"final scores: {scores}", flush=True)
        if state.get("game_over"):
            print("winners: " + ", ".join(names[s] for s in state["winners"]), flush=True)
        problems = [w["message"] for w in table.live.warnings]
        if args.once:
            if not state.get("game_over"):
                print("cardtable demo: the game did not come to its end"
                      + (f" ({'; '.join(problems[-3:])})" if problems else ""), file=sys.stderr)
                return 1
            return 0
        print("the footage has ended; the dashboard stays up (Ctrl-C to stop)", flush=True)
        stop.wait()
        return 0
    finally:
        table.stop()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
