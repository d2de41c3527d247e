"""Training data: rendered scenes on disk, detector targets, classifier crops.

Scenes come from :func:`vision.synth.scene.random_scene_spec`, rendered in
shards by worker processes; every shard is a pure function of (seed, shard
number), so a data set is reproducible from its config.  This module does
not import torch (the training loop does), so it can be used by tests and
benchmarks too.
"""

from __future__ import annotations

import json
import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.index_geometry import (DET_STRIDE, H_REF, NOT_INDEX, PATCH_H, PATCH_W, RANKS, REFINE_PATCH_H,
                                   REFINE_PATCH_W, REFINE_WINDOW_H, REFINE_WINDOW_W, SUITS, crop_index, glyph_axes,
                                   refine_target)
from vision.synth.scene import HIDDEN_FRACTION, READABLE_FRACTION, random_scene_spec, render_scene

SHARD_SIZE = 250
#: Indices smaller than this (pixels, in the rendered scene) are not used to
#: train the classifier: the recogniser reads indices from the full-resolution
#: image, where they are larger, and tiny blurred ones are unreadable anyway.
MIN_READ_HEIGHT = 16.0
#: A readable index less visible than this counts as partly covered (:func:`covered_crops`).
PARTLY_COVERED_BELOW = 0.97
#: The least visible index that :func:`covered_crops` still takes as legible, though no
#: longer required of the recogniser (under READABLE_FRACTION).
MORE_COVERED_FROM = 0.7
#: The suit label of an index that is legible but whose pip does not show (an edge lies
#: over the bottom of the index, :attr:`vision.synth.scene.IndexAnnotation.pip_visible`):
#: the classifier is taught that it cannot tell the suit (a uniform target over the four)
#: instead of the card's, which it could only have guessed from what lies there.
SUIT_HIDDEN = -2
#: The same, when the classifier is taught that the rank glyph's ink (red or black, which
#: still shows) tells the colour: the suit is one of the two of that colour, it cannot say
#: which (``keep_colour`` below; a target of one half on each, train.suit_loss).
SUIT_HIDDEN_BLACK = -3
SUIT_HIDDEN_RED = -4
#: The rank label of an index that is legible but whose rank glyph is half covered (an edge
#: over the top of the index, :attr:`vision.synth.scene.IndexAnnotation.rank_visible`): it is
#: an index, the classifier is taught that it cannot tell which rank (one thirteenth on each,
#: none on NOT_INDEX; train.rank_loss).
RANK_HIDDEN = -2
#: How far the jittered copies of a positive crop are cut from the truth: (position
#: sigma in index heights, angle sigma in degrees, log-size sigma).  Copy 0 is close to
#: the truth, later ones as far off as the detector's worse estimates (angle error p90
#: about 18 degrees, height within about -30%..+25%); copies past the third repeat it.
JITTER = ((0.06, 5.0, 0.08), (0.12, 12.0, 0.15), (0.15, 20.0, 0.2))


@dataclass
class SceneSet:
    images: np.ndarray         # N x H x W x 3 uint8
    indices: list[list[dict]]  # per image: one dict per card index (see _index_records)


#: What each index record holds (:func:`_index_records`).  Part of a scene cache's request
#: (:func:`generate_scenes`): scenes rendered when the records held less (before
#: ``rank_visible``, say) are rendered anew rather than trained on without it.
RECORD_FIELDS = ("card", "card_i", "corner", "cx", "cy", "angle", "h", "visible", "pip_visible", "rank_visible",
                 "card_cx", "card_cy", "card_h")


def _index_records(ann) -> list[dict]:
    out = []
    for ci, card in enumerate(ann.cards):
        for k, ix in enumerate(card.indices):
            out.append({"card": card.card, "card_i": ci, "corner": k, "cx": ix.centre[0], "cy": ix.centre[1],
                        "angle": ix.angle, "h": ix.height, "visible": ix.visible, "pip_visible": ix.pip_visible,
                        "rank_visible": ix.rank_visible,
                        "card_cx": card.centre[0], "card_cy": card.centre[1], "card_h": card.height})
    return out


