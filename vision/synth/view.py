"""Where the camera looks from: a table drawn as seen from straight above, seen
instead by a camera that leans off straight down, through a lens with barrel
distortion.

The scene renderer (:mod:`vision.synth.scene`) lays the cards out on the table
as an overhead camera would see them.  A camera that is not overhead (a webcam
on a shelf, a Pi on an arm to one side) sees the same table through a
perspective map: the far side shrinks, cards turn into trapezoids, an index is
squeezed along the line of sight.  A camera turning in place about its lens is
exactly a homography, ``K R K^-1`` (``K`` the lens, ``R`` the turn), so a lean
is one map of the overhead picture; barrel distortion then pulls the picture's
outer parts in, by ``1 + barrel * r^2`` (``r`` the distance from the centre, 1 at
the corners).  The view zooms in just enough that no edge of the picture shows
past the table that was drawn.

>>> v = CameraView(1280, 720, lean=30.0)
>>> far, near = v.to_picture(np.array([[640.0, 100.0], [640.0, 620.0]]))
>>> bool(near[1] - 360 > 360 - far[1])     # the far side (top) is drawn smaller
True
>>> np.allclose(v.to_table(v.to_picture(np.array([[300.0, 200.0]]))), [[300.0, 200.0]], atol=1e-3)
True
>>> CameraView(1280, 720).identity
True
"""

from __future__ import annotations

import math

import cv2
import numpy as np

#: The steepest lean drawn: past about 60 degrees the far side of a table runs to the horizon.
MAX_LEAN = 60.0
#: The strongest barrel distortion drawn (0.3 is already a fisheye-like wide lens).
MAX_BARREL = 0.5


