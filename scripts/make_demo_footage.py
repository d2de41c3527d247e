"""Render the bundled demo footage: a whole game of trumf played on a table.

    python scripts/make_demo_footage.py [--seed S] [--out cardtable/demo]

The game is a random legal game (``referee.simulate``) of trumf, three
players, one seven-trick hand (``stock_mode = single_hand``), so it is short
and needs no button: every event of it is seen by the camera (the turned-up
trump card and the plays).  The frames come from the project's own scene
renderer (``vision.footage``) with the CC0 deck of the npm package
``@letele/playing-cards`` (installed by ``scripts/fetch-art.sh``; the art
itself is never committed).

It writes ``footage.mp4`` (the frames) and ``script.json``: the ``new_game``
event the demo submits first, the frame rate, any manual events by frame, the
event log the camera should produce and the final scores it leads to.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys

import cv2

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from referee.log import replay  # noqa: E402
from referee.simulate import random_game  # noqa: E402
from vision.footage import Footage, script_from_log, table_geometry_for  # noqa: E402

SIZE = (960, 540)
TABLE_MM = (560.0, 350.0)      # a small card table, seen from about a metre up
FPS = 10.0
GAME = {"event": "new_game", "game": "trumf", "players": ["Ada", "Bo", "Cy"], "dealer": 0,
        "options": {"stock_mode": "single_hand"}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "cardtable", "demo"))
    args = parser.parse_args()

    log = random_game("trumf", 3, random.Random(args.seed), options=GAME["options"])
    log[0] = GAME
    actions, expected = script_from_log(log, one_hand=False)
    actions = [a for a in actions if not (a.kind == "manual" and a.event.get("event") == "new_game")]
    geometry = table_geometry_for(SIZE, seats=3, table_mm=TABLE_MM)
    footage = Footage(geometry, actions, size=SIZE, fps=FPS, deck="letele", table="felt", seed=args.seed,
                      noise=0.6, still_frames=5)
    manual: list[dict] = []
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "footage.mp4")
    writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"mp4v"), FPS, SIZE)
    if not writer.isOpened():
        raise SystemExit(f"cannot write {path}")
    frames = 0
    for frame in footage.frames(submit=lambda e: manual.append({"frame": frames, "event": e})):
        writer.write(frame)
        frames += 1
    writer.release()
    final = replay(expected).state()
    script = {"new_game": GAME, "fps": FPS, "frames": frames, "size": list(SIZE), "seed": args.seed,
              "manual": manual, "expected_log": expected, "final_scores": final["scores"],
              "winners": final["winners"], "geometry": geometry.to_config()}
    with open(os.path.join(args.out, "script.json"), "w", encoding="utf-8") as fh:
        json.dump(script, fh, indent=1)
        fh.write("\n")
    print(f"{frames} frames -> {path} ({os.path.getsize(path) / 1e6:.1f} MB); final scores {final['scores']}")


if __name__ == "__main__":
    main()
