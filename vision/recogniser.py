"""Recognise the playing cards in one image: rank, suit, confidence and box per card.

    from vision.recogniser import Recogniser
    rec = Recogniser()                      # loads vision/models/*.onnx (onnxruntime, or cv2.dnn)
    result = rec.recognise(cv2.imread("table.jpg"))
    for c in result.cards:   print(c.card, c.confidence, c.box)    # "10H" 0.99 (x1, y1, x2, y2)
    for u in result.unknown: print("unreadable card at", u.box)

How (see docs/vision.md): a small fully-convolutional detector finds printed
corner indices (rank glyph above suit pip) at any rotation and says, for each,
its angle, its size and where the centre of its card is; a refiner looks again
at each one and corrects its position, angle and size (the detector errs most
where cards overlap); each index is cut out upright and read by a small
classifier (13 ranks + "not an index", 4 suits; a model may hold an ensemble
of them, trained on different scenes, which read the doubtful indices
together), and one it refuses or doubts
is read again turned a quarter, half and three quarters (the detector now and
then gets an angle that wrong); the detector's weaker peaks are read too, and
count only when read surely; to save time each index is first read from
one crop, those that it does not read clearly from that crop by the other
classifiers too, and only those still unclear from every view; the two indices of one card are paired by
their predicted card centre; a card is reported only when the reading is
confident, otherwise it is reported as unknown with its box (a lone index
only when it surely is one: :data:`UNKNOWN_P_INDEX`). A card appears
once per deck, which is used only to break ties between two readings of the
same card.  Where the table is calibrated and the camera leans well off straight
down, the picture is read turned to straight down (``recognise``'s ``view``,
:mod:`vision.rectify`: the detector reads a turned canvas drawn at its own scale,
each crop is cut from the picture through the turn); a photograph from a level camera of unknown lean is also read
turned at a few leans (:meth:`Recogniser.recognise_level`).

Run time needs numpy and OpenCV, and takes onnxruntime where it is installed
(vision/inference.py: without it OpenCV runs the same networks, slower); no PyTorch.
"""

from __future__ import annotations

import copy
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from vision.inference import EngineError, OnnxNet, resolve_engine
from vision.index_geometry import (CARD_ASPECT, DET_LONG_SIDE, DET_STRIDE, H_REF, MAX_INDEX_SHARE, NOT_INDEX,
                                   PATCH_H, PATCH_W, RANKS, REFINE_ANGLE_UNIT, REFINE_PATCH_H, REFINE_PATCH_W,
                                   REFINE_WINDOW_H, REFINE_WINDOW_W, SUITS, WINDOW_H, WINDOW_W, apply_refinement,
                                   card_outline, crop_views, glyph_axes, outline_box, standardise_crops)
from vision.rectify import LEVEL_FOV, PlaneView, level_view

MODEL_DIR = Path(__file__).resolve().parent / "models"
CARD_NAMES = [r + s for r in RANKS for s in SUITS]  # rank-major, matches the outer product below
#: Default crops read per index: as detected and turned +-7 degrees (model.json may override).
VIEWS = ((0.0, 1.0), (7.0, 1.0), (-7.0, 1.0))
#: The largest correction the refiner may make in one step (position in index
#: heights, angle in REFINE_ANGLE_UNIT, log size): what it was trained on.
REFINE_LIMITS = np.array([0.5, 0.5, 35.0 / REFINE_ANGLE_UNIT, 0.5])
#: A second look's reading (an index turned, or a weak peak) must be this sure
#: that it is an index at all to count: every right one measured was (seed
#: 99), some wrong ones were not.
SURE_P_INDEX = 0.995
#: Screening (:meth:`Recogniser.classify_screened`): a first reading from one view is kept
#: as it is when it is at least this sure that it is an index, and reads its
#: card at the model's ``screen_clear`` or more.
CLEAR_P_INDEX = 0.99
#: ... or refuses it this surely (every view then refused it too on seed 99).
CLEAR_REFUSAL = 0.05
#: The second look turned (:meth:`Recogniser.look_turned`) refines only the turns that one
#: view, cut as turned, calls an index at least this likely: 16% of the turns on seed 99,
#: every one that replaced a reading among them; both validation seeds read the same.
TURN_SCREEN = 0.1
#: Pairing two indices into one card (:meth:`Recogniser._pair_distance`): the least
#: turn between their glyphs, with and without a refiner, and the least distance
#: between them in guessed card heights, for readings of different cards and of the same.
PAIR_MIN_TURN, PAIR_MIN_TURN_UNREFINED = 165.0, 140.0
PAIR_APART, PAIR_APART_SAME = 0.6, 0.4
#: An unknown box that overlaps a card read this much (intersection over union) is not reported.
SAME_PLACE_IOU = 0.5
#: A lone index that cannot be read is reported as unknown only when it is at least this
#: sure that it is an index at all.  Below it lie most unknowns on no card at all (a
#: newspaper's letter, a cloth's dots, court art whose guessed card sticks out past its
#: own): on the held-out designs of seeds 7, 99, 123 and 1, 0.8 keeps 13 of 33 such
#: boxes, 52 of the 55 on readable cards missed, 293 of 322 on half-hidden ones.
UNKNOWN_P_INDEX = 0.8
#: The detector's input, centred (``det_input`` "centred" in model.json): each 0..1
#: value ``x`` becomes ``(x - DET_CENTRE) * DET_GAIN``, what the training network's
#: first layer does (``vision.training.models.Normalise``).
DET_CENTRE, DET_GAIN = 0.5, 4.0
#: What a detector may take (``det_input`` in model.json): 0..1 values, the
#: normalisation inside its graph (models before session 26), or centred here.
DET_INPUTS = ("unit", "centred")
#: A dark picture is brightened before it is read: when its bright end (the 99.5th
#: percentile of each pixel's brightest channel, every 4th pixel) lies under
#: EXPOSE_TARGET, every pixel is scaled up to bring it there, by at most EXPOSE_MAX_GAIN.
#: Card paper is the brightest thing on most tables, so this is the exposure a camera's
#: own automatic gain would have chosen.  The training scenes are lit at 0.6 to 1.6 of a
#: normal light, and the detector misses indices darker than that: on 160 scenes lit at a
#: third (bench/bench_view.py's ``dim``) it reads 95.97% of the cards instead of 91.55,
#: none wrong (docs/vision-experiments.md, session 49).
EXPOSE_TARGET, EXPOSE_MAX_GAIN = 235.0, 4.0
#: A picture turned to straight down (:meth:`Recogniser.recognise`'s ``view``) reports a card
#: only at this confidence or more (or the model's ``accept_threshold``, where that is higher).
#: A turned picture is resampled, its far side stretched out of fewer pixels, and a reading
#: there is less often right at the same confidence: at 45 degrees, bench_view's seed 8 read
#: 13 wrong cards in 1090 at 0.75, 4 at 0.85, for 1.7 points of recall (docs/vision-experiments.md,
#: session 50).  A photograph of unknown lean (:meth:`Recogniser.recognise_level`) is held to it
#: as it is too: its indices may be squeezed by a lean nobody measured, and a squeezed index is
#: read surely as another card more often (a club as a spade, a 6 as an 8).  On bench_view's
#: seeds 8 and 21 at 45 degrees the level reading named 13 wrong cards at 0.75 as it is, 6 at
#: 0.85, for 0.3 points of recall (session 55).
VIEW_ACCEPT = 0.85
#: The leans a picture from a level camera of unknown lean is tried at, turned to straight
#: down (:meth:`Recogniser.recognise_level`), besides as it is.
LEVEL_LEANS = (20.0, 30.0, 40.0, 50.0)
#: A large picture (a phone's photograph: 4032 x 3024) is read halved, and halved again, while its
#: long side is at least this many times the detector's input (:func:`halvings`: 2560 px and
#: more for the usual 640, so that 1280 px or more are left).  The detector sees every picture at its own 640 px
#: anyway, and the classifiers read each index at 32 px a height, so the pixels past that
#: only cost time: every crop blurs them away before it shrinks them.  Rendered tables read as
#: well at 640 x 360 as at 1280 x 720 (docs/vision.md, "A picture of fewer pixels"); this
#: keeps twice the detector's pixels, the same margin.
HALVE_FROM = 4
#: A turn's reading in :meth:`Recogniser.recognise_level` is kept only where the indices read
#: surely (:data:`SURE_SIZE`) spread in size (the variance of their log heights) at most this
#: many times as much as in the picture as it is; where either reading has fewer than three
#: such indices, there is nothing to compare and the turn is not held back.  Two overhead
#: pictures of bench_view's seed 8 that a turn read with a card more, a wrong one, spread 6
#: and 3.5 times as much (session 51); with each turn's crops cut from the picture (session 52),
#: scene 223's turn as for 20 degrees still read a wrong card more, its sizes spread about 4 times;
#: the classifiers tuned in session 54 read none of seed 8's overhead scenes wrong that way.
LEVEL_SIZE_SPREAD = 1.5
#: An index is read surely, for its size to count, at this p_index and card probability or more.
SURE_SIZE = 0.9


