"""How often the recogniser names a wrong card when the picture is blurred past reading.

    .venv/bin/python bench/bench_blur.py                 # 120 scenes, seed 8, blur 3 to 8 px
    .venv/bin/python bench/bench_blur.py --n 450 --seed 1234 --cards 1-5 --blur 1.5-9 --height 110-240

The recogniser must return a card it cannot read as unknown, never as a wrong
card.  ``tests/test_vision_recogniser.py`` checks that on six badly blurred
scenes; this benchmark measures it on many: 960x540 scenes of the held-out
designs (3 cards of 120-200 px by default, as in the test) with Gaussian
camera blur from ``--blur``, stepped evenly over the scenes.  At 3 px the
indices (20-40 px high) can still be read now and then; from 5 px hardly
ever (docs/vision.md has the measured rows).  Prints, per blur step, the cards present, reported and reported
wrong, and every wrong one with its confidence.  A card is wrong by the
benchmark's rule (``vision/evaluation.py``): reported where that card does
not lie, so a card misread as another card of the same scene counts too.
Needs the art (scripts/fetch-art.sh).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision.evaluation import score_image  # noqa: E402
from vision.recogniser import Recogniser  # noqa: E402
from vision.synth.decks import HELD_OUT, available_decks, build_face_cache  # noqa: E402
from vision.synth.scene import random_scene_spec, render_scene  # noqa: E402


def _span(text: str, kind=float) -> tuple:
    lo, _, hi = text.partition("-")
    return kind(lo), kind(hi or lo)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=120, help="number of scenes (default 120)")
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--cards", default="3", help="cards per scene, N or LO-HI (default 3)")
    ap.add_argument("--height", default="120-200", help="card height in px, LO-HI (default 120-200)")
    ap.add_argument("--blur", default="3-8", help="Gaussian blur sigma in px, LO-HI (default 3-8)")
    args = ap.parse_args(argv)
    try:
        cards, height, blur = _span(args.cards, int), _span(args.height), _span(args.blur)
    except ValueError:
        ap.error("--cards, --height and --blur take a number or a range LO-HI")
    if not (1 <= cards[0] <= cards[1] <= 8 and 0 < height[0] <= height[1] and 0 <= blur[0] <= blur[1]):
        ap.error("ranges must run low to high: 1-8 cards, a positive height, a blur of 0 or more")

    cv2.setNumThreads(1)
    build_face_cache(log=lambda m: None)
    rec = Recogniser(args.model, threads=1)
    # The designs this model was trained without, as bench_recognition.py picks them.
    decks = [d for d in rec.meta.get("held_out", list(HELD_OUT)) if d in available_decks()]
    if not decks:
        print("held-out deck designs are not installed: run scripts/fetch-art.sh", file=sys.stderr)
        return 2
    print(f"model {rec.model_dir}; held-out designs: {', '.join(decks)}; accept threshold {rec.accept_threshold}")

    rng = np.random.default_rng(args.seed)
    steps = int(round(blur[1] - blur[0])) + 1  # one step per pixel of blur
    rows: dict[float, list[int]] = {}
    wrong_cards = []
    for k in range(args.n):
        n_cards = cards[0] + k % (cards[1] - cards[0] + 1)
        spec = random_scene_spec(rng, decks, 960, 540, n_cards=n_cards, card_height=height)
        spec.camera.blur = blur[0] + (blur[1] - blur[0]) * (k % steps) / max(1, steps - 1)
        img, ann = render_scene(spec, rng)
        result = rec.recognise(img)
        score = score_image(result, ann)
        row = rows.setdefault(round(spec.camera.blur, 2), [0, 0, 0])
        row[0] += len(ann.cards)
        row[1] += len(result.cards)
        row[2] += score.fp
        wrong_cards += [f"scene {k} (blur {spec.camera.blur:.1f}): {w}, present "
                        f"{'/'.join(sorted(c.card for c in ann.cards))}" for w in score.wrong]

    print(f"{'blur px':>8} {'present':>8} {'reported':>9} {'wrong':>6}")
    for b, (present, reported, wrong) in sorted(rows.items()):
        print(f"{b:>8.2f} {present:>8} {reported:>9} {wrong:>6}")
    present, reported, wrong = (sum(r[i] for r in rows.values()) for i in range(3))
    share = f"{100 * wrong / reported:.1f}% of those reported" if reported else "none reported"
    print(f"{'all':>8} {present:>8} {reported:>9} {wrong:>6}   wrong: {share}")
    for line in wrong_cards:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
