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
  false positives;
* an image is an exact set when every readable card is reported right and
  nothing wrong is reported.
"""

from __future__ import annotations

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
    return ImageScore(len(ann.cards), scene_has_overlap(ann), len(readable), tp, fp, len(missed),
                      len(result.unknown), not missed and fp == 0, wrong, missed)


@dataclass
class Summary:
    images: int = 0
    readable: int = 0
    tp: int = 0
    fp: int = 0
    tp_readable: int = 0
    unknown: int = 0
    exact: int = 0

    def add(self, s: ImageScore) -> None:
        self.images += 1
        self.readable += s.readable
        self.tp += s.tp
        self.fp += s.fp
        self.tp_readable += s.readable - s.missed
        self.unknown += s.unknown
        self.exact += int(s.exact)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp_readable / self.readable if self.readable else 1.0

    @property
    def exact_rate(self) -> float:
        return self.exact / self.images if self.images else 1.0

    def line(self, label: str) -> str:
        return (f"{label:<14} images {self.images:4d}  cards {self.readable:5d}  precision {100 * self.precision:6.2f}%"
                f"  recall {100 * self.recall:6.2f}%  exact-set {100 * self.exact_rate:6.2f}%"
                f"  wrong {self.fp:3d}  unknown {self.unknown:4d}")