def _render_shard(args) -> tuple[np.ndarray, list[list[dict]]]:
    seed, shard, n, decks, width, height, card_height, max_cards, hard, views, dim = args
    rng = np.random.default_rng([seed, shard])
    imgs, recs = [], []
    for _ in range(n):
        spec = random_scene_spec(rng, decks, width, height, card_height=card_height, max_cards=max_cards,
                                 hard=hard, views=views, dim=dim)
        img, ann = render_scene(spec, rng)
        imgs.append(img)
        recs.append(_index_records(ann))
    return np.stack(imgs), recs


def generate_scenes(out_dir: Path, n: int, seed: int, decks: list[str], width: int = 640, height: int = 480,
                    card_height=(45, 200), max_cards: int = 8, hard: float = 1.0, workers: int = 2,
                    log=print, views: float = 0.0, dim: float = 0.0) -> None:
    """Render ``n`` random scenes into ``out_dir`` (shards of SHARD_SIZE); skips shards already there.
    ``views`` and ``dim`` are the shares of scenes seen by a leaning camera and lit as a dim room
    (:func:`vision.synth.scene.random_scene_spec`)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    # Shards are reused only for the same request: a changed design list,
    # scene count or record format must not train on stale scenes.
    spec = {"n": n, "seed": seed, "decks": list(decks), "width": width, "height": height,
            "card_height": list(card_height), "max_cards": max_cards, "hard": hard, "records": list(RECORD_FIELDS)}
    if views or dim:  # (only then: scenes drawn before these existed are the same scenes)
        spec.update(views=views, dim=dim)
    spec_file = out_dir / "scenes.json"
    if not spec_file.exists() or json.loads(spec_file.read_text()) != spec:
        for old in out_dir.glob("shard*.npz"):
            old.unlink()
        (out_dir / "detector.pt").unlink(missing_ok=True)   # trained on the old scenes
        (out_dir / "detector.json").unlink(missing_ok=True)
        spec_file.write_text(json.dumps(spec))
    shards = [(seed, s, min(SHARD_SIZE, n - s * SHARD_SIZE), list(decks), width, height, tuple(card_height),
               max_cards, hard, views, dim) for s in range(math.ceil(n / SHARD_SIZE))]
    todo = [a for a in shards if not (out_dir / f"shard{a[1]:04d}.npz").exists()]
    if not todo:
        return

    def save(args, result):
        imgs, recs = result
        tmp = out_dir / f"shard{args[1]:04d}.tmp.npz"
        np.savez(tmp, images=imgs, ann=np.array(json.dumps(recs)))
        os.replace(tmp, out_dir / f"shard{args[1]:04d}.npz")

    if workers <= 1:
        for a in todo:
            save(a, _render_shard(a))
            log(f"  rendered shard {a[1] + 1}/{len(shards)}")
    else:
        with ProcessPoolExecutor(workers) as pool:
            for a, res in zip(todo, pool.map(_render_shard, todo)):
                save(a, res)
                log(f"  rendered shard {a[1] + 1}/{len(shards)}")


def load_scenes(out_dir: Path) -> SceneSet:
    files = sorted(out_dir.glob("shard*.npz"))
    files = [f for f in files if ".tmp" not in f.name]
    if not files:
        raise FileNotFoundError(f"no rendered scenes in {out_dir}")
    # Fill one preallocated array: concatenating shard arrays would need twice
    # the memory (the full data set is several GB).
    counts = []
    for f in files:
        with np.load(f) as z:
            counts.append(len(json.loads(str(z["ann"]))))
            shape = z["images"].shape[1:]
    images = np.empty((sum(counts), *shape), np.uint8)
    recs: list[list[dict]] = []
    at = 0
    for f, k in zip(files, counts):
        with np.load(f) as z:
            images[at:at + k] = z["images"]
            recs.extend(json.loads(str(z["ann"])))
        at += k
    return SceneSet(images, recs)


# ---------------------------------------------------------------------------
# Detector targets


def detector_targets(recs: list[dict], height: int, width: int, x0: int = 0, y0: int = 0,
                     scale: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Targets for one (cropped, scaled) image of size ``height x width``.

    Returns (heat, heat_weight, reg, reg_weight) on the DET_STRIDE grid:
    heat is a Gaussian peak per readable index; heat_weight is 0 around
    indices that are partly hidden (neither clearly present nor absent);
    reg holds the regression channels (DET_CHANNELS[1:]) near each peak.
    ``x0, y0`` crop offset and ``scale`` map record coordinates into the image.
    """
    gh, gw = height // DET_STRIDE, width // DET_STRIDE
    heat = np.zeros((gh, gw), np.float32)
    hw = np.ones((gh, gw), np.float32)
    reg = np.zeros((8, gh, gw), np.float32)
    rw = np.zeros((gh, gw), np.float32)
    ys, xs = np.mgrid[0:gh, 0:gw].astype(np.float32)
    for r in recs:
        cx = (r["cx"] * scale - x0) / DET_STRIDE - 0.5  # in cell units; cell j centre at j
        cy = (r["cy"] * scale - y0) / DET_STRIDE - 0.5
        h = r["h"] * scale
        hc = h / DET_STRIDE
        sigma = max(0.7, 0.2 * hc)
        rad = int(3 * sigma) + 2
        jx0, jx1 = max(0, int(cx) - rad), min(gw, int(cx) + rad + 2)
        jy0, jy1 = max(0, int(cy) - rad), min(gh, int(cy) + rad + 2)
        if jx1 <= jx0 or jy1 <= jy0:
            continue
        d2 = (xs[jy0:jy1, jx0:jx1] - cx) ** 2 + (ys[jy0:jy1, jx0:jx1] - cy) ** 2
        g = np.exp(-d2 / (2 * sigma ** 2))
        if r["visible"] >= READABLE_FRACTION:
            heat[jy0:jy1, jx0:jx1] = np.maximum(heat[jy0:jy1, jx0:jx1], g)
            # The cell nearest the centre is the positive (focal loss counts cells at exactly 1).
            px, py = int(round(cx)), int(round(cy))
            if 0 <= px < gw and 0 <= py < gh:
                heat[py, px] = 1.0
            near = g > 0.35
            a = math.radians(r["angle"])
            right, down = glyph_axes(r["angle"])
            dx, dy = r["card_cx"] - r["cx"], r["card_cy"] - r["cy"]
            u = (dx * right[0] + dy * right[1]) / r["h"]
            v = (dx * down[0] + dy * down[1]) / r["h"]
            vals = [math.cos(a), math.sin(a), math.log(h / H_REF), u, v, math.log(r["card_h"] / r["h"])]
            sub = reg[:, jy0:jy1, jx0:jx1]
            for c, val in enumerate(vals):
                sub[c][near] = val
            sub[6][near] = (cx - xs[jy0:jy1, jx0:jx1])[near]
            sub[7][near] = (cy - ys[jy0:jy1, jx0:jx1])[near]
            rw[jy0:jy1, jx0:jx1][near] = np.maximum(rw[jy0:jy1, jx0:jx1][near], g[near])
        elif r["visible"] >= HIDDEN_FRACTION:
            hw[jy0:jy1, jx0:jx1][g > 0.1] = 0.0
    # A readable peak wins over a neighbouring "don't care" zone.
    hw[heat > 0.1] = 1.0
    return heat, hw, reg, rw


