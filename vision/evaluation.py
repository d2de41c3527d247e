"""Scoring recognitions against rendered scenes with known answers.

Used by ``bench/bench_recognition.py`` and the tests.  numpy and cv2 only.

Rules (per image):

* a card must be found when at least one of its indices is at least
  ``READABLE_FRACTION`` visible ("readable"); it counts for recall;
* a card whose indices are all less than ``HIDDEN_FRACTION`` visible cannot
  be asked for; one in between is "optional": reading it right is fine,
  missing it is not an error;
* a reported card is a true positive when a card of that name lies in the
  scene and the reported box's centre falls inside that card; anything
  else reported is a false positive (a wrong card).  Unknowns are never
  false positives, but they are told apart by where their box's centre
  falls: on a card not read (the useful kind: it tells the players where
  a card is that needs a look), on cards all read already (a repeat), or
  on no card at all (a *phantom*: the live table would ask the players to
  turn a card that is not there);
* an image is an exact set when every readable card is reported right and
  nothing wrong is reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.synth.scene import HIDDEN_FRACTION, READABLE_FRACTION, SceneAnnotation


@dataclass
class ImageScore:
    n_cards: int
    overlap: bool
    readable: int
    tp: int
    fp: int
    missed: int           # readable cards not reported right
    unknown: int
    exact: bool
    wrong: list[str] = field(default_factory=list)   # "reported X where Y lies" notes
    missed_cards: list[str] = field(default_factory=list)
    phantom: int = 0      # unknown boxes on no card
    repeat: int = 0       # unknown boxes on cards all reported right


def scene_has_overlap(ann: SceneAnnotation) -> bool:
    """True when any two cards in the scene overlap."""
    polys = [c.corners.astype(np.float32) for c in ann.cards]
    for i in range(len(polys)):
        for j in range(i + 1, len(polys)):
            area, _ = cv2.intersectConvexConvex(polys[i], polys[j])
            if area > 1.0:
                return True
    return False


def _inside(pt, corners: np.ndarray) -> bool:
    return cv2.pointPolygonTest(corners.astype(np.float32).reshape(-1, 1, 2), (float(pt[0]), float(pt[1])),
                                False) >= 0


def score_image(result, ann: SceneAnnotation) -> ImageScore:
    """Score one :class:`vision.recogniser.Recognition` against its annotation."""
    by_name = {c.card: c for c in ann.cards}
    status = {}
    for c in ann.cards:
        best = max(ix.visible for ix in c.indices)
        status[c.card] = "readable" if best >= READABLE_FRACTION else (
            "optional" if best >= HIDDEN_FRACTION else "hidden")
    tp, fp, found, wrong = 0, 0, set(), []
    for r in result.cards:
        gt = by_name.get(r.card)
        centre = ((r.box[0] + r.box[2]) / 2, (r.box[1] + r.box[3]) / 2)
        if gt is not None and _inside(centre, gt.corners) and r.card not in found:
            tp += 1
            found.add(r.card)
        else:
            fp += 1
            under = [c.card for c in ann.cards if _inside(centre, c.corners)]
            elsewhere = " (that card lies elsewhere: a misplaced box)" if gt is not None else ""
            wrong.append(f"reported {r.card} (conf {r.confidence:.2f}) where {'/'.join(under) or 'no card'} lies"
                         + elsewhere)
    readable = [n for n, s in status.items() if s == "readable"]
    missed = [n for n in readable if n not in found]
    phantom = repeat = 0
    for u in result.unknown:
        centre = ((u.box[0] + u.box[2]) / 2, (u.box[1] + u.box[3]) / 2)
        under = [c.card for c in ann.cards if _inside(centre, c.corners)]
        phantom += not under
        repeat += bool(under) and all(n in found for n in under)
    return ImageScore(len(ann.cards), scene_has_overlap(ann), len(readable), tp, fp, len(missed),
                      len(result.unknown), not missed and fp == 0, wrong, missed, phantom, repeat)


@dataclass
class Summary:
    images: int = 0
    readable: int = 0
    tp: int = 0
    fp: int = 0
    tp_readable: int = 0
    unknown: int = 0
    exact: int = 0
    phantom: int = 0
    repeat: int = 0

    def add(self, s: ImageScore) -> None:
        self.images += 1
        self.readable += s.readable
        self.tp += s.tp
        self.fp += s.fp
        self.tp_readable += s.readable - s.missed
        self.unknown += s.unknown
        self.exact += int(s.exact)
        self.phantom += s.phantom
        self.repeat += s.repeat

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp_readable / self.readable if self.readable else 1.0

    @property
    def exact_rate(self) -> float:
        return self.exact / self.images if self.images else 1.0

    def intervals(self, z: float = 1.96) -> dict[str, tuple[float, float]]:
        """95% intervals (``z`` standard errors) of precision, recall and exact-set on a
        sample of this size: what other scenes of the same kind could read.  One seed's
        560 images pin exact-set near 96% down to about +-1.6 points only.

        >>> s = Summary(images=560, readable=1764, tp=1743, fp=7, tp_readable=1743, exact=537)
        >>> {k: (round(100 * lo, 2), round(100 * hi, 2)) for k, (lo, hi) in s.intervals().items()}
        {'precision': (99.18, 99.81), 'recall': (98.19, 99.22), 'exact': (93.91, 97.25)}
        """
        return {"precision": wilson_interval(self.tp, self.tp + self.fp, z),
                "recall": wilson_interval(self.tp_readable, self.readable, z),
                "exact": wilson_interval(self.exact, self.images, z)}

    def line(self, label: str) -> str:
        return (f"{label:<14} images {self.images:4d}  cards {self.readable:5d}  precision {100 * self.precision:6.2f}%"
                f"  recall {100 * self.recall:6.2f}%  exact-set {100 * self.exact_rate:6.2f}%"
                f"  wrong {self.fp:3d}  unknown {self.unknown:4d} (on no card {self.phantom}, repeats {self.repeat})")


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's score interval for a proportion of ``successes`` in ``n`` trials, ``z``
    standard errors wide (1.96: 95%).  Unlike the plain one it stays inside [0, 1] and
    is not empty at 0 or n, which is where precision lives.  No trials: (0, 1).

    >>> [round(x, 4) for x in wilson_interval(95, 100)]
    [0.8882, 0.9785]
    >>> [round(x, 4) for x in wilson_interval(0, 10)]
    [0.0, 0.2775]
    """
    if not 0 <= successes <= n:
        raise ValueError(f"{successes} successes in {n} trials")
    if n == 0:
        return (0.0, 1.0)
    p, z2 = successes / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # (At 0 and n the bound is 0 or 1 exactly; rounding would put it a hair inside.)
    return (0.0 if successes == 0 else max(0.0, centre - half), 1.0 if successes == n else min(1.0, centre + half))