@dataclass(frozen=True)
class CardReading:
    card: str                       # "10H", "QS", ... (referee/cards.py notation)
    confidence: float               # 0..1
    box: tuple[int, int, int, int]  # x1, y1, x2, y2 in image pixels

    def to_dict(self) -> dict:
        return {"card": self.card, "confidence": round(float(self.confidence), 4), "box": list(self.box)}


@dataclass(frozen=True)
class UnknownCard:
    box: tuple[int, int, int, int]

    def to_dict(self) -> dict:
        return {"box": list(self.box)}


@dataclass
class Recognition:
    cards: list[CardReading] = field(default_factory=list)
    unknown: list[UnknownCard] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"cards": [c.to_dict() for c in self.cards], "unknown": [u.to_dict() for u in self.unknown]}


@dataclass
class IndexReading:
    """One detected corner index and what the classifier made of it (image pixels)."""

    centre: tuple[float, float]
    angle: float
    height: float
    card_centre: tuple[float, float]
    card_height: float
    heat: float
    p_index: float = 0.0
    probs: np.ndarray | None = None  # 52 card probabilities (rank-major, CARD_NAMES order)

    @property
    def best(self) -> tuple[str, float]:
        """The most probable card and its probability, e.g. ``("10H", 0.98)``."""
        # Asked for about a hundred times an image (screens, pairing, boxes): kept
        # beside the probabilities it was found in, and found again when they change.
        if self.probs is None:
            raise ValueError("this index has not been read yet: it has no card probabilities")
        probs, best = self.__dict__.get("_best", (None, None))
        if probs is not self.probs:
            k = int(np.argmax(self.probs))
            probs, best = self.probs, (CARD_NAMES[k], float(self.probs[k]))
            self.__dict__["_best"] = (probs, best)
        return best


class ModelError(RuntimeError):
    """The model files are missing or unusable."""


def _size_spread(indices: list[IndexReading]) -> float | None:
    """The variance of the log heights of the indices read surely (:data:`SURE_SIZE`), or None
    for fewer than three."""
    sizes = [math.log(ix.height) for ix in indices
             if ix.probs is not None and ix.p_index >= SURE_SIZE and ix.best[1] >= SURE_SIZE and ix.height > 0]
    return float(np.var(sizes)) if len(sizes) >= 3 else None


def _as_bgr(image: np.ndarray) -> np.ndarray:
    if not isinstance(image, np.ndarray):
        raise TypeError(f"expected a numpy image, got {type(image).__name__}")
    if image.dtype != np.uint8:
        raise ValueError(f"expected an 8-bit image, got dtype {image.dtype}")
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.ndim == 3 and image.shape[2] == 3:
        return image
    if image.ndim == 3 and image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    raise ValueError(f"expected a BGR, BGRA or grey image, got shape {image.shape}")


@dataclass(frozen=True)
class TurnedPicture:
    """A picture read as turned to straight down by ``view`` (:meth:`Recogniser.recognise`'s
    ``view``), without drawing the whole canvas: the readings' geometry is the canvas's
    (:class:`vision.rectify.PlaneView`), and each crop is cut straight from ``picture`` through
    the turn near its index (:func:`vision.index_geometry.crop_views`'s ``through``).  The
    networks see each index as the canvas would show it, resampled once instead of twice."""

    picture: np.ndarray
    view: PlaneView


def _source(image) -> np.ndarray | TurnedPicture:
    """What the reading stages cut their crops from: a BGR picture, or a :class:`TurnedPicture`."""
    return image if isinstance(image, TurnedPicture) else _as_bgr(image)


def _cut(src: np.ndarray | TurnedPicture, ix: IndexReading, views, window=(WINDOW_W, WINDOW_H),
         patch=(PATCH_W, PATCH_H)) -> list[np.ndarray]:
    """One index's crops from each of ``views``, out of a picture or through a turn."""
    if isinstance(src, TurnedPicture):
        return crop_views(src.picture, ix.centre, ix.angle, ix.height, views, window, patch,
                          through=src.view.canvas_to_picture)
    return crop_views(src, ix.centre, ix.angle, ix.height, views, window, patch)


def exposed(image: np.ndarray) -> np.ndarray:
    """``image`` (BGR uint8) brightened so that its bright end reaches :data:`EXPOSE_TARGET`,
    by at most :data:`EXPOSE_MAX_GAIN`; ``image`` itself when it is bright enough already
    (a picture is never darkened).

    >>> dark = np.full((40, 40, 3), 100, np.uint8)
    >>> int(exposed(dark)[0, 0, 0]), int(exposed(dark // 5)[0, 0, 0])   # 2.35 times; 11.75 capped at 4
    (235, 80)
    >>> bright = np.full((40, 40, 3), 240, np.uint8)
    >>> exposed(bright) is bright
    True
    """
    every4 = image[::4, ::4]
    # (cv2.max over the three channels: the same values as numpy's max(axis=2), a tenth of the time)
    brightest = cv2.max(cv2.max(every4[:, :, 0], every4[:, :, 1]), every4[:, :, 2])
    top = float(np.percentile(brightest, 99.5))
    gain = min(EXPOSE_MAX_GAIN, EXPOSE_TARGET / max(top, 1.0))
    return image if gain <= 1.0 else cv2.convertScaleAbs(image, alpha=gain)


def halvings(size: tuple[int, int], long_side: int = DET_LONG_SIDE) -> int:
    """How many times a picture of ``size`` (width, height) is halved before it is read: as
    often as its long side stays at least :data:`HALVE_FROM` / 2 times the detector's ``long_side``
    after it, and its short side a pixel (a strip too thin to read stays as it is).

    >>> halvings((4032, 3024)), halvings((2559, 1440)), halvings((2560, 1440)), halvings((8064, 6048))
    (1, 0, 1, 2)
    >>> halvings((2600, 1)), halvings((2600, 2))
    (0, 1)
    """
    n, long, short = 0, max(size), min(size)
    while long >= HALVE_FROM * long_side and short >= 2:
        long, short = long // 2, short // 2
        n += 1
    return n


def halve(image: np.ndarray) -> np.ndarray:
    """``image`` at half its size: each 2 x 2 block of pixels the mean of its four (an odd last row
    or column dropped), which ``cv2.INTER_AREA`` computes fast at exactly a half.

    >>> img = np.zeros((5, 7, 3), np.uint8); img[0, 0] = 200
    >>> small = halve(img)
    >>> small.shape, int(small[0, 0, 0])
    ((2, 3, 3), 50)
    """
    h, w = image.shape[0] // 2, image.shape[1] // 2
    if h < 1 or w < 1:
        raise ValueError(f"a picture of {image.shape[1]} x {image.shape[0]} pixels cannot be halved")
    return cv2.resize(image[:2 * h, :2 * w], (w, h), interpolation=cv2.INTER_AREA)


