"""A picture of the table turned to straight down, for reading cards seen at a slant.

The recogniser learnt its cards from overhead pictures.  A camera that leans
off straight down (a webcam on a shelf, a Pi on an arm to one side) sees every
card squeezed along its line of sight, the far ones smaller: at 45 degrees a
club squeezed that way looks like a spade, and the recogniser names wrong
cards (``bench/bench_view.py``).  Where the table is calibrated
(:mod:`vision.table_geometry`: a homography from the picture's pixels to the
table's millimetres), the picture can be turned to straight down before it is
read: warped by that homography into the picture an overhead camera would
take, at about the same number of pixels over the table, and every card found
there is mapped back into the picture.  Where nothing is calibrated, a photograph's
camera is most often level (the far side at the top of the picture), and the turn of
such a camera leaning a given number of degrees is known but for its lens
(:func:`level_view`); the recogniser tries a few leans
(:meth:`vision.recogniser.Recogniser.recognise_level`).

A :class:`PlaneView` is that turn for one picture size:

>>> H = np.array([[1.0, 0.2, 0.0], [0.0, 1.4, 0.0], [0.0, 0.0006, 1.0]])   # a slanted view
>>> view = PlaneView(H, (640, 480))
>>> canvas = view.warp(np.zeros((480, 640, 3), np.uint8))
>>> canvas.shape[2], view.worth_turning                  # a picture; and it was worth turning
(3, True)
>>> pts = np.array([[100.0, 50.0], [600.0, 400.0]])
>>> bool(np.allclose(view.to_picture(view.to_canvas(pts)), pts))
True
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import cv2
import numpy as np

from vision.index_geometry import homography_at, outline_box

#: A view is worth turning (:attr:`PlaneView.worth_turning`) when in its middle a card is
#: squeezed to less than this share of its width across the line of sight: a lean of about
#: 25 degrees off straight down.  Under it the turn costs about 15 ms (session 52: 42 and 44 ms
#: an image turned at 30 and 45 degrees, about 29 as it is) and changes little (bench_view's
#: lean-15 row reads as many cards either way); and a calibration is never quite right: a table
#: measured 5% off in one direction, or the demo footage's
#: trapezoid drawn over cards that are not squeezed (squeeze 0.94), must not be turned.
WORTH_TURNING = 0.9
#: The lens a picture's camera is taken to have where nothing says otherwise
#: (:func:`level_view`): 66 degrees across the picture's long side, the Pi Camera Module 3's
#: standard lens and about a phone's main camera.
LEVEL_FOV = 66.0
#: The turned picture holds at most this many times the picture's pixels (its bounding
#: box around a trapezoid of the table is larger than the trapezoid).
MAX_CANVAS_SHARE = 4.0


class PlaneView:
    """A picture (``picture_size`` = width, height) turned to straight down onto a plane.

    ``to_plane`` is the 3x3 homography from the picture's pixels to the plane's
    units (:attr:`vision.table_geometry.TableGeometry.H`: millimetres on the
    table).  ``region`` (x1, y1, x2, y2 in plane units) limits the turned picture
    to that part of the plane (the play area and a margin: a picture that shows
    the horizon needs one).  The turned picture, the *canvas*, shows the plane's
    part that both the picture and the region hold, at the same number of pixels
    as the picture spends on it, with the plane's x and y along its own.

    Raises ``ValueError`` for a homography that is not a finite, invertible 3x3
    matrix, a picture or region with no area, a picture and region that share
    nothing, or a picture that shows the plane's horizon with no region given.
    """

    def __init__(self, to_plane: np.ndarray | Sequence[Sequence[float]], picture_size: Sequence[int],
                 region: Sequence[float] | None = None):
        H = np.asarray(to_plane, np.float64)
        if H.shape != (3, 3) or not np.all(np.isfinite(H)):
            raise ValueError(f"the picture-to-plane map must be a finite 3x3 matrix, got shape {H.shape}")
        if abs(np.linalg.det(H)) < 1e-12 * max(1.0, float(np.abs(H).max())) ** 3:
            raise ValueError("the picture-to-plane map is singular: it flattens the picture onto a line")
        W, Hp = (int(v) for v in picture_size)
        if W < 1 or Hp < 1:
            raise ValueError(f"the picture must have an area, got {W} x {Hp} pixels")
        self.picture_size = (W, Hp)
        self._made_from = (H.copy(), None if region is None else tuple(float(v) for v in region))
        self._halved: PlaneView | None = None
        frame = np.array([[0, 0], [W, 0], [W, Hp], [0, Hp]], np.float64)
        if region is None:
            # Every corner of the picture must look at the plane from the same side.
            w = np.c_[frame, np.ones(4)] @ H[2]
            if not (np.all(w > 0) or np.all(w < 0)) or np.min(np.abs(w)) < 1e-9 * np.max(np.abs(w)):
                raise ValueError("the picture shows the plane's horizon: give a region of the plane to turn")
            seen = frame
        else:
            x1, y1, x2, y2 = (float(v) for v in region)
            if not (np.isfinite([x1, y1, x2, y2]).all() and x2 > x1 and y2 > y1):
                raise ValueError(f"the region must be x1, y1, x2, y2 with x2 > x1 and y2 > y1, got {list(region)}")
            quad = _apply(np.linalg.inv(H), np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]]))
            inside = clip_convex(quad, frame)
            if len(inside) < 3 or _area(inside) < 1.0:
                raise ValueError(f"the region {list(region)} lies outside the picture")
            seen = inside
        #: The part of the picture that is turned (a convex polygon, picture pixels).
        self.seen = seen
        # A homography and its negative are the same map; the crops cut through the turn
        # (vision.index_geometry.crop_views' through) take the side of the horizon the picture
        # is on to be the positive one, so the map is given that sign.
        if float(np.mean(np.c_[seen, np.ones(len(seen))] @ H[2])) < 0:
            H = -H
        on_plane = _apply(H, seen)
        # As many pixels on the canvas as the picture spends on the same part of the plane.
        scale = float(np.sqrt(_area(seen) / max(_area(on_plane), 1e-12)))
        lo, hi = on_plane.min(axis=0), on_plane.max(axis=0)
        box = (hi - lo) * scale
        if box[0] * box[1] > MAX_CANVAS_SHARE * W * Hp:
            scale *= float(np.sqrt(MAX_CANVAS_SHARE * W * Hp / (box[0] * box[1])))
        self.size = (max(1, int(np.ceil((hi[0] - lo[0]) * scale))), max(1, int(np.ceil((hi[1] - lo[1]) * scale))))
        place = np.array([[scale, 0, -lo[0] * scale], [0, scale, -lo[1] * scale], [0, 0, 1.0]])
        #: The homography from the picture's pixels to the canvas's.
        self.homography = place @ H
        self._inverse = np.linalg.inv(self.homography)
        self._seen_on_canvas = _apply(self.homography, seen)
        #: How squeezed a card lies in the middle of the turned part of the picture: the picture's
        #: shorter stretch of a small square of the plane over its longer one (1: not at all;
        #: the cosine of the lean off straight down).  Off the middle it varies: a lean's far
        #: corners are squeezed more.
        m = cv2.moments(seen.astype(np.float32))
        middle = np.array([m["m10"] / m["m00"], m["m01"] / m["m00"]]) if m["m00"] > 0 else seen.mean(axis=0)
        self.squeeze = self._squeeze_at(middle)

    @property
    def worth_turning(self) -> bool:
        """Whether a card in the middle of the picture is squeezed enough (:data:`WORTH_TURNING`) to be
        read turned."""
        return self.squeeze < WORTH_TURNING

    def _squeeze_at(self, p: np.ndarray) -> float:
        # The picture-to-canvas map's local linear part; its singular values' ratio is the squeeze.
        eps = 0.5
        c = _apply(self.homography, np.array([p, p + (eps, 0), p + (0, eps)]))
        J = np.column_stack([(c[1] - c[0]) / eps, (c[2] - c[0]) / eps])
        s = np.linalg.svd(J, compute_uv=False)
        return float(s[1] / s[0]) if s[0] > 0 else 0.0

    def to_canvas(self, pts: np.ndarray) -> np.ndarray:
        """Picture points (N x 2) to the canvas."""
        return _apply(self.homography, np.asarray(pts, np.float64))

    def to_picture(self, pts: np.ndarray) -> np.ndarray:
        """Canvas points (N x 2) back to the picture."""
        return _apply(self._inverse, np.asarray(pts, np.float64))

    @property
    def canvas_to_picture(self) -> np.ndarray:
        """The 3x3 homography from the canvas's pixels back to the picture's (what
        :func:`vision.index_geometry.crop_views` takes to cut a canvas's crop from the picture)."""
        return self._inverse

    def warp(self, image: np.ndarray, scale: float = 1.0) -> np.ndarray:
        """The picture turned: the canvas (:attr:`size`), the plane outside the picture filled
        with the picture's mean colour (an even table, not a black edge that looks like something).

        ``scale`` draws the canvas that much larger or smaller (:meth:`scaled_size`); under 1 the
        picture is first shrunk along each axis as far as the part the turn stretches most still
        needs none of its pixels (``cv2.INTER_AREA``, each new pixel the mean of those it covers:
        a level camera's far side keeps its rows), and then turned.  Where the turn shrinks the
        picture more (a level camera's near side), the warp samples it more sparsely than a
        pixel apart and can alias there (a grid of lines 3 px apart does; what that does to the
        detector's readings is not measured apart from the benchmarks' totals).

        >>> view = PlaneView(np.diag([1.0, 2.0, 1.0]), (200, 100))
        >>> view.size, view.warp(np.zeros((100, 200, 3), np.uint8), 0.5).shape
        ((142, 142), (71, 71, 3))

        Raises ``ValueError`` for a picture of another size than this view's, or a scale
        that is not a positive number."""
        h, w = image.shape[:2]
        if (w, h) != self.picture_size:
            raise ValueError(f"this view turns pictures of {self.picture_size[0]} x {self.picture_size[1]} "
                             f"pixels, got {w} x {h}")
        if not (math.isfinite(scale) and scale > 0.0):
            raise ValueError(f"a canvas is drawn at a positive scale, got {scale}")
        fill = cv2.mean(image)[:image.shape[2] if image.ndim == 3 else 1]
        H = np.diag([scale, scale, 1.0]) @ self.homography
        source = image
        if scale < 1.0:
            # Shrunk along each axis only as far as the turn lets: a level camera's far side is
            # stretched down the canvas more than the picture is shrunk, so it keeps its rows.
            across, down = (min(1.0, scale * v) for v in self._stretches)
            source = cv2.resize(image, (max(1, round(w * across)), max(1, round(h * down))),
                                interpolation=cv2.INTER_AREA)
            H = H @ np.diag([w / source.shape[1], h / source.shape[0], 1.0])   # small picture -> picture
        return cv2.warpPerspective(source, H, self.scaled_size(scale), flags=cv2.INTER_LINEAR,
                                   borderMode=cv2.BORDER_CONSTANT, borderValue=fill)

    @functools.cached_property
    def _stretches(self) -> tuple[float, float]:
        """The most that the turn stretches a step across the picture, and a step down it, over
        the part of the picture turned (its corners and the middles of its sides); found once
        per view, not for every frame it turns."""
        ring = np.vstack([self.seen, (self.seen + np.roll(self.seen, -1, axis=0)) / 2])
        most = np.zeros(2)
        for p in ring:
            local = homography_at(self.homography, (float(p[0]), float(p[1])))
            if local is not None:
                most = np.maximum(most, np.linalg.norm(local[1], axis=0))
        return float(most[0]), float(most[1])

    def halved(self) -> PlaneView:
        """This turn for the picture halved (:func:`vision.recogniser.halve`: each 2 x 2 block of pixels one pixel, an odd
        last row or column dropped), the same part of the plane shown; made once per view.

        >>> view = PlaneView(np.diag([1.0, 2.0, 1.0]), (201, 100))
        >>> view.size, view.halved().size, view.halved().picture_size, view.halved() is view.halved()
        ((143, 142), (71, 71), (100, 50), True)
        """
        if self._halved is None:
            to_plane, region = self._made_from
            # The half picture's pixel (x, y) is the mean of the picture's 2x, 2x + 1: centred on 2x + 0.5.
            from_half = np.array([[2.0, 0.0, 0.5], [0.0, 2.0, 0.5], [0.0, 0.0, 1.0]])
            W, Hp = self.picture_size
            self._halved = PlaneView(to_plane @ from_half, (W // 2, Hp // 2), region)
        return self._halved

    def scaled_size(self, scale: float) -> tuple[int, int]:
        """The canvas's size (width, height) drawn at ``scale`` (:meth:`warp`)."""
        return (max(1, int(np.ceil(self.size[0] * scale))), max(1, int(np.ceil(self.size[1] * scale))))

    def shows(self, pts: np.ndarray) -> np.ndarray:
        """Whether each canvas point (N x 2) is one the picture shows (a boolean per point)."""
        poly = self._seen_on_canvas.astype(np.float32).reshape(-1, 1, 2)
        return np.array([cv2.pointPolygonTest(poly, (float(x), float(y)), False) >= 0
                         for x, y in np.asarray(pts, np.float64).reshape(-1, 2)], bool)

    def box_in_picture(self, outline: np.ndarray) -> tuple[int, int, int, int]:
        """The picture's box (x1, y1, x2, y2) around a convex outline drawn on the canvas (N x 2),
        cut to the part that the picture shows."""
        pts = np.asarray(outline, np.float64).reshape(-1, 2)
        inside = clip_convex(pts, self._seen_on_canvas)
        if len(inside) >= 3 and _area(inside) > 1.0:
            pts = inside
        return outline_box(self.to_picture(pts), *self.picture_size)


def table_view(table, size: Sequence[int]) -> PlaneView | None:
    """The turn to straight down that a calibrated table (:class:`vision.table_geometry.TableGeometry`)
    gives pictures of ``size`` (width, height) over its surround, or None: a camera close enough
    to straight down (:attr:`PlaneView.worth_turning`), or a table that such a picture does not show.

    A calibration made at another size of the same picture (the same shape, within 1%) is
    scaled to it; one of another shape raises ``ValueError``: it is another camera's.
    """
    w, h = (int(v) for v in size)
    H = np.asarray(table.H, np.float64)
    if table.image_size is not None and tuple(table.image_size) != (w, h):
        cw, ch = table.image_size
        if abs((w / h) / (cw / ch) - 1.0) > 0.01:
            raise ValueError(f"the table was calibrated on {cw} x {ch} pictures, not on pictures of {w} x {h}")
        H = H @ np.diag([cw / w, ch / h, 1.0])      # this picture's pixels to the calibration's, then the table
    try:
        view = PlaneView(H, (w, h), region=table.surround)
    except ValueError:
        return None
    return view if view.worth_turning else None


def clip_convex(subject: np.ndarray, clip: np.ndarray) -> np.ndarray:
    """The part of the convex polygon ``subject`` (N x 2) inside the convex polygon ``clip``
    (its corners either way round; an area of 0 holds nothing): a polygon of 0 or more corners,
    where polygons that only touch give a polygon of no area (Sutherland and Hodgman's clipping).

    OpenCV's ``intersectConvexConvex`` is not used here: where an edge of one polygon runs
    along an edge of the other a hair's breadth outside it (a card cut by the canvas's top
    edge, along which the turned picture's own top edge runs 1e-13 px higher), it returned
    the whole of the larger polygon as the intersection, and a card's box became the
    whole picture.

    >>> square = np.array([[0, 0], [10, 0], [10, 10], [0, 10]], float)
    >>> sorted(clip_convex(square + 5, square).tolist())
    [[5.0, 5.0], [5.0, 10.0], [10.0, 5.0], [10.0, 10.0]]
    >>> len(clip_convex(square + 20, square))
    0
    """
    out = np.asarray(subject, np.float64).reshape(-1, 2)
    c = np.asarray(clip, np.float64).reshape(-1, 2)
    x, y = c[:, 0], c[:, 1]
    twice_area = float(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y))
    if len(c) < 3 or abs(twice_area) < 1e-12:
        return np.zeros((0, 2))                 # a clip polygon with no area holds nothing
    orientation = 1.0 if twice_area > 0 else -1.0
    for a, b in zip(c, np.roll(c, -1, axis=0)):
        if len(out) == 0:
            break
        edge = b - a
        # > 0 inside (on the clip polygon's side of this edge), 0 on it
        side = orientation * (edge[0] * (out[:, 1] - a[1]) - edge[1] * (out[:, 0] - a[0]))
        kept = []
        for k in range(len(out)):
            p, q, sp, sq = out[k - 1], out[k], side[k - 1], side[k]
            if sq >= 0:
                if sp < 0:
                    kept.append(p + (q - p) * (sp / (sp - sq)))
                kept.append(q)
            elif sp >= 0:
                kept.append(p + (q - p) * (sp / (sp - sq)))
        out = np.array(kept, np.float64).reshape(-1, 2)
    return out


def level_view(size: Sequence[int], lean: float, fov: float = LEVEL_FOV) -> PlaneView:
    """The turn to straight down of a picture (``size`` = width, height) taken by a *level*
    camera that leans ``lean`` degrees off straight down through a lens ``fov`` degrees across
    the picture's long side.

    Level: the camera is not rolled, so the table's far side is at the top of the picture,
    as in a photograph taken by someone at the table, or from a webcam standing on a shelf.
    Such a camera turned in place to look straight down would take the canvas: the
    homography ``K R K^-1`` (``K`` the lens, ``R`` the turn about the picture's horizontal
    axis), whatever the table's distance.  Only the lean and the lens are guessed; the
    recogniser tries a few leans (:meth:`vision.recogniser.Recogniser.recognise_level`).

    >>> view = level_view((1280, 720), 40.0)
    >>> round(view.squeeze, 2)                # a card in the middle, squeezed to cos 40
    0.77
    >>> near = view.to_canvas(np.array([[600.0, 719.0], [680.0, 719.0]]))
    >>> far = view.to_canvas(np.array([[600.0, 0.0], [680.0, 0.0]]))
    >>> bool(np.ptp(far[:, 0]) > np.ptp(near[:, 0]))    # the far side is drawn larger again
    True

    Raises ``ValueError`` for a lean outside 0 to 80 degrees or a lens outside 10 to 150
    degrees, or a lean at which the picture's top edge looks past the horizon.
    """
    w, h = (int(v) for v in size)
    if not 0.0 <= lean <= 80.0:
        raise ValueError(f"a lean of {lean} degrees is out of range 0..80")
    if not 10.0 <= fov <= 150.0:
        raise ValueError(f"a lens of {fov} degrees across is out of range 10..150")
    # The lens's angle is across the picture's long side, landscape or portrait (a phone's 66
    # degrees across a portrait photo's height).
    f = (max(w, h) / 2.0) / np.tan(np.radians(fov) / 2.0)
    K = np.array([[f, 0.0, (w - 1) / 2.0], [0.0, f, (h - 1) / 2.0], [0.0, 0.0, 1.0]])
    c, s = np.cos(np.radians(lean)), np.sin(np.radians(lean))
    turn = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
    return PlaneView(K @ turn @ np.linalg.inv(K), (w, h))


def _apply(M: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Points (N x 2) through the homography ``M`` (OpenCV's, as TableGeometry maps them)."""
    return cv2.perspectiveTransform(np.asarray(pts, np.float64).reshape(-1, 1, 2), M).reshape(-1, 2)


def _area(poly: np.ndarray) -> float:
    return abs(float(cv2.contourArea(poly.astype(np.float32))))