# ---------------------------------------------------------------------------
# Classifier crops


def _suit_label(r: dict, hidden_pip_below: float, keep_colour: bool = False) -> int:
    """The suit label of readable index record ``r``: its card's suit, or, when less than
    ``hidden_pip_below`` of its pip shows, :data:`SUIT_HIDDEN` (any suit) or with
    ``keep_colour`` :data:`SUIT_HIDDEN_RED` or :data:`SUIT_HIDDEN_BLACK` (records rendered
    before the renderer measured the pip count as showing it whole).

    >>> r = {"card": "QH", "pip_visible": 0.2}
    >>> _suit_label(r, 0.0), _suit_label(r, 0.5), _suit_label(r, 0.5, keep_colour=True)
    (2, -2, -4)
    """
    suit = r["card"][-1]
    if r.get("pip_visible", 1.0) < hidden_pip_below:
        if keep_colour:
            return SUIT_HIDDEN_RED if suit in "DH" else SUIT_HIDDEN_BLACK
        return SUIT_HIDDEN
    return SUITS.index(suit)


def _rank_label(r: dict, hidden_rank_below: float) -> int:
    """The rank label of readable index record ``r``: its card's rank (0..12), or
    :data:`RANK_HIDDEN` when less than ``hidden_rank_below`` of its rank glyph shows
    (records rendered before the renderer measured the rank count as showing it whole).

    >>> r = {"card": "10H", "rank_visible": 0.3}
    >>> _rank_label(r, 0.0), _rank_label(r, 0.5), _rank_label({"card": "10H"}, 0.5)
    (9, -2, 9)
    """
    if r.get("rank_visible", 1.0) < hidden_rank_below:
        return RANK_HIDDEN
    return RANKS.index(r["card"][:-1])