def grown(found: Recognition, factor: int, size: tuple[int, int], small: tuple[int, int]) -> Recognition:
    """``found``, read on a picture of ``small`` (width, height) made ``factor`` times smaller than
    one of ``size`` (2 for one halving, 4 for two), with its boxes in the picture's pixels: a box
    that reaches the small picture's right or bottom edge reaches the picture's (whose last odd
    rows and columns were dropped).

    >>> found = Recognition([CardReading("QS", 0.9, (10, 0, 30, 20))], [UnknownCard((0, 5, 50, 25))])
    >>> grown(found, 2, (101, 51), (50, 25)).to_dict()["unknown"]
    [{'box': [0, 10, 101, 51]}]
    """
    def grow(box):
        # (A box's edges, whole pixels: the small picture's pixel x covers the picture's factor * x
        # to factor * x + factor - 1, so its edge x lies at factor * x.)
        x1, y1, x2, y2 = (v * factor for v in box)
        return (x1, y1, size[0] if box[2] >= small[0] else x2, size[1] if box[3] >= small[1] else y2)
    return Recognition([CardReading(c.card, c.confidence, grow(c.box)) for c in found.cards],
                       [UnknownCard(grow(u.box)) for u in found.unknown])


def _move(ix: IndexReading, centre: tuple[float, float], angle: float, height: float) -> None:
    """Put a reading's index at ``centre``, ``angle`` and ``height``; its card
    centre and card height move with it, keeping their place in the index's
    own frame (the detector estimates them relative to the index)."""
    right, down = glyph_axes(ix.angle)
    dx, dy = ix.card_centre[0] - ix.centre[0], ix.card_centre[1] - ix.centre[1]
    u = (dx * right[0] + dy * right[1]) / ix.height
    v = (dx * down[0] + dy * down[1]) / ix.height
    card_share = ix.card_height / ix.height
    ix.centre, ix.angle, ix.height = centre, angle, height
    right, down = glyph_axes(angle)
    ix.card_centre = (centre[0] + (u * right[0] + v * down[0]) * height,
                      centre[1] + (u * right[1] + v * down[1]) * height)
    ix.card_height = card_share * height


def _worth_all_views(ix: IndexReading) -> bool:
    """Whether a second look's reading from one view (:meth:`Recogniser.classify`
    with the first view only) calls it an index and reads it fairly well: only
    such a reading is worth the time of every view."""
    return ix.p_index >= 0.9 and ix.best[1] >= 0.6


def _is_sure(ix: IndexReading, accept: float) -> bool:
    """Whether a second look's reading, from every view, counts: surely an index, read at ``accept``."""
    return ix.p_index >= SURE_P_INDEX and ix.best[1] >= accept


def _score(ix: IndexReading) -> float:
    """How well a classified reading reads: its best card's probability, 0 when refused."""
    return ix.best[1] if ix.p_index >= 0.5 else 0.0


