"""What the live table needs from a card recogniser: readings of the cards in one image.

The live pipeline (:mod:`vision.observer`, :mod:`vision.live`) depends only on
the small :class:`CardReader` protocol, not on the recogniser's internals:

* :class:`RecogniserReader` adapts the project's recogniser
  (:class:`vision.recogniser.Recogniser`, imported when first used);
* :class:`LookupReader` returns readings known in advance for each image
  (ground truth from the scene renderer): a *deterministic stand-in* for
  tests and benchmarks of the pipeline itself, never used at a real table.

>>> import numpy as np
>>> img = np.zeros((20, 30, 3), np.uint8)
>>> r = LookupReader({fingerprint(img): [Reading("10h", 0.9, (1, 2, 11, 16))]})
>>> [(x.card, x.centre) for x in r.read(img)], r.read(img + 1)
([('10H', (6.0, 9.0))], [])
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Any, Iterable, Protocol

import numpy as np

from referee.cards import CardError, parse_card

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reading:
    """One card read in one image: canonical ``card`` (``10H``), ``confidence``
    0..1 and ``box`` (x1, y1, x2, y2) in image pixels, around the card."""

    card: str
    confidence: float
    box: tuple[float, float, float, float]

    def __post_init__(self) -> None:
        object.__setattr__(self, "card", str(parse_card(self.card)))

    @property
    def centre(self) -> tuple[float, float]:
        x1, y1, x2, y2 = self.box
        return ((x1 + x2) / 2.0, (y1 + y2) / 2.0)


class CardReader(Protocol):
    """Anything that reads the face-up cards in one BGR image."""

    def read(self, image: np.ndarray) -> list[Reading]: ...


class RecogniserReader:
    """The project's recogniser behind :class:`CardReader`.

    ``recogniser`` is any object with ``recognise(image)`` returning
    ``.cards`` (each with ``card``, ``confidence``, ``box``) and ``.unknown``;
    by default :class:`vision.recogniser.Recogniser` with its shipped model.
    Unreadable cards are kept in :attr:`last_unknown` (boxes), for drawing.

    ``table``, the calibrated table (:class:`vision.table_geometry.TableGeometry`;
    ``cardtable run`` passes it when the table is calibrated), says how the camera
    looks at the table: a camera
    that leans far enough off straight down to squeeze the cards
    (:data:`vision.rectify.WORTH_TURNING`) has each picture turned to straight
    down over the table and its surround before it is read
    (:class:`vision.rectify.PlaneView`); the boxes stay the picture's.
    """

    def __init__(self, recogniser: Any = None, min_confidence: float = 0.0, table: Any = None,
                 **recogniser_args: Any):
        if recogniser is None:
            from vision.recogniser import Recogniser  # noqa: PLC0415 - loads the models
            recogniser = Recogniser(**recogniser_args)
        self.recogniser = recogniser
        self.min_confidence = float(min_confidence)
        self.copies = 1          # of each card in the deck; the live table sets it per game (khanhoo: 2)
        self.table = table
        self.last_unknown: list[tuple[float, float, float, float]] = []
        self._views: dict[tuple, Any] = {}

    def view_for(self, image: np.ndarray) -> Any:
        """The turn to straight down for pictures of ``image``'s size (:class:`vision.rectify.PlaneView`),
        or None: no table, a camera close enough to straight down, or a calibration
        whose table lies outside such a picture."""
        if self.table is None:
            return None
        h, w = image.shape[:2]
        key = (np.asarray(self.table.H).tobytes(), self.table.surround, self.table.image_size, w, h)
        if key not in self._views:
            from vision.rectify import table_view  # noqa: PLC0415
            try:
                view = table_view(self.table, (w, h))
            except ValueError as exc:      # a picture of another shape than the calibration's
                log.warning("pictures read as they are, not turned to straight down: %s", exc)
                view = None
            self._views = {key: view}      # (said once per picture size)
        return self._views[key]

    def read(self, image: np.ndarray) -> list[Reading]:
        options: dict[str, Any] = {"copies": self.copies} if self.copies != 1 else {}
        view = self.view_for(image)
        if view is not None:
            options["view"] = view
        result = self.recogniser.recognise(image, **options)
        out = []
        for c in getattr(result, "cards", []):
            try:
                reading = Reading(str(c.card), float(c.confidence), tuple(float(v) for v in c.box))
            except (CardError, TypeError, ValueError):
                continue
            if reading.confidence >= self.min_confidence:
                out.append(reading)
        self.last_unknown = [tuple(float(v) for v in u.box) for u in getattr(result, "unknown", [])]
        return out


def fingerprint(image: np.ndarray) -> str:
    """A cheap, exact key for an image (its shape and bytes)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(repr(image.shape).encode())
    h.update(np.ascontiguousarray(image).data)
    return h.hexdigest()


class LookupReader:
    """Readings known in advance, looked up by the image's :func:`fingerprint`.

    A deterministic stand-in for a recogniser, for testing the pipeline with
    rendered footage whose ground truth is known; an image it does not know
    reads as no cards.  :attr:`calls` counts the images read.
    """

    def __init__(self, table: dict[str, Iterable[Reading]] | None = None):
        self.table: dict[str, list[Reading]] = {k: list(v) for k, v in (table or {}).items()}
        self.calls = 0

    def add(self, image: np.ndarray, readings: Iterable[Reading]) -> None:
        self.table[fingerprint(image)] = list(readings)

    def read(self, image: np.ndarray) -> list[Reading]:
        self.calls += 1
        return list(self.table.get(fingerprint(image), []))