def classifier_crops(scenes: SceneSet, seed: int, jitter_copies: int = 2, negatives_per_image: int = 4,
                     hidden_pip_below: float = 0.0, keep_colour: bool = False, hidden_rank_below: float = 0.0
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Index crops with labels: (X uint8 N x PATCH_H x PATCH_W x 3, rank 0..13, suit 0..3 or -1).

    Positives: readable indices, cut with jitter in position, angle and size
    like the detector's own errors.  Negatives (rank = NOT_INDEX): the same
    indices turned 90 or 180 degrees (an upside-down 6 is a 9: the classifier
    must refuse, not guess), hidden indices, and random spots on the
    table and inside cards (pips, court art, clutter, newspaper print).
    A readable index with less than ``hidden_pip_below`` of its pip showing
    gets the suit label :data:`SUIT_HIDDEN` (0, the default: never), or with ``keep_colour``
    the one of its colour (:func:`_suit_label`); one with less than ``hidden_rank_below`` of
    its rank showing, the rank label :data:`RANK_HIDDEN` (:func:`_rank_label`).
    """
    rng = np.random.default_rng(seed)
    X, R, S = [], [], []
    for img, recs in zip(scenes.images, scenes.indices):
        H, W = img.shape[:2]
        for r in recs:
            if r["h"] < MIN_READ_HEIGHT:
                continue  # too few pixels to read after blur and JPEG: a label here would be noise
            if r["visible"] >= READABLE_FRACTION:
                rank, suit = _rank_label(r, hidden_rank_below), _suit_label(r, hidden_pip_below, keep_colour)
                for k in range(jitter_copies):
                    X.append(_jittered_crop(img, r, k, rng))
                    R.append(rank)
                    S.append(suit)
                if rng.random() < 0.5:
                    turn = float(rng.choice([90.0, 180.0, 270.0]))
                    X.append(crop_index(img, (r["cx"], r["cy"]), r["angle"] + turn + rng.normal(0, 8), r["h"]))
                    R.append(NOT_INDEX)
                    S.append(-1)
            elif r["visible"] < HIDDEN_FRACTION * 0.5 and 0 <= r["cx"] < W and 0 <= r["cy"] < H:
                X.append(crop_index(img, (r["cx"], r["cy"]), r["angle"], r["h"]))
                R.append(NOT_INDEX)
                S.append(-1)
        hs = [r["h"] for r in recs] or [20.0]
        for k in range(negatives_per_image):
            h = float(rng.choice(hs)) * math.exp(rng.normal(0, 0.2))
            if k % 2 == 0 and recs:
                # Inside a card, away from its index: pips and court art.
                r = recs[int(rng.integers(len(recs)))]
                t = rng.uniform(0.25, 0.75)
                c = (r["cx"] + (r["card_cx"] - r["cx"]) * 2 * t + rng.normal(0, 0.1) * r["card_h"],
                     r["cy"] + (r["card_cy"] - r["cy"]) * 2 * t + rng.normal(0, 0.1) * r["card_h"])
            else:
                c = (rng.uniform(0, W), rng.uniform(0, H))
            if any((c[0] - r["cx"]) ** 2 + (c[1] - r["cy"]) ** 2 < (0.6 * r["h"]) ** 2 for r in recs):
                continue
            X.append(crop_index(img, c, rng.uniform(0, 360), h))
            R.append(NOT_INDEX)
            S.append(-1)
    return np.stack(X), np.array(R, np.int64), np.array(S, np.int64)


def _jittered_crop(img: np.ndarray, r: dict, k: int, rng: np.random.Generator) -> np.ndarray:
    """The ``k``-th jittered classifier crop of index record ``r`` (:data:`JITTER`)."""
    j, ja, js = JITTER[min(k, len(JITTER) - 1)]
    c = (r["cx"] + rng.normal(0, j) * r["h"], r["cy"] + rng.normal(0, j) * r["h"])
    return crop_index(img, c, r["angle"] + rng.normal(0, ja), r["h"] * math.exp(rng.normal(0, js)))


def covered_crops(scenes: SceneSet, seed: int, partly_covered_copies: int, more_covered_copies: int = 0,
                  more_covered_from: float = MORE_COVERED_FROM, hidden_pip_below: float = 0.0,
                  keep_colour: bool = False, hidden_rank_below: float = 0.0
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """More positive crops of the indices that another card partly covers, labelled with their card.

    Cards whose only readable index is partly covered are where the recogniser
    loses most (docs/vision-experiments.md, session 20): a third of those whose
    index shows 85 to 95% are missed, against about 1% of those whose index
    shows whole, yet such indices are a few in a hundred of the positives
    :func:`classifier_crops` cuts.  This adds ``partly_covered_copies`` jittered crops
    of each readable index that is partly covered (visible from
    READABLE_FRACTION up to :data:`PARTLY_COVERED_BELOW`) and ``more_covered_copies``
    of each index covered more (visible from ``more_covered_from`` up to
    READABLE_FRACTION: not required of the recogniser, but still legible), so
    that the classifier learns to read past the edge of a card lying over an
    index.  Same return value as :func:`classifier_crops` (``hidden_pip_below``,
    ``keep_colour`` and ``hidden_rank_below`` too);
    empty when there are none.
    """
    rng = np.random.default_rng(seed)
    X, R, S = [], [], []
    for img, recs in zip(scenes.images, scenes.indices):
        for r in recs:
            if r["h"] < MIN_READ_HEIGHT:
                continue
            if READABLE_FRACTION <= r["visible"] < PARTLY_COVERED_BELOW:
                copies = partly_covered_copies
            elif more_covered_from <= r["visible"] < READABLE_FRACTION:
                copies = more_covered_copies
            else:
                continue
            for k in range(copies):
                X.append(_jittered_crop(img, r, k, rng))
                R.append(_rank_label(r, hidden_rank_below))
                S.append(_suit_label(r, hidden_pip_below, keep_colour))
    if not X:
        return np.zeros((0, PATCH_H, PATCH_W, 3), np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.stack(X), np.array(R, np.int64), np.array(S, np.int64)


def detector_crops(scenes: SceneSet, detections: list[list], seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Index crops cut where the trained detector looks, labelled from the annotation.

    ``detections`` holds, per scene, the detector's index readings
    (:func:`vision.recogniser.decode_indices`: ``centre``, ``angle``,
    ``height``).  The jittered crops of :func:`classifier_crops` imitate the
    detector's errors; these crops *are* its errors, including the large ones
    it makes where cards overlap, which is where unseen designs were read
    with too little confidence.  The detector's false alarms (a lone pip, a
    court figure's detail) become "not an index" examples.

    A detection on a readable index (centre within half an index height) is
    a positive when its angle is within 30 degrees of the truth and a
    refusal when it is 60 or more off (a sideways or upside-down index);
    one on a hidden index, or far from every index, is a refusal; anything
    in between (a half-hidden index, a middling angle) is left out rather
    than given a doubtful label.  Each crop gets the small angle and size
    jitter of the views the recogniser reads.
    """
    rng = np.random.default_rng(seed)
    X, R, S = [], [], []
    for img, recs, dets in zip(scenes.images, scenes.indices, detections):
        for d in dets:
            near = min(recs, key=lambda r: (d.centre[0] - r["cx"]) ** 2 + (d.centre[1] - r["cy"]) ** 2,
                       default=None)
            dist = math.dist(d.centre, (near["cx"], near["cy"])) / near["h"] if near else math.inf
            label = None
            if dist <= 0.5:
                turn = abs((d.angle - near["angle"] + 180.0) % 360.0 - 180.0)
                if near["visible"] >= READABLE_FRACTION and near["h"] >= MIN_READ_HEIGHT:
                    if turn <= 30.0 and abs(math.log(d.height / near["h"])) <= 0.7:
                        label = (RANKS.index(near["card"][:-1]), SUITS.index(near["card"][-1]))
                    elif turn >= 60.0:
                        label = (NOT_INDEX, -1)
                elif near["visible"] < HIDDEN_FRACTION * 0.5:
                    label = (NOT_INDEX, -1)
            elif dist > 1.0:
                label = (NOT_INDEX, -1)
            if label is None:
                continue
            X.append(crop_index(img, d.centre, d.angle + rng.normal(0, 4.0), d.height * math.exp(rng.normal(0, 0.06))))
            R.append(label[0])
            S.append(label[1])
    if not X:
        return np.zeros((0, PATCH_H, PATCH_W, 3), np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.stack(X), np.array(R, np.int64), np.array(S, np.int64)


# ---------------------------------------------------------------------------
# Refiner samples

#: Indices at least this visible teach the refiner: a partly covered index
#: still shows where it is, and overlaps are where the detector errs most.
REFINE_MIN_VISIBLE = 0.6


def refiner_samples(scenes: SceneSet, detections: list[list], seed: int, jitter_copies: int = 2
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Crops for the index refiner with their targets: (X uint8 N x REFINE_PATCH_H
    x REFINE_PATCH_W x 3, Y float32 N x 4, see :func:`vision.index_geometry.refine_target`).

    Two kinds of crop, both labelled with the annotated geometry of the
    index: ``jitter_copies`` per index cut at a random error (up to about a
    third of the index height, 30 degrees, 40% in size), and one at every
    detection of ``detections`` (per scene, as
    :func:`vision.recogniser.decode_indices` returns them) that lies on an
    index: the detector's real errors, largest where cards overlap.
    """
    rng = np.random.default_rng(seed)
    window, patch = (REFINE_WINDOW_W, REFINE_WINDOW_H), (REFINE_PATCH_W, REFINE_PATCH_H)
    X, Y = [], []

    def add(img, at, r):
        X.append(crop_index(img, at[0], at[1], at[2], window, patch))
        Y.append(refine_target(at, ((r["cx"], r["cy"]), r["angle"], r["h"])))

    for img, recs, dets in zip(scenes.images, scenes.indices, detections):
        usable = [r for r in recs if r["visible"] >= REFINE_MIN_VISIBLE and r["h"] >= MIN_READ_HEIGHT]
        for r in usable:
            for _ in range(jitter_copies):
                off = np.clip(rng.normal(0, 0.12, 2), -0.35, 0.35) * r["h"]
                turn = float(np.clip(rng.normal(0, 12.0), -30.0, 30.0))
                size = math.exp(float(np.clip(rng.normal(0, 0.15), -0.4, 0.4)))
                add(img, ((r["cx"] + off[0], r["cy"] + off[1]), r["angle"] + turn, r["h"] * size), r)
        for d in dets:
            r = min(usable, key=lambda r: (d.centre[0] - r["cx"]) ** 2 + (d.centre[1] - r["cy"]) ** 2, default=None)
            if r is None or math.dist(d.centre, (r["cx"], r["cy"])) > 0.5 * r["h"]:
                continue
            turn = abs((d.angle - r["angle"] + 180.0) % 360.0 - 180.0)
            if turn <= 35.0 and abs(math.log(d.height / r["h"])) <= 0.5:
                add(img, (d.centre, d.angle, d.height), r)
    if not X:
        return np.zeros((0, REFINE_PATCH_H, REFINE_PATCH_W, 3), np.uint8), np.zeros((0, 4), np.float32)
    return np.stack(X), np.array(Y, np.float32)