def _overlap(a: tuple, b: tuple) -> float:
    """Intersection over union of two boxes (x1, y1, x2, y2)."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return w * h / union


def _views_together(first: np.ndarray, rest: np.ndarray, members: int) -> np.ndarray:
    """Readings of the first view (indices x members x classes) and of the other views (indices x
    (members x views) x classes) as one array, each member's views together, the first view first.

    >>> first, rest = np.array([[[1], [2]]]), np.array([[[11], [12], [21], [22]]])
    >>> _views_together(first, rest, 2)[0, :, 0].tolist()
    [1, 11, 12, 2, 21, 22]
    """
    n, classes = first.shape[0], first.shape[-1]
    return np.concatenate([first.reshape(n, members, 1, classes), rest.reshape(n, members, -1, classes)],
                          axis=2).reshape(n, -1, classes)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def detector_input(image: np.ndarray, long_side: int) -> tuple[np.ndarray, float, tuple[int, int]]:
    """The image as the detector takes it: scaled so its longer side is ``long_side``
    and padded to a multiple of 16.  Returns it, the scale, and the (rows, columns)
    of the output grid that cover the image (the rest covers the padding)."""
    H, W = image.shape[:2]
    s = long_side / max(H, W)
    w, h = max(16, int(round(W * s))), max(16, int(round(H * s)))
    # The network halves the size four times; pad to a multiple of 16 so its skip additions line up.
    ph, pw = (-h) % 16, (-w) % 16
    interpolation = cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR
    if not (ph or pw):
        return (image if (w, h) == (W, H) else cv2.resize(image, (w, h), interpolation=interpolation),
                s, (h // DET_STRIDE, w // DET_STRIDE))
    # Scaled straight into the padded picture, whose border then repeats the last row
    # and column (cv2.BORDER_REPLICATE's pixels, without copying the picture again).
    small = np.empty((h + ph, w + pw) + image.shape[2:], np.uint8)
    inner = small[:h, :w]
    if (w, h) == (W, H):
        inner[...] = image
    else:
        scaled = cv2.resize(image, (w, h), dst=inner, interpolation=interpolation)
        if not np.shares_memory(scaled, small):   # (OpenCV wrote elsewhere: take its result)
            inner[...] = scaled
    small[h:, :w] = small[h - 1:h, :w]
    small[:, w:] = small[:, w - 1:w]
    return small, s, (h // DET_STRIDE, w // DET_STRIDE)


#: What :func:`detector_blob` writes for each 8-bit value: ``v * (1 / 255)`` in float32, and
#: that centred, ``(x - DET_CENTRE) * DET_GAIN``, the same float32 operations, in the
#: same order, as numpy (or the network's own normalisation) would apply to the image.
_UNIT = np.arange(256, dtype=np.float32) * np.float32(1.0 / 255.0)
_CENTRED = (_UNIT - np.float32(DET_CENTRE)) * np.float32(DET_GAIN)


def detector_blob(small: np.ndarray, centred: bool = False) -> np.ndarray:
    """The detector's input (1 x 3 x h x w, BGR) for an 8-bit BGR image:
    ``cv2.dnn.blobFromImage(small, 1 / 255)`` (0..1), the same numbers in less
    time; ``centred``, then centred as the training network's first layer centres
    it (:data:`DET_CENTRE`, :data:`DET_GAIN`).

    Each channel is looked up in a table of the 256 values (``cv2.LUT``) straight
    into its plane of a C-ordered array, which the engines take without a copy:
    0.45 ms for a 640x368 image, against 0.76 for numpy's multiplication of the
    transposed image and 0.98 with its centring (session 26; blobFromImage took
    3.6 on session 23's machine).  Centring here, not in the network, saves
    onnxruntime's two elementwise passes over the image (1.2 ms); the table holds
    the float32 results of the network's own two operations, so the network sees
    the same numbers bit for bit.
    """
    h, w = small.shape[:2]
    blob = np.empty((1, 3, h, w), np.float32)
    table = _CENTRED if centred else _UNIT
    for k, plane in enumerate(cv2.split(small)):
        cv2.LUT(plane, table, dst=blob[0, k])
    return blob


def decode_indices(out: np.ndarray, scale: float, heat_threshold: float) -> list[IndexReading]:
    """The index readings (geometry only) in one detector output.

    ``out`` is the detector's output for one image (DET_CHANNELS x grid h x
    grid w, raw), ``scale`` how much the image was scaled before the
    detector; the readings are in the unscaled image's pixels, strongest
    first.  Training uses it too, to cut crops where the detector looks.
    """
    heat = 1.0 / (1.0 + np.exp(-out[0]))
    peaks = (heat >= heat_threshold) & (heat >= cv2.dilate(heat, np.ones((3, 3), np.uint8)))
    readings: list[IndexReading] = []
    rows, cols = np.nonzero(peaks)
    strength = heat[rows, cols]
    order = np.argsort(-strength, kind="stable")   # strongest first, ties as found
    rows, cols, strength = rows[order], cols[order], strength[order]
    # Each peak's channels as Python floats, in one call rather than eight per peak.
    for i, j, p, (c, sn, log_h, u, v, log_card, ox, oy) in zip(
            rows.tolist(), cols.tolist(), strength.tolist(), out[1:, rows, cols].T.tolist()):
        angle = math.degrees(math.atan2(sn, c))
        h_det = H_REF * math.exp(min(4.0, max(-3.0, log_h)))
        cx = (j + 0.5 + ox) * DET_STRIDE / scale
        cy = (i + 0.5 + oy) * DET_STRIDE / scale
        hi = h_det / scale
        right, down = glyph_axes(angle)
        ccx = cx + (u * right[0] + v * down[0]) * hi
        ccy = cy + (u * right[1] + v * down[1]) * hi
        card_h = hi * math.exp(min(3.0, max(0.0, log_card)))
        readings.append(IndexReading((cx, cy), angle, hi, (ccx, ccy), card_h, p))
    return _one_per_index(readings)


def _one_per_index(readings: list[IndexReading]) -> list[IndexReading]:
    """Two peaks on one index: keep the stronger.  The readings (strongest first)
    without those whose centre lies within 0.35 index heights (the larger of the
    two) of a stronger reading kept."""
    if len(readings) < 2:
        return readings
    x, y, h = np.array([(r.centre[0], r.centre[1], r.height) for r in readings]).T
    # near[k, m]: reading m, stronger than k, lies on k's index.  Most readings
    # have no such neighbour and are kept without looking at which were kept.
    near = (x[:, None] - x) ** 2 + (y[:, None] - y) ** 2 < (0.35 * np.maximum(h[:, None], h)) ** 2
    near &= np.tri(len(readings), k=-1, dtype=bool)
    kept = ~near.any(axis=1)
    for k in np.flatnonzero(~kept).tolist():   # in order: the stronger ones are settled first
        kept[k] = not (near[k] & kept).any()
    return [r for r, keep in zip(readings, kept.tolist()) if keep]


class Recogniser:
    """Card recogniser backed by small ONNX models: the index detector, the
    refiner (absent from older models) and the classifier.

    ``model_dir`` defaults to the models shipped in the package.  Thresholds
    default to the values in its ``model.json``: ``accept_threshold`` is the
    confidence below which a card is reported as unknown; ``heat_threshold``
    how sure the detector must be that an index is there at all.
    ``engine`` runs the networks (:class:`vision.inference.OnnxNet`: "auto"
    takes onnxruntime where it is installed, else OpenCV's dnn) on up to
    ``threads`` CPU threads (``None``: the engine's default, every core).
    """

    def __init__(self, model_dir: Path | str | None = None, accept_threshold: float | None = None,
                 heat_threshold: float | None = None, engine: str = "auto", threads: int | None = None):
        self.model_dir = Path(model_dir) if model_dir is not None else MODEL_DIR
        meta_path = self.model_dir / "model.json"
        if not meta_path.exists():
            raise ModelError(f"no recogniser model in {self.model_dir} (model.json missing); "
                             f"train one with: python -m vision.training.train")
        try:
            self.meta = json.loads(meta_path.read_text())
        except json.JSONDecodeError as exc:
            raise ModelError(f"{meta_path} is not valid JSON: {exc}") from exc

        def number(key: str, default: float) -> float:
            value = self.meta.get(key, default)
            try:
                return float(value)
            except (TypeError, ValueError):
                raise ModelError(f"{key} in {meta_path} must be a number, got {value!r}") from None

        # An unknown engine name is a ValueError, onnxruntime asked for and missing an
        # EngineError; neither is the model's fault, so neither is a ModelError.
        engine = resolve_engine(engine)

        def net(key: str) -> OnnxNet:
            return OnnxNet(self._model_file(self.meta[key]), engine, threads)

        def nets(key: str) -> list[OnnxNet]:
            # One file, or a list of them: an ensemble whose readings are combined like views.
            names = self.meta[key]
            if isinstance(names, str):
                names = [names]
            if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
                raise ModelError(f"{key} in {meta_path} must be a file name or a list of them, got {names!r}")
            return [OnnxNet(self._model_file(n), engine, threads) for n in names]

        try:
            self.detector = net("detector")
            #: The index classifiers: one, or an ensemble (members trained on
            #: different draws of scenes), each index's reading combining every
            #: member's views.
            self.classifiers = nets("classifier")
            # Older models have no refiner: their indices are read where the detector put them.
            self.refiner = net("refiner") if self.meta.get("refiner") else None
        except (EngineError, KeyError) as exc:
            raise ModelError(f"cannot load the recogniser model from {self.model_dir}: {exc}") from exc
        #: The engine that runs the networks: "onnxruntime" or "opencv".
        self.engine = engine
        self.long_side = int(number("det_long_side", DET_LONG_SIDE))
        #: What the detector takes: "unit" (0..1) or "centred" (:func:`detector_blob`).
        self.det_input = self.meta.get("det_input", "unit")
        if self.det_input not in DET_INPUTS:
            raise ModelError(f"det_input in {meta_path} must be one of {', '.join(DET_INPUTS)}, "
                             f"got {self.det_input!r}")
        self.accept_threshold = float(accept_threshold if accept_threshold is not None
                                      else number("accept_threshold", 0.85))
        self.heat_threshold = float(heat_threshold if heat_threshold is not None
                                    else number("heat_threshold", 0.3))
        #: (angle offset in degrees, size factor) of the crops read per index.
        self.views = [tuple(v) for v in self.meta.get("views", VIEWS)]
        #: How far apart (in card heights) the card centres that two opposite
        #: indices predict may be for them to count as one card.
        self.pair_tolerance = number("pair_tolerance", 0.25)
        #: Two indices whose readings disagree are one card's corners only if their
        #: probabilities overlap at least this much (sum over cards of p1 * p2):
        #: two confident readings of different cards are two cards, however close.
        # (Kept above zero: a pair that shares no probability at all has no product to weigh.)
        self.pair_agreement = max(1e-12, number("pair_agreement", 0.001))
        #: Two indices are opposite corners of one card only when their glyphs are
        #: turned this many degrees or more from each other (180 at best).  The
        #: refiner puts an index's angle right to within about 4 degrees (98th
        #: percentile), so a pile's two cards whose corners lie opposite ways
        #: but a little askew are told apart; the detector's own angles are
        #: looser (about 24 degrees), so a model without a refiner allows more.
        self.pair_min_turn = PAIR_MIN_TURN if self.refiner is not None else PAIR_MIN_TURN_UNREFINED
        #: How the views' probabilities are combined: "geometric" (their product,
        #: renormalised: a class that one view rules out is ruled out, agreeing views
        #: sharpen) or "arithmetic" (their average; older models).
        self.view_mean = self.meta.get("view_mean", "arithmetic")
        if self.view_mean not in ("arithmetic", "geometric"):
            raise ModelError(f"unknown view_mean {self.view_mean!r} in {meta_path}")
        #: How crops are normalised before the classifier ("standardise", or none for older models).
        self.crop_norm = self.meta.get("crop_norm")
        #: How many times the refiner corrects each index (each step cuts a new crop).
        self.refine_steps = int(number("refine_steps", 1)) if self.refiner is not None else 0
        #: Whether refused or doubtful indices are read again turned (:meth:`look_turned`).
        self.turn_retry = self.meta.get("look_turned", False)
        if not isinstance(self.turn_retry, bool):
            raise ModelError(f"look_turned in {meta_path} must be true or false, got {self.turn_retry!r}")
        #: How sure a turned reading must be to replace the reading it was turned from.
        self.turned_accept = number("turned_accept", 0.95)
        #: How many doubtful indices per image get the second look, strongest first.
        self.turned_max = int(number("turned_max", 4))
        if self.turned_max < 0:
            raise ModelError(f"turned_max in {meta_path} must be 0 or more, got {self.turned_max}")
        #: Detector peaks down to this heat get a look of their own (:meth:`look_weak`); 0 = none.
        self.weak_heat = number("weak_heat", 0.0)
        if not 0.0 <= self.weak_heat < 1.0:
            raise ModelError(f"weak_heat in {meta_path} must be from 0 (off) up to below 1, got {self.weak_heat}")
        #: How sure a weak peak's reading must be to count.
        self.weak_accept = number("weak_accept", 0.95)
        #: How many weak peaks per image get that look, strongest first.
        self.weak_max = int(number("weak_max", 4))
        if self.weak_max < 0:
            raise ModelError(f"weak_max in {meta_path} must be 0 or more, got {self.weak_max}")
        #: How sure a reading from the first view alone must be to skip the other views
        #: (:meth:`classify_screened`); 0 = every index is read from every view (older models).
        self.screen_clear = number("screen_clear", 0.0)
        if not 0.0 <= self.screen_clear <= 1.0:
            raise ModelError(f"screen_clear in {meta_path} must be from 0 (off) to 1, got {self.screen_clear}")
        # recognise_level's turns, by picture size, lean and lens (None: past the horizon): made
        # once each; a handful per camera, but one per size for pictures of many sizes
        self._level_views: dict[tuple, PlaneView | None] = {}

    def _model_file(self, name: str) -> Path:
        path = self.model_dir / name
        if not path.is_file():
            raise ModelError(f"cannot load the recogniser model from {self.model_dir}: {path.name} is missing")
        return path

    # -- stage 1: find indices ------------------------------------------------
    def detect_indices(self, image: np.ndarray) -> list[IndexReading]:
        """The indices the detector is sure of (heat at ``heat_threshold`` or more), strongest first."""
        return [ix for ix in self.detect_peaks(image) if ix.heat >= self.heat_threshold]

    def detect_peaks(self, image: np.ndarray, pre_scale: float | None = None) -> list[IndexReading]:
        """Every detector peak down to the weak peaks' threshold (:meth:`look_weak`), strongest first.

        Decoding further down changes nothing above ``heat_threshold``: a
        peak is dropped only beside a stronger one, and those come first.
        The image is scaled so that its longer side is the model's ``det_long_side``, unless
        ``pre_scale`` is given: then it is already drawn at that scale for the detector (a turned
        picture's canvas, :meth:`_read`) and is read at its own size, its readings given in the
        full size's pixels."""
        img = _as_bgr(image)
        H, W = img.shape[:2]
        if min(H, W) < 16:
            return []
        if pre_scale is not None:
            small, s, (gh, gw) = detector_input(img, max(H, W))
            s *= pre_scale
        else:
            small, s, (gh, gw) = detector_input(img, self.long_side)
        out = self.detector(detector_blob(small, self.det_input == "centred"))[0]
        floor = min(self.heat_threshold, self.weak_heat) if self.weak_heat > 0 else self.heat_threshold
        return decode_indices(out[:, :gh, :gw], s, floor)

    # -- stage 2: put them right ----------------------------------------------
    def refine(self, image: np.ndarray | TurnedPicture, indices: list[IndexReading]) -> None:
        """Move each reading's centre, angle and size to where the refiner says
        the index is, in place; its card centre and height move with it.  A
        model without a refiner leaves the readings as they are."""
        if not indices or self.refiner is None:
            return
        img = _source(image)
        window, patch = (REFINE_WINDOW_W, REFINE_WINDOW_H), (REFINE_PATCH_W, REFINE_PATCH_H)
        for _ in range(self.refine_steps):
            crops = [_cut(img, ix, ((0.0, 1.0),), window, patch)[0] for ix in indices]
            blob = standardise_crops(cv2.dnn.blobFromImages(crops, 1.0 / 255.0)).astype(np.float32, copy=False)
            out = np.clip(self.refiner(blob).reshape(len(crops), 4), -REFINE_LIMITS, REFINE_LIMITS)
            for ix, o in zip(indices, out):
                _move(ix, *apply_refinement((ix.centre, ix.angle, ix.height), o))

    # -- stage 3: read them ---------------------------------------------------
    def classify(self, image: np.ndarray | TurnedPicture, indices: list[IndexReading], views=None) -> None:
        """Fill in ``p_index`` and ``probs`` of each reading, in place (from
        ``views``, by default the model's, of every classifier)."""
        if not indices:
            return
        # Each index is read from a few crops that differ by the detector's
        # typical error in angle and size; averaging them makes a reading
        # robust to one unlucky crop and its confidence better calibrated.
        views = self.views if views is None else views
        self._settle(indices, *self._view_probabilities(_source(image), indices, views))

    def first_look(self, image: np.ndarray | TurnedPicture, indices: list[IndexReading]) -> None:
        """Classify the readings, in place, from one view of the first classifier only.

        The cheapest reading: enough to tell the plain indices (read clearly,
        or refused outright) and the promising ones from the rest.
        """
        if indices:
            self._settle(indices, *self._view_probabilities(_source(image), indices, self.views[:1],
                                                            self.classifiers[:1]))

    def classify_screened(self, image: np.ndarray | TurnedPicture, indices: list[IndexReading]) -> None:
        """Classify the readings, in place, from as few views as tell: like :meth:`classify`, but faster.

        Reading every index from every view costs most of the time.  Most
        indices are plain: one view already reads them clearly (at
        ``screen_clear`` or more, surely an index) or refuses them outright,
        and on the validation scenes every view then agreed with it (the
        same card, above ``accept_threshold``).  Those keep their one-view
        reading (:meth:`first_look`); the rest, the doubtful ones where a
        second opinion can tip the balance, are read from that view by the
        other classifiers of an ensemble next, and those that all of them
        together read clearly (by the same rule) keep that reading: on the
        validation scenes (seeds 99 and 123) that settled 28% of the doubtful
        indices, none of them to another decision than every view's.  The
        rest are read from the other views as well (the same reading as
        :meth:`classify` gives them).  A model without ``screen_clear`` in
        its model.json reads every index from every view.
        """
        if not indices:
            return
        if self.screen_clear == 0 or len(self.views) * len(self.classifiers) == 1:
            self.classify(image, indices)
            return
        img = _source(image)
        first, others = self.classifiers[0], self.classifiers[1:]
        first_crops = self._view_crops(img, indices, self.views[:1])
        first_rank, first_suit = self._view_probabilities(img, indices, self.views[:1], [first], first_crops)
        self._settle(indices, first_rank, first_suit)
        doubtful = [k for k, ix in enumerate(indices) if not self._read_clearly(ix)]
        if not doubtful:
            return
        again = [indices[k] for k in doubtful]
        if others:
            # A second screen: the other classifiers read the first view's crop (already cut),
            # and an index that all of them together read clearly keeps that reading.
            second_rank, second_suit = self._view_probabilities(img, again, self.views[:1], others,
                                                                first_crops[doubtful])
            self._settle(again, np.concatenate([first_rank[doubtful], second_rank], axis=1),
                         np.concatenate([first_suit[doubtful], second_suit], axis=1))
            still = [j for j, ix in enumerate(again) if not self._read_clearly(ix)]
            if not still:
                return
            doubtful, again = [doubtful[j] for j in still], [again[j] for j in still]
            second_rank, second_suit = second_rank[still], second_suit[still]
        # Each crop is cut once (cutting is a good part of the time): the first classifier
        # reads the views it has not read yet, the others those too, their first view's
        # reading taken from the second screen.  In the order classify() reads them: the first
        # classifier's views, then the others', each one's views together.
        unread = self._view_crops(img, again, self.views[1:])
        rest_rank, rest_suit = self._view_probabilities(img, again, self.views[1:], [first], unread)
        ranks, suits = [first_rank[doubtful], rest_rank], [first_suit[doubtful], rest_suit]
        if others:
            more_rank, more_suit = self._view_probabilities(img, again, self.views[1:], others, unread)
            ranks.append(_views_together(second_rank, more_rank, len(others)))
            suits.append(_views_together(second_suit, more_suit, len(others)))
        self._settle(again, np.concatenate(ranks, axis=1), np.concatenate(suits, axis=1))

    def _view_crops(self, img: np.ndarray | TurnedPicture, indices: list[IndexReading], views) -> np.ndarray:
        """The classifiers' input: each index's crop from each view (index by index,
        its views together), as a blob (N x C x H x W, float32, normalised)."""
        crops = [crop for ix in indices for crop in _cut(img, ix, views)]
        if not crops:   # (no index, or no view: a model with one view reads no other)
            return np.zeros((0, 3, PATCH_H, PATCH_W), np.float32)
        blob = cv2.dnn.blobFromImages(crops, 1.0 / 255.0)
        if self.crop_norm == "standardise":
            blob = standardise_crops(blob).astype(np.float32, copy=False)
        return blob

    def _view_probabilities(self, img: np.ndarray | TurnedPicture, indices: list[IndexReading], views,
                            classifiers=None, blob: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Rank (with "not an index") and suit probabilities of each index from
        each view by each classifier (by default every one), uncombined: two
        arrays of indices x (classifiers x views) x classes, a classifier's
        views together.  ``blob``: these crops already cut (:meth:`_view_crops`)."""
        classifiers = self.classifiers if classifiers is None else classifiers
        if not classifiers or not views:   # (float32, as the networks': a concatenation keeps its type)
            return (np.zeros((len(indices), 0, NOT_INDEX + 1), np.float32),
                    np.zeros((len(indices), 0, len(SUITS)), np.float32))
        if blob is None:
            blob = self._view_crops(img, indices, views)
        ranks, suits = [], []
        for net in classifiers:
            logits = net(blob).reshape(len(indices), len(views), -1)
            ranks.append(_softmax(logits[..., :NOT_INDEX + 1]))
            suits.append(_softmax(logits[..., NOT_INDEX + 1:]))
        return np.concatenate(ranks, axis=1), np.concatenate(suits, axis=1)

    def _settle(self, indices: list[IndexReading], p_rank: np.ndarray, p_suit: np.ndarray) -> None:
        """Combine each index's views (:meth:`_combine`) into its ``p_index`` and card ``probs``."""
        pr, ps = self._combine(p_rank), self._combine(p_suit)
        # Each index's card probabilities are its rank's times its suit's (np.outer's
        # products), for all indices at once: one row each.
        probs = (pr[:, :NOT_INDEX, None] * ps[:, None, :]).reshape(len(indices), -1)
        for ix, p_not, row in zip(indices, (1.0 - pr[:, NOT_INDEX].astype(np.float64)).tolist(), probs):
            ix.p_index = p_not
            ix.probs = row

    def _read_clearly(self, ix: IndexReading) -> bool:
        """Whether a one-view reading needs no other view (:meth:`classify_screened`)."""
        return ix.p_index < CLEAR_REFUSAL or (ix.p_index >= CLEAR_P_INDEX and ix.best[1] >= self.screen_clear)

    # -- stage 3b: a second look at refused readings ------------------------------
    def look_turned(self, image: np.ndarray | TurnedPicture, indices: list[IndexReading]) -> None:
        """Read again, turned, the indices that the classifier refuses or doubts, in place.

        Now and then the detector finds an index but gets its angle wrong by
        a quarter or half turn (most often at the picture's edge or under
        another card), more than the refiner can put right: the classifier
        then rightly says "not an upright index" and the card is lost.  Such
        a reading (the ``turned_max`` strongest per image) is cut again turned
        by 90, 180 and 270 degrees and read with one view; the classifier was
        trained to refuse turned indices, so a wrong turn is mostly refused
        too.  The turns not refused outright (:data:`TURN_SCREEN`) are refined
        and read again with one view.  The best turn is read with every view and
        replaces the reading only when it is surely an index
        (``SURE_P_INDEX``) read at ``turned_accept`` or more: picking the
        best of three turns would otherwise pick some confident mistakes.  A
        model without ``look_turned`` in its model.json skips this stage.
        """
        if not self.turn_retry or not indices:
            return
        img = _source(image)
        doubtful = [ix for ix in indices if ix.p_index < 0.5 or ix.best[1] < self.accept_threshold]
        # The strongest few only: a pile shows a dozen doubtful spots, mostly
        # half-hidden indices and court art, and the time goes up with each.
        doubtful = sorted(doubtful, key=lambda ix: -ix.heat)[:self.turned_max]
        if not doubtful:
            return
        turned = []   # (a doubtful reading, its turns)
        for ix in doubtful:
            turns = []
            for turn in (90.0, 180.0, 270.0):
                t = copy.copy(ix)
                _move(t, ix.centre, ix.angle + turn, ix.height)
                turns.append(t)
            turned.append((ix, turns))
        # Most turns are wrong, and one view of the first classifier says so as
        # they are cut: only the turns it does not refuse outright (TURN_SCREEN)
        # are refined, the refiner costing two and a half classifier crops, and
        # looked at again.
        self.first_look(img, [t for _, turns in turned for t in turns])
        turned = [(ix, [t for t in turns if t.p_index >= TURN_SCREEN]) for ix, turns in turned]
        if self.refiner is not None:
            kept = [t for _, turns in turned for t in turns]
            self.refine(img, kept)
            self.first_look(img, kept)
        # Read the most promising turn of each index with every view before it
        # may replace the reading.
        promising = []
        for ix, turns in turned:
            if not turns:
                continue
            t = max(turns, key=lambda t: t.p_index * t.best[1])
            if _worth_all_views(t) and t.best[1] > _score(ix):
                promising.append((ix, t))
        self.classify(img, [t for _, t in promising])
        for ix, t in promising:
            if _is_sure(t, self.turned_accept) and t.best[1] > _score(ix):
                ix.__dict__.update(t.__dict__)

    # -- stage 3c: the detector's weaker peaks ---------------------------------
    def look_weak(self, image: np.ndarray | TurnedPicture, indices: list[IndexReading],
                  weak: list[IndexReading]) -> None:
        """Add to ``indices`` the weak detector peaks that turn out to be clear indices.

        The detector misses some clear, whole indices of unseen designs by a
        little: their peak stays under ``heat_threshold``.  Taken with the
        rest, such weak peaks (mostly pips, court art and half-hidden
        corners) would multiply the unknown boxes and the time; here the
        ``weak_max`` strongest of those at ``weak_heat`` or more that lie on
        no index already found are refined and screened with one view, and a
        weak peak joins the readings only when every view reads it surely
        as an index (``SURE_P_INDEX``) of one card at ``weak_accept`` or
        more.  Nothing else of a weak peak is kept: no unknown boxes.  A
        model without ``weak_heat`` in its model.json skips this stage.
        """
        if self.weak_heat == 0 or not weak:
            return
        img = _source(image)

        def on_a_found_index(w: IndexReading) -> bool:
            return any(math.dist(w.centre, ix.centre) < 0.5 * max(w.height, ix.height) for ix in indices)

        candidates = [copy.copy(w) for w in weak if w.heat >= self.weak_heat and not on_a_found_index(w)]
        candidates = candidates[:self.weak_max]   # strongest first
        if not candidates:
            return
        self.refine(img, candidates)
        candidates = [w for w in candidates if not on_a_found_index(w)]
        self.first_look(img, candidates)
        promising = [w for w in candidates if _worth_all_views(w)]
        self.classify(img, promising)
        for w in promising:
            # (Two weak peaks on one index may be refined onto the same spot.)
            if _is_sure(w, self.weak_accept) and not on_a_found_index(w):
                indices.append(w)

    def _combine(self, p: np.ndarray) -> np.ndarray:
        """Combine per-view probabilities (indices x views x classes) into one distribution per index."""
        if self.view_mean == "geometric":
            g = np.exp(np.log(p + 1e-9).mean(axis=1))
            return g / g.sum(axis=1, keepdims=True)
        return p.mean(axis=1)

    # -- stage 4: cards ---------------------------------------------------------
    def recognise(self, image: np.ndarray, copies: int = 1, view: PlaneView | None = None) -> Recognition:
        """All cards whose corner index is visible, read or reported as unknown.

        ``copies`` is how many of each card the deck holds (khanhoo's pack: 2):
        a card is reported at most that many times.  ``view``, when given, turns
        the picture to straight down before it is read (:mod:`vision.rectify`: a
        camera that leans off straight down squeezes every card, and the
        calibrated table says how); the boxes are in the picture's pixels all the same, and a
        card is reported at :data:`VIEW_ACCEPT` or more.  A large picture is read halved
        (:data:`HALVE_FROM`); its boxes too are in its own pixels.
        """
        if copies < 1:
            raise ValueError(f"copies must be at least 1, got {copies}")
        img = _as_bgr(image)
        if view is not None and view.picture_size != (img.shape[1], img.shape[0]):
            raise ValueError(f"this view turns pictures of {view.picture_size[0]} x {view.picture_size[1]} "
                             f"pixels, got {img.shape[1]} x {img.shape[0]}")
        return self._read_halved(img, view, lambda picture, turn: self._read(picture, copies, turn)[1])

    def _read_halved(self, img: np.ndarray, view: PlaneView | None, read) -> Recognition:
        """``read(picture, view)`` of ``img`` halved as often as :func:`halvings` says (``view``, when
        given, halved with it), its boxes put back in ``img``'s pixels."""
        small, factor = img, 1
        for _ in range(halvings((img.shape[1], img.shape[0]), self.long_side)):
            small, view, factor = halve(small), None if view is None else view.halved(), 2 * factor
        found = read(small, view)
        if factor == 1:
            return found
        return grown(found, factor, (img.shape[1], img.shape[0]), (small.shape[1], small.shape[0]))

    def _read(self, img: np.ndarray, copies: int, view: PlaneView | None,
              accept: float | None = None) -> tuple[list[IndexReading], Recognition]:
        """:meth:`recognise`'s work: the indices read (on the canvas, where turned) and the cards
        (reported at ``accept`` or more, by default :meth:`assemble`'s)."""
        if view is None:
            indices = self.read_indices(img)
            return indices, self.assemble(indices, img.shape[1], img.shape[0], copies, accept=accept)
        # The canvas spends the picture's pixels on the table, in a larger box (the bounding box
        # of the table's trapezoid): the detector sees it at the picture's scale, not squeezed
        # into its usual long side, so that an index is as large to it as in the picture.  Only
        # the detector's canvas is drawn, at that scale; the crops are cut from the picture itself
        # through the turn (a TurnedPicture), resampled once, not twice.
        img = exposed(img)   # (the whole picture's brightest: a plain picture's exposure, not the table's alone)
        scale = self.long_side / max(img.shape[:2])
        peaks = self.detect_peaks(view.warp(img, scale), pre_scale=scale)
        indices = self._read_peaks(TurnedPicture(img, view), peaks)
        return indices, self.assemble(indices, view.size[0], view.size[1], copies, view, accept)

    def recognise_level(self, image: np.ndarray, copies: int = 1, leans: tuple[float, ...] = LEVEL_LEANS,
                        fov: float = LEVEL_FOV) -> Recognition:
        """:meth:`recognise` for a picture from a level camera whose lean nobody measured: a
        photograph taken by someone at the table, a webcam on a shelf (the table's far side at
        the top of the picture; :func:`vision.rectify.level_view`).

        The picture is read as it is and, where that leaves a card unread (an unknown box),
        turned to straight down as a camera leaning each of ``leans`` degrees would need
        (through a lens ``fov`` degrees across); every reading, the one as it is too, reports a
        card at :data:`VIEW_ACCEPT` or more, since the lean may squeeze the indices.  A turn's
        reading replaces the best so far when it names more cards, unless the indices read
        surely lie further from one size than in the picture as it is (:data:`LEVEL_SIZE_SPREAD`;
        not compared where either has fewer than three): on the right turn a deck's indices are
        all one size, and a turn that does not fit the camera spreads them, squeezing the cards
        the other way.  A lean at which
        the picture's top would look past the horizon (a steep lean of a tall portrait
        picture) is not tried.  Up to ``1 + len(leans)`` readings' time.  A large picture is
        read halved (:data:`HALVE_FROM`); its boxes too are in its own pixels.
        """
        if copies < 1:
            raise ValueError(f"copies must be at least 1, got {copies}")
        img = _as_bgr(image)
        return self._read_halved(img, None, lambda picture, _: self._read_level(picture, copies, leans, fov))

    def _read_level(self, img: np.ndarray, copies: int, leans: tuple[float, ...], fov: float) -> Recognition:
        """:meth:`recognise_level`'s work, on the picture as it is read (halved where large)."""
        indices, best = self._read(img, copies, None, self.view_accept)
        if not best.unknown:
            return best
        as_is = _size_spread(indices)
        size = (img.shape[1], img.shape[0])
        for lean in leans:
            view = self._level_view(size, lean, fov)
            if view is None:                    # the horizon in the picture: no camera leans so
                continue
            indices, found = self._read(img, copies, view)
            if len(found.cards) <= len(best.cards):
                continue
            spread = _size_spread(indices)
            if as_is is not None and spread is not None and spread > LEVEL_SIZE_SPREAD * as_is:
                continue
            best = found
        return best

    @property
    def view_accept(self) -> float:
        """The least confidence a card is reported at where the camera may lean (a turned
        picture, a photograph of unknown lean): :data:`VIEW_ACCEPT`, or the model's
        ``accept_threshold`` where that is higher."""
        return max(self.accept_threshold, VIEW_ACCEPT)

    def _level_view(self, size: tuple[int, int], lean: float, fov: float) -> PlaneView | None:
        """:func:`vision.rectify.level_view`, made once per picture size, lean and lens; None past the horizon."""
        key = (size, float(lean), float(fov))
        if key not in self._level_views:
            try:
                self._level_views[key] = level_view(size, lean, fov)
            except ValueError:
                self._level_views[key] = None
        return self._level_views[key]

    def read_indices(self, image: np.ndarray, stage_seconds: dict[str, float] | None = None) -> list[IndexReading]:
        """Every index in the image, found, put right and read (stages 1 to 3).

        ``stage_seconds``, when given, has each stage's time added to it
        (``"detect"``, ``"refine"``, ``"read"``, ``"look_turned"``, ``"look_weak"``):
        ``bench/bench_recognition.py --stages`` prints where the time goes.
        """
        clock = time.perf_counter()

        def done(stage: str) -> None:
            nonlocal clock
            if stage_seconds is not None:
                now = time.perf_counter()
                stage_seconds[stage] = stage_seconds.get(stage, 0.0) + now - clock
                clock = now

        img = exposed(_as_bgr(image))
        peaks = self.detect_peaks(img)
        done("detect")
        return self._read_peaks(img, peaks, done)

    def _read_peaks(self, img: np.ndarray | TurnedPicture, peaks: list[IndexReading],
                    done=lambda stage: None) -> list[IndexReading]:
        """:meth:`read_indices` after the detector: the peaks (:meth:`detect_peaks`, strongest
        first) put right and read, from a picture or through a turn; ``done(stage)`` after each stage."""
        indices = [ix for ix in peaks if ix.heat >= self.heat_threshold]
        self.refine(img, indices)
        done("refine")
        self.classify_screened(img, indices)
        done("read")
        self.look_turned(img, indices)
        done("look_turned")
        self.look_weak(img, indices, [ix for ix in peaks if ix.heat < self.heat_threshold])
        done("look_weak")
        return indices

    def assemble(self, indices: list[IndexReading], W: int, H: int, copies: int = 1,
                 view: PlaneView | None = None, accept: float | None = None) -> Recognition:
        """Cards from classified index readings (the last stage of :meth:`recognise`), in a
        picture of ``W`` x ``H`` pixels; read on ``view``'s canvas, their boxes are the picture's.
        A card is reported at ``accept`` or more: by default the model's ``accept_threshold``,
        on a view :data:`VIEW_ACCEPT` where that is higher."""
        indices = [ix for ix in indices if ix.p_index >= 0.5]

        # Pair the two indices of one card: they sit at opposite corners (glyphs
        # turned 180 degrees from each other, most of a card apart) and predict
        # the same card centre.  In a fan the top-left indices of neighbouring
        # cards also predict nearby centres, but they point the same way, so
        # the angle test keeps them apart.  A fanned pair still offers two
        # opposite indices of *different* cards close together, so pairs that
        # read the same card are taken first, then the rest by distance.  An
        # unseen design can fool the card-centre estimate (a jumbo index looks
        # like an ordinary one on a bigger card): with one of each card in the
        # deck, two opposite indices that read the same card are its two
        # corners even when their centres agree less well.  Two readings that
        # share (almost) no probability are two cards, however close.
        pairs = []
        for i, a in enumerate(indices):
            for j in range(i + 1, len(indices)):
                b = indices[j]
                same = a.best[0] == b.best[0]
                if not same and float(np.dot(a.probs, b.probs)) < self.pair_agreement:
                    continue
                d = self._pair_distance(a, b)
                if d < self.pair_tolerance or (same and copies == 1 and d < 2 * self.pair_tolerance):
                    pairs.append((not same, d, i, j))
        partner: dict[int, int] = {}
        for _, _, i, j in sorted(pairs):
            if i not in partner and j not in partner:
                partner[i], partner[j] = j, i
        groups: list[list[IndexReading]] = []
        for i, ix in enumerate(indices):
            j = partner.get(i)
            if j is None:
                groups.append([ix])
            elif i < j:
                groups.append(sorted([ix, indices[j]], key=lambda r: -r.best[1]))

        if accept is None:
            accept = self.accept_threshold if view is None else self.view_accept
        candidates = []  # (label, confidence, probs of the group, group)
        for g in groups:
            label, conf = g[0].best
            if len(g) == 2 and g[1].best[0] != label:
                cut = [self._cut_by_edge(m, W, H) for m in g]
                if cut[0] != cut[1]:
                    # One corner is cut by the picture's edge: it was read from part of
                    # its glyphs (a cut 3 looks like a 7); the whole one decides.
                    g = [g[1], g[0]] if cut[0] else g
                    label, conf = g[0].best
                    probs = g[0].probs
                else:
                    # The two corners of one card disagree (often one is half hidden and
                    # misread): weigh the two readings as independent evidence about one
                    # card, p(card) ~ p1(card) * p2(card).  A clear reading beside a
                    # doubtful one wins; two doubtful ones stay doubtful.
                    probs = g[0].probs * g[1].probs
                    probs = probs / probs.sum()
                    k = int(np.argmax(probs))
                    label, conf = CARD_NAMES[k], float(probs[k])
            else:
                # Independent readings that agree reinforce each other.
                conf = 1.0 - float(np.prod([1.0 - m.best[1] for m in g]))
                probs = np.mean([m.probs for m in g], axis=0)
            candidates.append([label, conf, probs, g])

        # A card appears ``copies`` times per deck (once in most): when more
        # places claim the same card, the more confident keep it and the others
        # fall back to their next reading if that is confident, otherwise they
        # become unknown.
        used: dict[str, int] = {}
        full = lambda name: used.get(name, 0) >= copies  # noqa: E731
        result = Recognition()
        for cand in sorted(candidates, key=lambda c: -c[1]):
            label, conf, probs, g = cand
            if full(label):
                order = np.argsort(-probs)
                alt = next((CARD_NAMES[k] for k in order if not full(CARD_NAMES[k])), None)
                alt_conf = float(probs[CARD_NAMES.index(alt)]) if alt else 0.0
                label, conf = (alt, alt_conf) if alt else (label, 0.0)
            outline = self._outline(g, W, H, view)
            box = view.box_in_picture(outline) if view is not None else outline_box(outline, W, H)
            if conf >= accept and not full(label):
                used[label] = used.get(label, 0) + 1
                result.cards.append(CardReading(label, round(conf, 4), box))
            elif len(g) == 2 or g[0].p_index >= UNKNOWN_P_INDEX:
                result.unknown.append(UnknownCard(box))
        # An unknown that covers the same place as a card read is most often that
        # card seen again (a lone bottom pip where an index would be, a corner
        # read a second time): it tells nothing, so it is not reported.
        result.unknown = [u for u in result.unknown
                          if all(_overlap(u.box, c.box) < SAME_PLACE_IOU for c in result.cards)]
        result.cards.sort(key=lambda c: (c.box[1], c.box[0]))
        result.unknown.sort(key=lambda u: (u.box[1], u.box[0]))
        return result

    @staticmethod
    def _cut_by_edge(ix: IndexReading, W: int, H: int) -> bool:
        """Whether the picture's edge cuts into this index (within half its height of the centre)."""
        r = 0.5 * ix.height
        x, y = ix.centre
        return x - r < 0 or y - r < 0 or x + r > W or y + r > H

    def _pair_distance(self, a: IndexReading, b: IndexReading) -> float:
        """How far apart, in card heights, the card centres that two opposite
        indices predict are; infinity unless they can be one card's corners."""
        card_h = max(a.card_height, b.card_height)
        turn = abs((a.angle - b.angle + 180.0) % 360.0 - 180.0)
        # A card's corners lie most of a card apart.  An unseen design's card
        # height is a guess from its index (30% too large is not rare), so two
        # corners that read the same card, which the deck allows once, may lie
        # closer than that guess says.
        apart = PAIR_APART_SAME if a.best[0] == b.best[0] else PAIR_APART
        if turn < self.pair_min_turn or math.dist(a.centre, b.centre) <= apart * card_h:
            return math.inf
        return math.dist(a.card_centre, b.card_centre) / card_h

    @staticmethod
    def _outline(group: list[IndexReading], W: int, H: int, view: PlaneView | None = None) -> np.ndarray:
        """The corners of the part inside the picture of the card that ``group``'s indices lie on
        (on ``view``'s canvas, the part that the picture shows)."""
        wts = np.array([max(1e-3, m.best[1]) for m in group])
        centre = np.average([m.card_centre for m in group], axis=0, weights=wts)
        card_h = float(np.median([m.card_height for m in group]))
        angle = group[0].angle
        if len(group) == 1:
            # One index is all we know of this card.  Its size is a guess from the
            # index (an unseen jumbo-index design looks like a bigger card), and
            # when the guessed card runs out of the picture the box of its visible
            # part can miss the card altogether.  Then report only what the index
            # vouches for: the smallest card it can belong to, from the same corner.
            ix = group[0]
            outline = cv2.boxPoints(((float(centre[0]), float(centre[1])), (card_h * CARD_ASPECT, card_h), -angle))
            crosses = bool((outline < 0).any() or (outline[:, 0] > W).any() or (outline[:, 1] > H).any()
                           or (view is not None and not view.shows(outline).all()))
            smallest = ix.height / MAX_INDEX_SHARE
            if crosses and smallest < card_h:
                right, down = glyph_axes(angle)
                corner = centre - (0.5 * CARD_ASPECT * card_h) * np.asarray(right) - (0.5 * card_h) * np.asarray(down)
                centre = corner + (smallest / card_h) * (centre - corner)
                card_h = smallest
        return card_outline((float(centre[0]), float(centre[1])), angle, card_h, W, H)

