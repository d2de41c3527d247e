"""Table geometry: from camera pixels to millimetres on the table, and the zones.

Calibration finds the four corners of the play area in the image, either from
four printed ArUco markers (IDs 0, 1, 2, 3 = top-left, top-right,
bottom-right, bottom-left as the camera sees the table; print them with
:func:`vision.markers.make_marker_sheet`) or from four corners given by hand.
The play area is the rectangle whose corners are the **centres** of the
markers, ``table_mm`` = (width, height) measured centre to centre.  A
homography maps image pixels to a top-down view in millimetres: (0, 0) is the
top-left marker, x runs to the right, y down (toward the camera's bottom edge).

Zones, in millimetres, decide who played a card:

* one **seat** zone per player around the edge, seat 0 at the bottom edge and
  the others clockwise as seen from above (left edge, top, right for four),
  laid out as sectors from the table centre;
* a **centre** zone in the middle (not a seat's: the stock, a turned-up trump);
* for twenty-two a **scoreboard** zone where losing cards lie face up (cards
  there are never plays).

Everything is plain data (:meth:`TableGeometry.to_config`) for the
configuration's ``[geometry]`` section, so zones can be adjusted by hand.

>>> g = TableGeometry([[100, 50], [1180, 50], [1180, 670], [100, 670]], table_mm=(900, 520), seats=4)
>>> [round(v) for v in g.to_mm([[640, 360]])[0]]
[450, 260]
>>> g.zone_at((450, 500)).name, g.zone_at((20, 260)).name, g.zone_at((450, 260)).name
('seat 0', 'seat 1', 'centre')
>>> TableGeometry.from_config(g.to_config()).zone_at((880, 260)).seat
3
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import cv2
import numpy as np

#: Poker-size card in millimetres (width, height); bridge cards are 57 x 89.
CARD_MM = (63.0, 88.0)
#: The ArUco dictionary of the printed markers.
MARKER_DICTIONARY = "DICT_4X4_50"
#: Marker ids at the table corners, in the order top-left, top-right, bottom-right, bottom-left.
MARKER_IDS = (0, 1, 2, 3)
CORNER_NAMES = ("top-left", "top-right", "bottom-right", "bottom-left")
#: A card counts a little past the markers (:attr:`TableGeometry.surround`): this share of the
#: play area's longer side all round.
SURROUND_MARGIN = 0.15


class CalibrationError(ValueError):
    """The table could not be calibrated; the message says what to fix."""


@dataclass(frozen=True)
class Zone:
    """A region of the table in millimetres: ``kind`` is seat, centre or scoreboard."""

    kind: str
    polygon: tuple[tuple[float, float], ...]
    seat: int | None = None

    @property
    def name(self) -> str:
        return f"seat {self.seat}" if self.kind == "seat" else self.kind

    def contains(self, point: Sequence[float]) -> bool:
        poly = np.asarray(self.polygon, np.float32).reshape(-1, 1, 2)
        return cv2.pointPolygonTest(poly, (float(point[0]), float(point[1])), False) >= 0

    def to_config(self) -> dict:
        out: dict[str, Any] = {"kind": self.kind, "polygon_mm": [[round(x, 1), round(y, 1)] for x, y in self.polygon]}
        if self.seat is not None:
            out["seat"] = self.seat
        return out


def default_zones(table_mm: Sequence[float], seats: int, scoreboard: bool = False,
                  centre: float = 0.34) -> list[Zone]:
    """Seat sectors around the edge, a centre rectangle (``centre`` of each side)
    and, with ``scoreboard``, the right half of the centre as the scoreboard.

    Sectors are cut in coordinates normalised to a square, so four seats on a
    long table still get one edge each, their borders running to the corners.
    """
    if not 1 <= seats <= 12:
        raise ValueError(f"seats must be 1-12, got {seats}")
    w, h = float(table_mm[0]), float(table_mm[1])
    zones: list[Zone] = []
    cx0, cx1 = w * (0.5 - centre / 2), w * (0.5 + centre / 2)
    cy0, cy1 = h * (0.5 - centre / 2), h * (0.5 + centre / 2)
    if scoreboard:
        mid = (cx0 + cx1) / 2
        zones.append(Zone("scoreboard", ((mid, cy0), (cx1, cy0), (cx1, cy1), (mid, cy1))))
        zones.append(Zone("centre", ((cx0, cy0), (mid, cy0), (mid, cy1), (cx0, cy1))))
    else:
        zones.append(Zone("centre", ((cx0, cy0), (cx1, cy0), (cx1, cy1), (cx0, cy1))))
    step = 360.0 / seats
    for s in range(seats):
        a = 90.0 + s * step          # seat 0 at the bottom; y is down, so +angle is clockwise on screen
        poly = _sector(a - step / 2, a + step / 2) if seats > 1 else [(-1, -1), (1, -1), (1, 1), (-1, 1)]
        zones.append(Zone("seat", tuple((round((u + 1) * w / 2, 1), round((v + 1) * h / 2, 1)) for u, v in poly),
                          seat=s))
    return zones


def _square_point(angle: float) -> tuple[float, float]:
    dx, dy = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    t = 1.0 / max(abs(dx), abs(dy))
    return dx * t, dy * t


def _sector(a0: float, a1: float) -> list[tuple[float, float]]:
    """The part of the square [-1, 1]^2 between the rays at angles a0 < a1 (degrees)."""
    pts = [(0.0, 0.0), _square_point(a0)]
    for corner_angle, corner in ((45, (1, 1)), (135, (-1, 1)), (225, (-1, -1)), (315, (1, -1))):
        for k in (-360, 0, 360, 720):
            if a0 < corner_angle + k < a1:
                pts.append((corner_angle + k, corner))  # type: ignore[arg-type]
    corners = sorted((p for p in pts[2:]), key=lambda p: p[0])  # type: ignore[index]
    return [pts[0], pts[1], *[c for _, c in corners], _square_point(a1)]


class TableGeometry:
    """The calibrated table: a homography image px <-> table mm, and the zones.

    ``corners_px`` are the image positions of the play area's corners
    (top-left, top-right, bottom-right, bottom-left); ``table_mm`` its size;
    ``image_size`` (w, h) the frame size the calibration is for.  ``zones``
    default to :func:`default_zones` for ``seats``.
    """

    def __init__(self, corners_px: Sequence[Sequence[float]], table_mm: Sequence[float] = (900, 600),
                 seats: int = 4, image_size: Sequence[int] | None = None, zones: Sequence[Zone] | None = None,
                 scoreboard: bool = False):
        c = np.asarray(corners_px, np.float64).reshape(-1, 2)
        if c.shape != (4, 2) or not np.all(np.isfinite(c)):
            raise CalibrationError(f"need four table corners in pixels, got {np.asarray(corners_px).tolist()}")
        if abs(cv2.contourArea(c.astype(np.float32))) < 100:
            raise CalibrationError("the four table corners enclose (almost) no area; check their order and positions")
        if not cv2.isContourConvex(c.astype(np.float32).reshape(-1, 1, 2)):
            raise CalibrationError("the table corners must form a convex quadrilateral in the order "
                                   "top-left, top-right, bottom-right, bottom-left")
        self.corners_px = c
        self.table_mm = (float(table_mm[0]), float(table_mm[1]))
        if min(self.table_mm) <= 0:
            raise CalibrationError(f"table size must be positive millimetres, got {table_mm}")
        self.seats = int(seats)
        self.image_size = (int(image_size[0]), int(image_size[1])) if image_size else None
        self.scoreboard = bool(scoreboard)
        w, h = self.table_mm
        dst = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
        self.H = cv2.getPerspectiveTransform(c.astype(np.float32), dst.astype(np.float32))
        self.H_inv = np.linalg.inv(self.H)
        self.zones: list[Zone] = list(zones) if zones is not None else default_zones(self.table_mm, self.seats,
                                                                                    scoreboard)
        # mean scale, for turning mm thresholds into pixels of a downscaled frame
        area_px = abs(cv2.contourArea(c.astype(np.float32)))
        self.px_per_mm = math.sqrt(area_px / (w * h))

    # -- mapping ------------------------------------------------------------------
    def to_mm(self, points_px: Any) -> np.ndarray:
        pts = np.asarray(points_px, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, self.H).reshape(-1, 2)

    def to_px(self, points_mm: Any) -> np.ndarray:
        pts = np.asarray(points_mm, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, self.H_inv).reshape(-1, 2)

    def scale_at(self, point_mm: Sequence[float]) -> float:
        """Pixels per millimetre near a table point (perspective makes it vary)."""
        x, y = float(point_mm[0]), float(point_mm[1])
        p = self.to_px([[x - 5, y], [x + 5, y], [x, y - 5], [x, y + 5]])
        return float((np.linalg.norm(p[1] - p[0]) + np.linalg.norm(p[3] - p[2])) / 20.0)

    @property
    def surround(self) -> tuple[float, float, float, float]:
        """Where cards count, in millimetres (x1, y1, x2, y2): the play area and a margin of
        :data:`SURROUND_MARGIN` of its longer side all round (cards overhang the markers)."""
        w, h = self.table_mm
        margin = SURROUND_MARGIN * max(w, h)
        return (-margin, -margin, w + margin, h + margin)

    def zone_at(self, point_mm: Sequence[float]) -> Zone | None:
        """The zone a table point lies in (scoreboard, then centre, then seats), None off the table."""
        x1, y1, x2, y2 = self.surround
        x, y = float(point_mm[0]), float(point_mm[1])
        if not (x1 <= x <= x2 and y1 <= y <= y2):
            return None
        order = {"scoreboard": 0, "centre": 1, "seat": 2}
        for zone in sorted(self.zones, key=lambda z: order.get(z.kind, 3)):
            if zone.contains((x, y)):
                return zone
        # just outside the play area: the nearest seat zone
        seats = [z for z in self.zones if z.kind == "seat"]
        if not seats:
            return None
        return min(seats, key=lambda z: -cv2.pointPolygonTest(np.asarray(z.polygon, np.float32).reshape(-1, 1, 2),
                                                              (x, y), True))

    def seat_at(self, point_mm: Sequence[float]) -> int | None:
        zone = self.zone_at(point_mm)
        return zone.seat if zone is not None and zone.kind == "seat" else None

    # -- plain data ---------------------------------------------------------------
    def to_config(self) -> dict:
        out: dict[str, Any] = {
            "corners_px": [[round(float(x), 2), round(float(y), 2)] for x, y in self.corners_px],
            "table_mm": [self.table_mm[0], self.table_mm[1]],
            "seats": self.seats,
            "zones": [z.to_config() for z in self.zones],
        }
        if self.image_size:
            out["image_size"] = list(self.image_size)
        if self.scoreboard:
            out["scoreboard"] = True
        return out

    @classmethod
    def from_config(cls, data: dict, seats: int | None = None) -> "TableGeometry":
        """From the ``[geometry]`` section.  With ``seats`` other than the stored
        number, the zones are laid out afresh for that many seats."""
        if "corners_px" not in data:
            raise CalibrationError("[geometry] has no corners_px: calibrate the table first "
                                   "(markers or four corners by hand; see docs/live-table.md)")
        stored_seats = int(data.get("seats", 4))
        n = stored_seats if seats is None else int(seats)
        zones = None
        if "zones" in data and n == stored_seats:
            zones = []
            for i, z in enumerate(data["zones"]):
                try:
                    kind = z["kind"]
                    poly = tuple((float(x), float(y)) for x, y in z["polygon_mm"])
                except (KeyError, TypeError, ValueError):
                    raise CalibrationError(f"[geometry] zone {i} needs kind and polygon_mm [[x, y], ...]") from None
                if kind not in ("seat", "centre", "scoreboard") or len(poly) < 3:
                    raise CalibrationError(f"[geometry] zone {i}: kind must be seat, centre or scoreboard, "
                                           "with at least three points")
                seat = z.get("seat")
                if kind == "seat" and not (isinstance(seat, int) and 0 <= seat < n):
                    raise CalibrationError(f"[geometry] zone {i}: a seat zone needs seat 0-{n - 1}")
                zones.append(Zone(kind, poly, seat if kind == "seat" else None))
        return cls(data["corners_px"], table_mm=data.get("table_mm", (900, 600)), seats=n,
                   image_size=data.get("image_size"), zones=zones, scoreboard=bool(data.get("scoreboard", False)))

    def with_seats(self, seats: int, scoreboard: bool | None = None) -> "TableGeometry":
        """The same calibration with zones laid out for another number of seats."""
        sb = self.scoreboard if scoreboard is None else scoreboard
        return TableGeometry(self.corners_px, self.table_mm, seats, self.image_size, scoreboard=sb)

    # -- calibration --------------------------------------------------------------
    @classmethod
    def from_markers(cls, image: np.ndarray, table_mm: Sequence[float], seats: int = 4,
                     scoreboard: bool = False) -> "TableGeometry":
        """Calibrate from a frame showing the four corner markers."""
        corners = find_marker_corners(image)
        return cls(corners, table_mm, seats, image_size=(image.shape[1], image.shape[0]), scoreboard=scoreboard)

    # -- drawing ------------------------------------------------------------------
    def draw(self, image: np.ndarray) -> np.ndarray:
        """Draw the zones on ``image`` (in place) and return it."""
        colours = {"seat": (255, 200, 0), "centre": (200, 200, 200), "scoreboard": (0, 200, 255)}
        for zone in self.zones:
            pts = self.to_px(zone.polygon)
            cv2.polylines(image, [np.round(pts).astype(np.int32).reshape(-1, 1, 2)], True,
                          colours.get(zone.kind, (255, 255, 255)), 1, cv2.LINE_AA)
            mid = np.asarray(zone.polygon, np.float64).mean(axis=0)
            if zone.kind == "seat":     # toward the edge, away from the shared centre point
                centre = np.array(self.table_mm) / 2.0
                mid = centre + (mid - centre) * 1.5
            lx, ly = self.to_px([mid])[0]
            cv2.putText(image, zone.name, (int(lx) - 20, int(ly)), cv2.FONT_HERSHEY_SIMPLEX, 0.45,
                        colours.get(zone.kind, (255, 255, 255)), 1, cv2.LINE_AA)
        return image


def aruco_dictionary() -> Any:
    return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, MARKER_DICTIONARY))


def find_marker_corners(image: np.ndarray) -> np.ndarray:
    """Image centres of markers 0-3 (top-left, top-right, bottom-right, bottom-left)."""
    if image is None or not isinstance(image, np.ndarray) or image.ndim not in (2, 3):
        raise CalibrationError("calibration needs an image")
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    detector = cv2.aruco.ArucoDetector(aruco_dictionary(), cv2.aruco.DetectorParameters())
    found, ids, _ = detector.detectMarkers(gray)
    centres: dict[int, np.ndarray] = {}
    if ids is not None:
        for quad, mid in zip(found, ids.ravel()):
            if int(mid) in MARKER_IDS:
                centres.setdefault(int(mid), quad.reshape(4, 2).mean(axis=0))
    missing = [f"{m} ({CORNER_NAMES[i]})" for i, m in enumerate(MARKER_IDS) if m not in centres]
    if missing:
        raise CalibrationError(f"markers not found: {', '.join(missing)}; check that all four are in view, "
                               "flat, lit and not covered")
    return np.array([centres[m] for m in MARKER_IDS], np.float64)
