"""How the recogniser reads when the camera is not straight overhead, or its lens bends the picture.

    .venv/bin/python bench/bench_view.py                        # 160 scenes a condition, seed 8
    .venv/bin/python bench/bench_view.py --n 320 --seed 21 --conditions overhead,lean-30,lean-45
    .venv/bin/python bench/bench_view.py --list                 # the conditions and what they change
    .venv/bin/python bench/bench_view.py --turn                 # read slanted views turned to straight down

The training scenes (``vision.synth.scene.random_scene_spec``) are all seen
from straight above, through a perfect lens, at moderate light.  A real
camera is often neither: a webcam on a shelf looks at the table at 30 or 45
degrees, so the far side shrinks and every index is squeezed along the line
of sight; a wide lens bows the picture's edges; a room at night is dim and
the sensor's gain adds noise; a small webcam takes the same table in fewer
pixels (``pixels-640``, ``pixels-480``: the rendering shrunk, its boxes
scored back in the rendering's pixels), and a phone's photograph has more than
the recogniser needs (``pixels-3840``: the rendering enlarged, which adds no
detail, so it measures only what reading so many pixels costs: the recogniser
reads such a picture halved, ``vision.recogniser.HALVE_FROM``).  This benchmark draws each scene once (the
benchmark's scenes: 1 to 8 cards in turn, 1280x720, the held-out designs)
and renders it under each condition, so the rows differ by the condition
alone.  A leaning camera sees the table from the same distance and zooms
just enough that no picture edge shows past the table; the scene's layout
is drawn that much smaller first, so that the cards keep about their size.
The lean's direction is drawn at random for each scene (``--direction 0``: a
level camera, as a person's photograph; ``--level`` reads each picture as
``cardtable recognise`` reads a photograph with no calibration).

Prints one line per condition (precision, recall, exact-set, wrong cards,
unknown boxes; ``vision/evaluation.py``'s rules; the median time an image on
one core, the turn included, and the time that a tenth of the images take more
than) and the wrong cards, which matter most: a condition may cost cards (read
as unknown), it must not make the recogniser name a wrong one.  With
``--turn`` each slanted picture is first turned to straight down
(``vision/rectify.py``) by the camera's own homography, as the live table does
with its calibration.  Needs the art (scripts/fetch-art.sh).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision.evaluation import Summary, score_image  # noqa: E402
from vision.inference import ENGINES  # noqa: E402
from vision.recogniser import Recogniser, Recognition  # noqa: E402
from vision.rectify import PlaneView  # noqa: E402
from vision.synth.decks import HELD_OUT, available_decks, build_face_cache  # noqa: E402
from vision.synth.scene import SceneSpec, random_scene_spec, render_scene, seen_from  # noqa: E402
from vision.synth.view import CameraView  # noqa: E402


@dataclasses.dataclass(frozen=True)
class Condition:
    """One way of seeing the scenes: the camera's ``lean`` (degrees off straight down),
    its lens's ``barrel`` distortion, the light's ``brightness`` gain with the sensor
    ``noise`` that comes with it (both applied over the scene's own), and the picture's
    ``width`` in pixels where it is not the rendering's 1280 (a camera of fewer pixels that
    sees the same table: the rendering shrunk, each pixel the mean of those it covers; or a
    camera of more: the rendering enlarged)."""

    name: str
    lean: float = 0.0
    barrel: float = 0.0
    brightness: float = 1.0
    noise: float = 0.0
    width: int | None = None
    what: str = ""


CONDITIONS = {c.name: c for c in (
    Condition("overhead", what="as the training scenes: straight down, a perfect lens"),
    Condition("lean-15", lean=15, what="a camera on an arm, a little to one side"),
    Condition("lean-30", lean=30, what="a webcam on a shelf"),
    Condition("lean-45", lean=45, what="a laptop's camera at the table's edge"),
    Condition("barrel-0.1", barrel=0.1, what="a wide webcam's lens"),
    Condition("barrel-0.25", barrel=0.25, what="a very wide lens (Pi Camera Module 3 Wide-like)"),
    Condition("lean-30-barrel-0.1", lean=30, barrel=0.1, what="a wide webcam on a shelf"),
    Condition("dim", brightness=0.35, noise=12, what="a dim room: a third of the light, the sensor's gain noise"),
    Condition("pixels-640", width=640, what="a 640x360 picture of the same table: a small webcam"),
    Condition("pixels-480", width=480, what="a 480x270 picture: about the smallest the recogniser is meant for"),
    Condition("pixels-3840", width=3840, what="a 3840x2160 picture, as a phone takes: the rendering enlarged"),
)}


def viewed(spec: SceneSpec, condition: Condition, direction: float) -> SceneSpec:
    """``spec`` as seen under ``condition``, the camera leaning towards ``direction``
    (:func:`vision.synth.scene.seen_from`: the layout drawn smaller by the view's zoom)."""
    out = seen_from(spec, condition.lean, direction, condition.barrel)
    out.camera.noise += condition.noise
    out.lighting.brightness *= condition.brightness
    return out


def in_pixels(image: np.ndarray, condition: Condition) -> tuple[np.ndarray, float]:
    """The rendered picture as ``condition``'s camera takes it, and how much smaller it is
    (1 where the condition keeps the rendering's pixels): shrunk to its ``width`` with
    ``cv2.INTER_AREA``, as a sensor of fewer, larger pixels would see the table, or enlarged
    to it with ``cv2.INTER_CUBIC``."""
    if condition.width is None or condition.width == image.shape[1]:
        return image, 1.0
    f = condition.width / image.shape[1]
    how = cv2.INTER_AREA if f < 1 else cv2.INTER_CUBIC
    return cv2.resize(image, (condition.width, max(1, round(image.shape[0] * f))), interpolation=how), f


def boxes_scaled(found: Recognition, f: float) -> Recognition:
    """``found`` with every box ``f`` times as large (a small picture's reading in the rendering's
    pixels, where its annotation is)."""
    if f == 1.0:
        return found
    grow = lambda box: tuple(int(round(v * f)) for v in box)  # noqa: E731
    return Recognition([dataclasses.replace(c, box=grow(c.box)) for c in found.cards],
                       [dataclasses.replace(u, box=grow(u.box)) for u in found.unknown])


def calibrated_view(spec: SceneSpec) -> PlaneView | None:
    """The turn to straight down that a calibrated table would give for ``spec``'s camera
    (:class:`vision.rectify.PlaneView`), or None where it is not worth turning.

    A calibration is a homography from the picture to the table; with a barrel lens
    none is exact, so this one fits the camera's map over a grid of the picture by least
    squares (as markers spread over the table would), onto the table drawn."""
    c = spec.camera
    camera = CameraView(spec.width, spec.height, c.lean, c.lean_direction, c.fov, c.barrel)
    if camera.identity:
        return None
    xs, ys = np.meshgrid(np.linspace(0, spec.width, 9), np.linspace(0, spec.height, 9))
    picture = np.stack([xs.ravel(), ys.ravel()], axis=1)
    H, _ = cv2.findHomography(picture, camera.to_table(picture), 0)
    view = PlaneView(H, (spec.width, spec.height), region=(0, 0, spec.width, spec.height))
    return view if view.worth_turning else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=160, help="scenes per condition (default 160)")
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--engine", choices=("auto", *ENGINES), default="auto")
    ap.add_argument("--threshold", type=float, default=None, help="accept threshold (default: the model's)")
    ap.add_argument("--conditions", default=",".join(CONDITIONS),
                    help=f"comma-separated, of: {', '.join(CONDITIONS)} (default all)")
    ap.add_argument("--turn", action="store_true",
                    help="turn each picture to straight down before reading it (vision/rectify.py), by the "
                         "camera's own homography as a calibrated table gives it, where that is worth it")
    ap.add_argument("--level", action="store_true",
                    help="read each picture as a level camera's of unknown lean (Recogniser.recognise_level: as "
                         "it is and, where that leaves an unknown box, turned at a few leans, the reading with "
                         "the most cards unless its indices' sizes spread more), as cardtable recognise reads a "
                         "photograph without a calibration")
    ap.add_argument("--direction", type=float, default=None, metavar="DEG",
                    help="the lean's direction for every scene (0: the top of the picture is the far side, "
                         "as in a photograph taken by a person sitting at the table); default: drawn at "
                         "random per scene")
    ap.add_argument("--show-errors", type=int, default=10, help="print this many wrong readings a condition")
    ap.add_argument("--list", action="store_true", help="list the conditions and stop")
    args = ap.parse_args(argv)
    if args.list:
        for c in CONDITIONS.values():
            print(f"{c.name:<20} {c.what}")
        return 0
    names = [n.strip() for n in args.conditions.split(",") if n.strip()]
    unknown = [n for n in names if n not in CONDITIONS]
    if unknown or not names:
        ap.error(f"unknown condition {', '.join(unknown) or '(none given)'}: choose from {', '.join(CONDITIONS)}")
    if args.n < 1:
        ap.error("--n must be at least 1")
    if args.direction is not None and not np.isfinite(args.direction):
        ap.error("--direction must be a number of degrees")
    if args.level and args.turn:
        ap.error("--level and --turn are two ways of reading a slanted picture: choose one")
    if args.threshold is not None and not 0 < args.threshold <= 1:
        ap.error("--threshold must lie in (0, 1]")

    cv2.setNumThreads(1)
    build_face_cache(log=lambda m: None)
    rec = Recogniser(args.model, accept_threshold=args.threshold, threads=1, engine=args.engine)
    decks = [d for d in rec.meta.get("held_out", list(HELD_OUT)) if d in available_decks()]
    if not decks:
        print("held-out deck designs are not installed: run scripts/fetch-art.sh", file=sys.stderr)
        return 2
    leaning = "at random" if args.direction is None else f"{args.direction:g} degrees"
    how = "; read as a level camera's of unknown lean" if args.level else ""
    print(f"model {rec.model_dir}; held-out designs: {', '.join(decks)}; accept threshold "
          f"{rec.accept_threshold}; {args.n} scenes a condition, seed {args.seed}; leaning {leaning}{how}")

    summaries = {n: Summary() for n in names}
    wrong: dict[str, list[str]] = {n: [] for n in names}
    sizes: dict[str, list[float]] = {n: [] for n in names}
    turned = {n: 0 for n in names}
    seconds: dict[str, list[float]] = {n: [] for n in names}
    for k in range(args.n):
        # Each scene's spec and its renderings come from seeds of their own, so that a
        # condition changes what it changes and nothing else.
        spec = random_scene_spec(np.random.default_rng([args.seed, k]), decks, 1280, 720,
                                 n_cards=1 + k % 8, card_height=(130, 300))
        direction = float(np.random.default_rng([args.seed, k, 1]).uniform(0, 360))
        if args.direction is not None:
            direction = args.direction
        for name in names:
            seen = viewed(spec, CONDITIONS[name], direction)
            image, ann = render_scene(seen, np.random.default_rng([args.seed, k, 2]))
            image, f = in_pixels(image, CONDITIONS[name])
            # (No condition both leans and shrinks the picture: a turn is for the rendering's pixels.)
            view = calibrated_view(seen) if args.turn else None
            turned[name] += view is not None
            start = time.perf_counter()
            found = rec.recognise_level(image) if args.level else rec.recognise(image, view=view)
            seconds[name].append(time.perf_counter() - start)
            score = score_image(boxes_scaled(found, 1 / f), ann)
            summaries[name].add(score)
            wrong[name] += [f"scene {k}: {w}" for w in score.wrong]
            sizes[name] += [f * ix.height for c in ann.cards for ix in c.indices if ix.visible >= 0.85]

    for name in names:
        size = f"index {np.median(sizes[name]):.0f} px" if sizes[name] else "no index seen"
        turns = f", {turned[name]} turned" if args.turn else ""
        ms, slow = (1000 * float(np.percentile(seconds[name], q)) for q in (50, 90))
        print(summaries[name].line(name[:14]) + f"  {size}  {ms:.0f} ms (a tenth over {slow:.0f})  ({name}{turns})")
    for name in names:
        for line in wrong[name][:args.show_errors]:
            print(f"  {name}: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