class CameraView:
    """The map from an overhead picture of the table (``width`` x ``height``) to what a
    camera sees that leans ``lean`` degrees off straight down towards ``direction``
    (degrees counter-clockwise on screen, 0: the top of the picture is the far side),
    with a lens of ``fov`` degrees across the picture and ``barrel`` distortion.

    Raises ``ValueError`` for a lean outside 0 to :data:`MAX_LEAN`, a barrel outside 0 to
    :data:`MAX_BARREL` or a field of view outside 10 to 150 degrees."""

    def __init__(self, width: int, height: int, lean: float = 0.0, direction: float = 0.0,
                 fov: float = 66.0, barrel: float = 0.0):
        if not 0.0 <= lean <= MAX_LEAN:
            raise ValueError(f"lean {lean} out of range 0..{MAX_LEAN} degrees")
        if not 0.0 <= barrel <= MAX_BARREL:
            raise ValueError(f"barrel {barrel} out of range 0..{MAX_BARREL}")
        if not 10.0 <= fov <= 150.0:
            raise ValueError(f"field of view {fov} out of range 10..150 degrees")
        self.width, self.height = int(width), int(height)
        self.lean, self.barrel = float(lean), float(barrel)
        self.centre = np.array([(self.width - 1) / 2.0, (self.height - 1) / 2.0])
        #: the distance from the centre to a corner: barrel distortion's unit
        self.radius = float(np.hypot(*self.centre))
        f = (self.width / 2.0) / math.tan(math.radians(fov) / 2.0)
        K = np.array([[f, 0, self.centre[0]], [0, f, self.centre[1]], [0, 0, 1.0]])
        # The table in the overhead picture's pixels, its centre at the origin, seen by an
        # overhead camera at height f (so that one table unit is one pixel).  The leaning
        # camera swings about the table's centre at the same distance, still aiming at it:
        # G turns about an axis in the table's plane, at right angles to ``direction``.
        t, d = math.radians(lean), math.radians(direction)
        Rx = np.array([[1, 0, 0], [0, math.cos(t), math.sin(t)], [0, -math.sin(t), math.cos(t)]])
        Rz = np.array([[math.cos(d), math.sin(d), 0], [-math.sin(d), math.cos(d), 0], [0, 0, 1.0]])
        G = Rz @ Rx @ Rz.T
        eye = G @ np.array([0.0, 0.0, f])
        R = np.diag([1.0, 1.0, -1.0]) @ G.T     # world to camera: looking down, picture y along table Y
        centred = np.array([[1, 0, -self.centre[0]], [0, 1, -self.centre[1]], [0, 0, 1.0]])
        self.homography = K @ np.column_stack([R[:, 0], R[:, 1], -R @ eye]) @ centred
        self._inverse = np.linalg.inv(self.homography)
        self.zoom = 1.0 if self.identity else self._fit_zoom()

    @property
    def identity(self) -> bool:
        """True when the camera looks straight down through a perfect lens: nothing to map."""
        return self.lean == 0.0 and self.barrel == 0.0

    # -- the picture's pixels back to the table's ------------------------------------------

    def to_table(self, pts: np.ndarray) -> np.ndarray:
        """Picture points (N x 2) to where they lie in the overhead picture."""
        return self._to_table(np.asarray(pts, np.float64), self.zoom)

    def _to_table(self, pts: np.ndarray, zoom: float) -> np.ndarray:
        off = pts - self.centre
        r2 = (off ** 2).sum(axis=-1, keepdims=True) / self.radius ** 2
        leaned = self.centre + off * (1.0 + self.barrel * r2) / zoom
        h = np.concatenate([leaned, np.ones(leaned.shape[:-1] + (1,))], axis=-1) @ self._inverse.T
        return h[..., :2] / h[..., 2:3]

    def _fit_zoom(self) -> float:
        """The least zoom (1 or more) at which every edge of the picture looks at the table drawn."""
        n = 64
        xs, ys = np.linspace(0, self.width - 1, n), np.linspace(0, self.height - 1, n)
        edge = np.concatenate([np.stack([xs, np.zeros(n)], 1), np.stack([xs, np.full(n, self.height - 1.0)], 1),
                               np.stack([np.zeros(n), ys], 1), np.stack([np.full(n, self.width - 1.0), ys], 1)])

        def fits(zoom: float) -> bool:
            t = self._to_table(edge, zoom)
            return bool(np.all(np.isfinite(t)) and np.all(t >= -0.5) and np.all(t[:, 0] <= self.width - 0.5)
                        and np.all(t[:, 1] <= self.height - 0.5))

        lo, hi = 1.0, 64.0
        if fits(lo):
            return lo
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if fits(mid) else (mid, hi)
        return hi

    # -- the table's pixels to the picture's -------------------------------------------------

    def to_picture(self, pts: np.ndarray) -> np.ndarray:
        """Points of the overhead picture (N x 2) to where the camera sees them."""
        pts = np.asarray(pts, np.float64)
        if self.identity:
            return pts.copy()
        h = np.concatenate([pts, np.ones(pts.shape[:-1] + (1,))], axis=-1) @ self.homography.T
        leaned = h[..., :2] / h[..., 2:3]
        zoomed = self.centre + (leaned - self.centre) * self.zoom
        # Undo the barrel: find rho with rho * (1 + barrel * rho^2) = u (Newton; it is monotonic).
        off = zoomed - self.centre
        u = np.hypot(off[..., 0], off[..., 1]) / self.radius
        rho = u.copy()
        for _ in range(30):
            rho -= (self.barrel * rho ** 3 + rho - u) / (3 * self.barrel * rho ** 2 + 1)
        scale = np.where(u > 0, rho / np.maximum(u, 1e-12), 1.0)
        return self.centre + off * scale[..., None]

    def warp(self, image: np.ndarray, nearest: bool = False, border: float = 0.0) -> np.ndarray:
        """The overhead ``image`` as the camera sees it (same size): linear interpolation,
        or ``nearest`` for labels (such as which card owns a pixel), ``border`` past the table."""
        if self.identity:
            return image.copy()
        yy, xx = np.mgrid[0:self.height, 0:self.width].astype(np.float64)
        t = self.to_table(np.stack([xx, yy], axis=-1))
        return cv2.remap(image, t[..., 0].astype(np.float32), t[..., 1].astype(np.float32),
                         cv2.INTER_NEAREST if nearest else cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_CONSTANT, borderValue=border)
