"""Conventions shared by the run-time card recogniser and its training code.

Kept in one module so that training and inference can never disagree about
how an index crop is cut or how the detector's output channels are laid out.
numpy and cv2 only.  (Camera-to-table geometry is elsewhere:
``vision/table_geometry.py``.)

Angles are in degrees, counter-clockwise on screen; 0 means upright.  For an
index, the angle is the direction its glyph's top points: the top-left index
of a card has the card's angle, the bottom-right one the card's angle + 180.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("C", "D", "H", "S")
#: Classifier rank class meaning "this crop is not an upright card index".
NOT_INDEX = len(RANKS)

# Detector -----------------------------------------------------------------
#: The detector's output grid is this many input pixels per cell.
DET_STRIDE = 4
#: The detector runs on the image scaled so that its longer side is this long.
DET_LONG_SIDE = 640
#: Output channels of the detector, in order.
DET_CHANNELS = (
    "heat",        # logit: an index centre lies in this cell
    "cos", "sin",  # glyph angle
    "log_h",       # log(index height in detector pixels / H_REF)
    "card_u", "card_v",  # card centre from the index centre, in the glyph frame, / index height
    "log_card",    # log(card height / index height)
    "off_x", "off_y",  # sub-cell position of the index centre, in cells, relative to the cell centre
)
H_REF = 16.0

# Classifier -----------------------------------------------------------------
#: Size of the rotation-normalised index crop fed to the classifier.
PATCH_W, PATCH_H = 32, 48
#: The crop window, in units of the index height, centred on the index centre.
WINDOW_W, WINDOW_H = 1.0, 1.5

# Refiner ------------------------------------------------------------------
#: The refiner's crop: a wider view around a detected index, so that the index
#: stays in it even where the detector's estimate is off by a third of its
#: height or 30 degrees; the refiner says how far off (vision.recogniser.refine_indices).
REFINE_PATCH_W, REFINE_PATCH_H = 48, 64
REFINE_WINDOW_W, REFINE_WINDOW_H = 2.0, 8.0 / 3.0  # 24 pixels per index height, as the patch's aspect
#: The refiner's outputs: the index's true centre in the crop's frame (right,
#: down; index heights), its angle in units of REFINE_ANGLE_UNIT degrees
#: (counter-clockwise) and log(true height / detected height), all relative
#: to the detection it was cut at.
REFINE_ANGLE_UNIT = 30.0

#: Contrast floor of :func:`standardise_crops` (on the 0..1 scale): a blank
#: crop's noise is not blown up to full contrast.
CROP_STD_FLOOR = 0.05


def standardise_crops(x: np.ndarray) -> np.ndarray:
    """Give every crop of a batch (N x C x H x W, values 0..1) zero mean and unit contrast.

    Ink and paper differ between designs, lights and cameras; a classifier
    that sees every index at the same contrast has less to learn and carries
    what it learnt to unseen designs.  Training applies its torch twin
    (``vision.training.train._standardise``) to the same crops.
    """
    axes = (1, 2, 3)
    centred = x - x.mean(axis=axes, keepdims=True)
    # numpy's std, computed as it computes it (the mean of the squared deviations, its
    # root), from the deviations needed anyway: the same numbers in two passes fewer.
    std = np.sqrt(np.mean(centred * centred, axis=axes, keepdims=True))
    centred /= std + CROP_STD_FLOOR
    return centred


#: Card width / height used to draw a card's box from its centre and height.
CARD_ASPECT = 0.7
#: The largest corner index, as a share of the card's height (jumbo-index decks).
#: An index of height h therefore lies on a card at least h / MAX_INDEX_SHARE high.
MAX_INDEX_SHARE = 0.38


def glyph_axes(angle_deg: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """Unit vectors (right, down) of a glyph turned by ``angle_deg``, in image coordinates.

    Plain floats, not numpy arrays: the recogniser asks for them a hundred
    times an image and computes with them one coordinate at a time, which is
    several times faster on floats than on numpy scalars (the same numbers).
    """
    a = math.radians(angle_deg)
    c, s = math.cos(a), math.sin(a)
    return (c, -s), (s, c)


def crop_matrix(centre: tuple[float, float], angle_deg: float, index_h: float,
                window: tuple[float, float] = (WINDOW_W, WINDOW_H),
                patch: tuple[int, int] = (PATCH_W, PATCH_H)) -> np.ndarray:
    """2x3 affine map from crop pixels to image pixels for one index
    (``window``: the crop's width and height in index heights; ``patch``: in pixels)."""
    right, down = glyph_axes(angle_deg)
    pw, ph = patch
    sx = window[0] * index_h / pw
    sy = window[1] * index_h / ph
    cx, cy = centre
    # image = c + (px - PW/2 + 0.5) * sx * right + (py - PH/2 + 0.5) * sy * down
    ox = cx - (pw / 2 - 0.5) * sx * right[0] - (ph / 2 - 0.5) * sy * down[0]
    oy = cy - (pw / 2 - 0.5) * sx * right[1] - (ph / 2 - 0.5) * sy * down[1]
    return np.array([[sx * right[0], sy * down[0], ox], [sx * right[1], sy * down[1], oy]], np.float64)


def _kernel_size(sigma: float) -> int:
    """The Gaussian kernel's width for ``sigma``: round(6 sigma + 1), made odd (OpenCV's
    choice for 8-bit images)."""
    return int(round(6 * sigma + 1)) | 1


def antialias(image: np.ndarray, sigma: float, sigma_y: float | None = None) -> np.ndarray:
    """``image`` blurred by a Gaussian of ``sigma`` pixels (borders reflected), as
    :func:`crop_index` blurs a large index before shrinking it; ``sigma_y``, when given, is the
    blur down the picture instead (``sigma`` then across), either of them 0 for none.

    The same kernel as ``cv2.GaussianBlur`` uses, applied by ``cv2.sepFilter2D``:
    on 8-bit images about twice as fast (OpenCV's 8-bit GaussianBlur computes
    in fixed point, bit-exact across platforms, and slowly), its pixels within
    one grey level of GaussianBlur's.
    """
    kx = _gaussian(sigma)
    ky = kx if sigma_y is None else _gaussian(sigma_y)
    return cv2.sepFilter2D(image, -1, kx, ky, borderType=cv2.BORDER_REFLECT_101)


def _gaussian(sigma: float) -> np.ndarray:
    """:func:`antialias`'s kernel for ``sigma`` (one tap for none)."""
    return cv2.getGaussianKernel(_kernel_size(sigma), sigma) if sigma > 0 else np.ones((1, 1))


def _blur_sigma(index_h: float, window: tuple[float, float], patch: tuple[int, int]) -> float:
    """How much :func:`crop_index` blurs before shrinking a window of this size, 0 for not at all."""
    shrink = window[1] * index_h / patch[1]
    return 0.45 * shrink if shrink > 1.6 else 0.0


def _sampled_region(image: np.ndarray, centre: tuple[float, float], M: np.ndarray, patch: tuple[int, int],
                    sigma: float) -> tuple[int, int, int, int]:
    """The pixels a crop by ``M`` samples, and the blur's reach beyond them (x0, y0, x1, y1),
    within the image; empty when the crop lies wholly outside it.

    Those in the turned window's bounding box, the blur kernel's reach beyond
    them, and a pixel or two for the bilinear sampling and the whole-pixel
    corner: for a centre in the picture, a crop cut from this region blurred is
    the same, bit for bit, as one cut from the whole image blurred."""
    reach = _kernel_size(sigma) // 2
    wx, wy = abs(M[0, 0]) * patch[0], abs(M[1, 0]) * patch[0]   # the window's width along x and y
    hx, hy = abs(M[0, 1]) * patch[1], abs(M[1, 1]) * patch[1]   # its height along x and y
    rx = int(math.ceil(0.5 * (wx + hx))) + reach + 3
    ry = int(math.ceil(0.5 * (wy + hy))) + reach + 3
    x0, y0 = max(0, int(centre[0]) - rx), max(0, int(centre[1]) - ry)
    x1, y1 = min(image.shape[1], int(centre[0]) + rx), min(image.shape[0], int(centre[1]) + ry)
    return x0, y0, x1, y1


def _warp(src: np.ndarray, M: np.ndarray, x0: int, y0: int, patch: tuple[int, int]) -> np.ndarray:
    """The crop by ``M`` (crop -> image pixels) out of ``src``, which starts at image pixel (x0, y0)."""
    if x0 or y0:
        M = M.copy()
        M[0, 2] -= x0
        M[1, 2] -= y0
    # M maps crop -> image, which is what WARP_INVERSE_MAP expects.
    return cv2.warpAffine(src, M, patch, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_REPLICATE)


def crop_index(image: np.ndarray, centre: tuple[float, float], angle_deg: float, index_h: float,
               window: tuple[float, float] = (WINDOW_W, WINDOW_H),
               patch: tuple[int, int] = (PATCH_W, PATCH_H)) -> np.ndarray:
    """Cut the upright PATCH_H x PATCH_W crop of one index out of a BGR image
    (the classifier's; the refiner's is ``window=(REFINE_WINDOW_W, REFINE_WINDOW_H),
    patch=(REFINE_PATCH_W, REFINE_PATCH_H)``).

    When the window is much larger than the patch, the region is pre-blurred
    (:func:`antialias`) so that the sampling does not alias (INTER_AREA does
    not apply to warps); only the pixels the crop samples are blurred, not the
    whole image (the blur is about a tenth of the recogniser's time).
    """
    return crop_views(image, centre, angle_deg, index_h, ((0.0, 1.0),), window, patch)[0]


def crop_views(image: np.ndarray, centre: tuple[float, float], angle_deg: float, index_h: float,
               views, window: tuple[float, float] = (WINDOW_W, WINDOW_H),
               patch: tuple[int, int] = (PATCH_W, PATCH_H), through: np.ndarray | None = None) -> list[np.ndarray]:
    """:func:`crop_index` of one index from each of ``views`` ((angle offset in
    degrees, size factor) pairs), the same crops, in less time: the views of one
    size (the same blur) are cut from one blurred region, the union of theirs,
    instead of each blurring its own.

    ``through``: the index's geometry is given on a turned picture (a canvas,
    :class:`vision.rectify.PlaneView`), ``image`` is the picture itself, and
    ``through`` the 3x3 homography from the canvas's pixels to the picture's.
    Each crop is then cut straight from the picture through it, as the canvas
    would show it (blurred first by as much as the canvas's crop would be, along
    each of the picture's axes as the turn stretches it): a squeezed index is
    read unsqueezed, resampled once, without drawing the canvas.

    >>> img = np.zeros((100, 100, 3), np.uint8); img[40:50, 45:55] = 255   # a 10 x 10 square
    >>> taller = np.diag([1.0, 0.5, 1.0])         # the canvas twice as tall as the picture
    >>> crop = crop_views(img, (50.0, 90.0), 0.0, 40.0, ((0.0, 1.0),), through=taller)[0]
    >>> rows, cols = np.nonzero(crop[:, :, 0] > 127)
    >>> int(np.ptp(rows)) + 1, int(np.ptp(cols)) + 1    # 20 x 10 on the canvas: 16 x 8 crop pixels
    (16, 8)
    """
    if through is not None:
        return _crop_views_through(image, centre, angle_deg, index_h, views, window, patch, through)
    crops: list[np.ndarray | None] = [None] * len(views)
    for size, ks in _by_size(views).items():
        h = index_h * size
        sigma = _blur_sigma(h, window, patch)
        cuts = {k: crop_matrix(centre, angle_deg + views[k][0], h, window, patch) for k in ks}
        if not sigma:
            for k, M in cuts.items():
                crops[k] = _warp(image, M, 0, 0, patch)
            continue
        regions = {k: _sampled_region(image, centre, M, patch, sigma) for k, M in cuts.items()}
        inside = [k for k, (x0, y0, x1, y1) in regions.items() if x1 > x0 and y1 > y0]
        for k in ks:
            if k not in inside:   # (wholly outside the picture)
                crops[k] = np.zeros((patch[1], patch[0], 3), np.uint8)
        if not inside:
            continue
        x0, y0 = min(regions[k][0] for k in inside), min(regions[k][1] for k in inside)
        x1, y1 = max(regions[k][2] for k in inside), max(regions[k][3] for k in inside)
        blurred = antialias(image[y0:y1, x0:x1], sigma)
        for k in inside:
            crops[k] = _warp(blurred, cuts[k], x0, y0, patch)
    return crops


def _by_size(views) -> dict[float, list[int]]:
    """The positions in ``views`` of the views of each size factor: the crops of one size share a blur.

    >>> _by_size(((0.0, 1.0), (7.0, 1.0), (0.0, 0.88)))
    {1.0: [0, 1], 0.88: [2]}
    """
    sizes: dict[float, list[int]] = {}
    for k, (_, size) in enumerate(views):
        sizes.setdefault(size, []).append(k)
    return sizes


def homography_at(H: np.ndarray, point: tuple[float, float]) -> tuple[tuple[float, float], np.ndarray] | None:
    """Where the homography ``H`` (3x3) takes ``point``, and its derivative there (2x2: how a
    small step at ``point`` moves in ``H``'s image); None where ``point`` lies on or past the
    line that ``H`` sends to infinity (a camera's horizon).

    >>> at, J = homography_at(np.array([[2.0, 0, 1], [0, 1, 0], [0, 0, 1]]), (3.0, 4.0))
    >>> at, J.tolist()
    ((7.0, 4.0), [[2.0, 0.0], [0.0, 1.0]])
    """
    q = H @ np.array([float(point[0]), float(point[1]), 1.0])
    if not q[2] > 1e-12 * float(np.abs(q).max()):
        return None
    x, y = q[0] / q[2], q[1] / q[2]
    return (float(x), float(y)), (H[:2, :2] - np.outer([x, y], H[2, :2])) / q[2]


def _crop_views_through(image: np.ndarray, centre: tuple[float, float], angle_deg: float, index_h: float,
                        views, window: tuple[float, float], patch: tuple[int, int],
                        through: np.ndarray) -> list[np.ndarray]:
    """:func:`crop_views` of geometry on a canvas, cut from the picture ``image`` through the
    canvas-to-picture homography ``through``."""
    H = np.asarray(through, np.float64)
    local = homography_at(H, centre)
    blank = np.zeros((patch[1], patch[0]) + image.shape[2:], np.uint8)
    if local is None:                 # past the picture's horizon: nothing the picture shows
        return [blank] * len(views)
    _, J = local
    pw, ph = patch
    corners = np.array([[-0.5, -0.5, 1.0], [pw - 0.5, -0.5, 1.0], [pw - 0.5, ph - 0.5, 1.0], [-0.5, ph - 0.5, 1.0]]).T
    stretch = np.linalg.norm(J, axis=1)       # picture pixels per canvas pixel, across and down
    crops: list[np.ndarray] = [blank] * len(views)
    for size, ks in _by_size(views).items():
        h = index_h * size
        # The canvas's crop would be blurred by sigma canvas pixels; the turn stretches that
        # differently along the picture's two axes (a level camera's far side: across more
        # than down), so the picture is blurred along each by as much as its crop steps there.
        sx, sy = (0.45 * v if v > 1.6 else 0.0 for v in (window[1] * h / patch[1]) * stretch)
        reach = max(_kernel_size(sx) if sx else 1, _kernel_size(sy) if sy else 1) // 2
        cuts, boxes = {}, []
        for k in ks:
            cut = H @ np.vstack([crop_matrix(centre, angle_deg + views[k][0], h, window, patch), [0.0, 0.0, 1.0]])
            seen = cut @ corners
            if not np.all(seen[2] > 0):                # (reaches past the horizon: left blank)
                continue
            cuts[k] = cut
            boxes.append(seen[:2] / seen[2])
        if not cuts:
            continue
        lo, hi = np.min([b.min(axis=1) for b in boxes], axis=0), np.max([b.max(axis=1) for b in boxes], axis=0)
        x0, y0 = max(0, int(math.floor(lo[0])) - reach - 3), max(0, int(math.floor(lo[1])) - reach - 3)
        x1 = min(image.shape[1], int(math.ceil(hi[0])) + reach + 3)
        y1 = min(image.shape[0], int(math.ceil(hi[1])) + reach + 3)
        if x1 <= x0 or y1 <= y0:                       # wholly outside the picture
            continue
        region = image[y0:y1, x0:x1]
        if sx or sy:
            region = antialias(region, sx, sy)
        shift = np.array([[1.0, 0.0, -x0], [0.0, 1.0, -y0], [0.0, 0.0, 1.0]])
        for k, cut in cuts.items():
            # (cut maps crop -> picture pixels, which is what WARP_INVERSE_MAP expects)
            crops[k] = cv2.warpPerspective(region, shift @ cut, patch, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                           borderMode=cv2.BORDER_REPLICATE)
    return crops


def refine_target(at: tuple[tuple[float, float], float, float], truth: tuple[tuple[float, float], float, float]
                  ) -> tuple[float, float, float, float]:
    """What the refiner should say for a crop cut at ``at`` = (centre, angle,
    height) of an index whose true geometry is ``truth``: the REFINE outputs
    (see REFINE_ANGLE_UNIT).  :func:`apply_refinement` inverts it."""
    (cx, cy), angle, h = at
    (tx, ty), t_angle, t_h = truth
    right, down = glyph_axes(angle)
    dx, dy = tx - cx, ty - cy
    turn = (t_angle - angle + 180.0) % 360.0 - 180.0
    return ((dx * right[0] + dy * right[1]) / h, (dx * down[0] + dy * down[1]) / h,
            turn / REFINE_ANGLE_UNIT, math.log(t_h / h))


def apply_refinement(at: tuple[tuple[float, float], float, float], out) -> tuple[tuple[float, float], float, float]:
    """The index geometry (centre, angle, height) that the refiner's output
    ``out`` (4 numbers) says, for a crop cut at ``at``.

    >>> at = ((100.0, 50.0), 30.0, 20.0)
    >>> truth = ((104.0, 47.0), 22.0, 23.0)
    >>> c, a, h = apply_refinement(at, refine_target(at, truth))
    >>> [round(c[0], 6), round(c[1], 6), round(a, 6), round(h, 6)]
    [104.0, 47.0, 22.0, 23.0]
    """
    (cx, cy), angle, h = at
    u, v, turn, log_h = (float(x) for x in out)
    right, down = glyph_axes(angle)
    return ((cx + (u * right[0] + v * down[0]) * h, cy + (u * right[1] + v * down[1]) * h),
            angle + turn * REFINE_ANGLE_UNIT, h * math.exp(log_h))


def card_outline(centre: tuple[float, float], angle_deg: float, card_h: float, width: int, height: int
                 ) -> np.ndarray:
    """The corners (N x 2, float32) of the part of a card of height ``card_h`` inside the image.

    The card is cut to the image: a turned card that reaches past the edge
    would otherwise get a box around empty corners, whose centre may not lie on
    the card at all.  (A card wholly outside keeps its four corners.)
    """
    rect = ((float(centre[0]), float(centre[1])), (card_h * CARD_ASPECT, card_h), -float(angle_deg))
    pts = cv2.boxPoints(rect).astype(np.float32)
    frame = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    area, inside = cv2.intersectConvexConvex(pts, frame)
    if area > 1.0 and inside is not None:
        pts = inside.reshape(-1, 2)
    return pts


def card_box(centre: tuple[float, float], angle_deg: float, card_h: float, width: int, height: int
             ) -> tuple[int, int, int, int]:
    """Axis-aligned box (x1, y1, x2, y2) of the part of a card of height ``card_h`` inside the image
    (:func:`card_outline`'s)."""
    return outline_box(card_outline(centre, angle_deg, card_h, width, height), width, height)


def outline_box(pts: np.ndarray, width: int, height: int) -> tuple[int, int, int, int]:
    """The whole-pixel box (x1, y1, x2, y2) around the points ``pts`` (N x 2), cut to the image."""
    x1, y1 = np.floor(pts.min(axis=0)).astype(int)
    x2, y2 = np.ceil(pts.max(axis=0)).astype(int)
    return (int(min(max(0, x1), width)), int(min(max(0, y1), height)),
            int(max(0, min(width, x2))), int(max(0, min(height, y2))))
