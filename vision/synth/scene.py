"""Scene renderer: cards from any rendered deck design placed on a table, with
hands, shadows, lighting and camera effects, and exact annotations.

This is the one place that turns "these cards lie here" into an image.  The
training data, the benchmark, the tests and (later) the demo footage of whole
games all go through it.  numpy and cv2 only; deterministic for a given spec
and ``rng`` seed.

Usage: place given cards at given positions with a given deck::

    import numpy as np
    from vision.synth.scene import SceneSpec, CardPlacement, Hand, Lighting, Camera, render_scene

    spec = SceneSpec(
        width=1280, height=720, table="wood",            # or "felt", ..., or a BGR uint8 image
        cards=[CardPlacement("QS", centre=(400, 360), angle=10, height=220, deck="letele"),
               CardPlacement("10H", centre=(470, 380), angle=-25, height=220, deck="letele")],
        hands=[Hand(centre=(1100, 650), angle=200, length=420)],   # a hand reaching in
        lighting=Lighting(temperature=0.3, glare=[(600, 300, 80, 40, 0.5)]),
        camera=Camera(blur=0.8, noise=2.0, jpeg=85))
    image, ann = render_scene(spec, np.random.default_rng(0))

* ``cards`` are drawn in list order: later cards lie on top of earlier ones,
  so overlaps and fans come from positions alone.  ``angle`` is in degrees,
  counter-clockwise on screen, 0 = upright; ``height`` is the card's long side
  in pixels; ``tilt`` (two small numbers, e.g. 0.05) adds a perspective
  residual; ``deck`` is any name from ``vision.synth.decks.available_decks()``
  ("letele" is the CC0 design; use it for anything shipped).
* ``table`` is a texture kind from :mod:`vision.synth.textures` (with
  ``table_seed`` to keep the same table across the frames of a video) or
  an image to use as is (resized to the scene).
* ``hands`` are skin-toned hand-and-forearm shapes drawn over the cards.
* The returned ``ann`` is a :class:`SceneAnnotation`: per card its corners,
  axis-aligned box and both corner indices with how much of each is visible.

For footage, render frame by frame with the same ``table_seed`` and a fresh
``Lighting``/``Camera`` per frame (or the same, for a locked camera).
:func:`random_scene_spec` samples the specs used for training and benchmarks.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, replace
from typing import Sequence

import cv2
import numpy as np

from .decks import CARDS, FACE_HEIGHT, load_deck
from .textures import make_table
from .view import CameraView

# ---------------------------------------------------------------------------
# Spec


@dataclass
class CardPlacement:
    """One face-up card: which card, which design, where, how big, how turned."""

    card: str
    centre: tuple[float, float]
    angle: float = 0.0
    height: float = 200.0
    deck: str = "letele"
    tilt: tuple[float, float] = (0.0, 0.0)


@dataclass
class Hand:
    """A hand and forearm reaching in: ``centre`` of the palm, ``angle`` the
    direction the fingers point (degrees, counter-clockwise, 0 = up),
    ``length`` of the whole shape in pixels."""

    centre: tuple[float, float]
    angle: float = 0.0
    length: float = 300.0
    skin: tuple[float, float, float] | None = None  # BGR in [0, 1]; None = sampled


@dataclass
class Lighting:
    """``temperature`` -1 (cool, bluish) .. +1 (warm, tungsten); ``brightness``
    gain; ``gradient`` strength of a linear light fall-off across the frame at
    ``gradient_angle``; ``glare`` ellipses (x, y, rx, ry, strength 0..1) of
    specular reflection; ``shadow`` strength of the cards' drop shadows."""

    temperature: float = 0.0
    brightness: float = 1.0
    gradient: float = 0.0
    gradient_angle: float = 0.0
    glare: list[tuple[float, float, float, float, float]] = field(default_factory=list)
    shadow: float = 0.35
    shadow_offset: tuple[float, float] = (4.0, 5.0)


@dataclass
class Camera:
    """Capture effects: Gaussian ``blur`` sigma, ``motion`` blur length (px)
    at ``motion_angle``, sensor ``noise`` sigma (0..255 scale), ``jpeg``
    quality (0 = none), ``downscale`` factor (< 1 renders softer detail).

    Where the camera looks from: ``lean`` degrees off straight down (0 = overhead),
    towards ``lean_direction`` (degrees counter-clockwise on screen, 0 = the top
    of the picture is the far side), through a lens of ``fov`` degrees across
    the picture; ``barrel`` the lens's barrel distortion (0 = none; 0.1 is a
    typical wide webcam, 0.3 a fisheye-like wide module).  The table is drawn as
    seen from overhead and then viewed this way, zoomed just enough that no
    picture edge shows past the table, and the annotations follow."""

    blur: float = 0.0
    motion: float = 0.0
    motion_angle: float = 0.0
    noise: float = 0.0
    jpeg: int = 0
    downscale: float = 1.0
    lean: float = 0.0
    lean_direction: float = 0.0
    fov: float = 66.0
    barrel: float = 0.0


@dataclass
class SceneSpec:
    width: int
    height: int
    cards: list[CardPlacement]
    table: str | np.ndarray = "felt"
    table_seed: int | None = None
    clutter: int = 0
    hands: list[Hand] = field(default_factory=list)
    lighting: Lighting = field(default_factory=Lighting)
    camera: Camera = field(default_factory=Camera)


# ---------------------------------------------------------------------------
# Annotations


#: The share of an index box's height, from its bottom, taken as the suit pip's: the pip lies
#: under the rank in every design we render (the generated designs' pips take 0.24 to 0.47, 0.36 on median).
PIP_SHARE = 0.35
#: The share of an index box's height, from its top, taken as the rank's: the rank glyph stands
#: over the pip (in the generated designs the pip takes 0.24 to 0.47 of the box, the rank the rest).
RANK_SHARE = 0.6


@dataclass
class IndexAnnotation:
    """One printed corner index as it lies in the image.

    ``centre`` in pixels; ``angle`` the direction the glyph's top points
    (degrees, same convention as :class:`CardPlacement`); ``height`` of the
    index box in pixels; ``quad`` its 4 corners; ``visible`` the fraction of
    the index not covered by later cards or hands (0..1); ``pip_visible`` the
    same of the suit pip's part of it (the box's bottom :data:`PIP_SHARE`): an
    edge lying over an index hides the pip first, and with it the suit;
    ``rank_visible`` the same of the rank's part (the box's top :data:`RANK_SHARE`)."""

    centre: tuple[float, float]
    angle: float
    height: float
    width: float
    quad: np.ndarray
    visible: float
    pip_visible: float = 1.0
    rank_visible: float = 1.0


@dataclass
class CardAnnotation:
    card: str
    deck: str
    corners: np.ndarray           # 4x2: top-left, top-right, bottom-right, bottom-left of the face
    box: tuple[int, int, int, int]  # axis-aligned x1, y1, x2, y2 clipped to the image
    centre: tuple[float, float]
    angle: float
    height: float
    indices: list[IndexAnnotation]
    visible: float                # fraction of the whole card not covered

    @property
    def readable(self) -> bool:
        """True when at least one index is mostly visible (what a reader can be asked to find)."""
        return any(ix.visible >= READABLE_FRACTION for ix in self.indices)


@dataclass
class SceneAnnotation:
    width: int
    height: int
    cards: list[CardAnnotation]

    def readable_cards(self) -> list[CardAnnotation]:
        return [c for c in self.cards if c.readable]


#: An index at least this visible counts as readable (the card must be found).
READABLE_FRACTION = 0.85
#: An index less visible than this counts as hidden (the card need not be found).
HIDDEN_FRACTION = 0.45

# ---------------------------------------------------------------------------
# Rendering


def _card_transform(p: CardPlacement, face_w: int, face_h: int) -> np.ndarray:
    """3x3 homography from face pixels to image pixels."""
    s = p.height / face_h
    a = math.radians(p.angle)
    ca, sa = math.cos(a), math.sin(a)
    src = np.array([[0, 0], [face_w, 0], [face_w, face_h], [0, face_h]], np.float32)
    dst = []
    tx, ty = p.tilt
    for (u, v) in src:
        u0, v0 = (u - face_w / 2) * s, (v - face_h / 2) * s
        # Perspective residual: scale each corner by its position along the tilt axes.
        k = 1.0 + tx * (u0 / (face_w * s)) * 2 + ty * (v0 / (face_h * s)) * 2
        u0, v0 = u0 * k, v0 * k
        dst.append([p.centre[0] + u0 * ca + v0 * sa, p.centre[1] - u0 * sa + v0 * ca])
    return cv2.getPerspectiveTransform(src, np.array(dst, np.float32))


def _apply(H: np.ndarray, pts: np.ndarray) -> np.ndarray:
    return cv2.perspectiveTransform(np.asarray(pts, np.float32).reshape(-1, 1, 2), H).reshape(-1, 2)


def _roi(pts: np.ndarray, w: int, h: int, pad: int = 2) -> tuple[int, int, int, int] | None:
    x0 = max(0, int(math.floor(pts[:, 0].min())) - pad)
    y0 = max(0, int(math.floor(pts[:, 1].min())) - pad)
    x1 = min(w, int(math.ceil(pts[:, 0].max())) + pad)
    y1 = min(h, int(math.ceil(pts[:, 1].max())) + pad)
    if x1 <= x0 or y1 <= y0:
        return None
    return x0, y0, x1, y1


def _hand_polygon(hand: Hand) -> np.ndarray:
    """Outline of a flat hand with four fingers and a thumb plus forearm, in image pixels."""
    L = hand.length
    # Local frame: y up is the finger direction; units of L.  Palm centre at (0, 0).
    pts = [(-0.13, -0.9), (-0.11, -0.15), (-0.21, 0.02), (-0.25, 0.12), (-0.2, 0.13),  # thumb side
           (-0.1, 0.06), (-0.11, 0.3), (-0.07, 0.31), (-0.05, 0.12), (-0.04, 0.34), (0.0, 0.35),
           (0.01, 0.13), (0.03, 0.33), (0.07, 0.32), (0.06, 0.11), (0.09, 0.27), (0.12, 0.26),
           (0.12, 0.05), (0.12, -0.15), (0.14, -0.9)]
    a = math.radians(hand.angle)
    ca, sa = math.cos(a), math.sin(a)
    out = []
    for x, y in pts:
        u, v = x * L, -y * L  # v down in image
        out.append([hand.centre[0] + u * ca + v * sa, hand.centre[1] - u * sa + v * ca])
    return np.array(out, np.float32)


def _colour_gains(temperature: float) -> np.ndarray:
    """BGR gains for a colour temperature shift (-1 cool .. +1 warm)."""
    t = float(np.clip(temperature, -1, 1))
    return np.array([1 - 0.35 * t, 1 - 0.05 * abs(t), 1 + 0.3 * t], np.float32) / (1 + 0.1 * abs(t))


def render_scene(spec: SceneSpec, rng: np.random.Generator | None = None
                 ) -> tuple[np.ndarray, SceneAnnotation]:
    """Render ``spec`` to a BGR uint8 image and its :class:`SceneAnnotation`."""
    rng = rng if rng is not None else np.random.default_rng(0)
    W, H = int(spec.width), int(spec.height)
    if W < 16 or H < 16:
        raise ValueError(f"scene too small: {W}x{H}")
    for p in spec.cards:
        if p.card not in CARDS:
            raise ValueError(f"unknown card {p.card!r}: expected e.g. 'AS', '10H', 'QD'")
    # Table.
    if isinstance(spec.table, np.ndarray):
        table = cv2.resize(spec.table, (W, H)).astype(np.float32) / 255.0
    else:
        trng = np.random.default_rng(spec.table_seed) if spec.table_seed is not None else rng
        table = make_table(spec.table, W, H, trng, clutter=spec.clutter)
    canvas = table
    owner = np.full((H, W), -1, np.int16)
    shadow_strength = spec.lighting.shadow
    sdx, sdy = spec.lighting.shadow_offset

    placed = []  # (placement, homography, face size, deck)
    for i, p in enumerate(spec.cards):
        deck = load_deck(p.deck)
        face = deck.faces[p.card]
        fh, fw = face.shape[:2]
        Hm = _card_transform(p, fw, fh)
        corners = _apply(Hm, np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float32))
        placed.append((p, Hm, (fw, fh), deck, corners))
        # Drop shadow first (under the card), then the card itself.  Rounded
        # card corners come from the face's own alpha channel.
        roi = _roi(np.vstack([corners, corners + [sdx * 3, sdy * 3]]), W, H, pad=8)
        if roi is None:
            continue
        x0, y0, x1, y1 = roi
        T = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64) @ Hm
        warped = cv2.warpPerspective(face, T, (x1 - x0, y1 - y0), flags=cv2.INTER_AREA
                                     if p.height < fh * 0.6 else cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
        alpha = warped[:, :, 3:4].astype(np.float32) / 255.0
        region = canvas[y0:y1, x0:x1]
        if shadow_strength > 0:
            S = np.float32([[1, 0, sdx], [0, 1, sdy]])
            sh = cv2.warpAffine(alpha[:, :, 0], S, (x1 - x0, y1 - y0))
            sh = cv2.GaussianBlur(sh, (0, 0), max(1.0, p.height / 60))
            region *= (1 - shadow_strength * sh)[:, :, None]
        rgb = warped[:, :, :3].astype(np.float32) / 255.0
        region[:] = region * (1 - alpha) + rgb * alpha
        owner[y0:y1, x0:x1][alpha[:, :, 0] > 0.5] = i

    # Hands on top of everything.
    for hand in spec.hands:
        poly = _hand_polygon(hand)
        skin = np.array(hand.skin if hand.skin is not None else
                        rng.choice(np.array([[0.55, 0.65, 0.85], [0.4, 0.5, 0.7], [0.25, 0.35, 0.5],
                                             [0.15, 0.22, 0.35], [0.6, 0.72, 0.9]], np.float32)), np.float32)
        mask = np.zeros((H, W), np.uint8)
        cv2.fillPoly(mask, [np.round(poly).astype(np.int32)], 255, cv2.LINE_AA)
        m = mask.astype(np.float32)[:, :, None] / 255.0
        if shadow_strength > 0:
            sh = cv2.GaussianBlur(np.roll(np.roll(m[:, :, 0], int(sdx * 4), 1), int(sdy * 4), 0), (0, 0),
                                  hand.length / 25)
            canvas *= (1 - shadow_strength * 1.2 * sh)[:, :, None]
        shade = 1 + 0.15 * cv2.GaussianBlur(m[:, :, 0], (0, 0), hand.length / 15)[:, :, None] - 0.1
        canvas[:] = canvas * (1 - m) + (skin * shade) * m
        owner[mask > 127] = -2

    # Where the camera looks from: the overhead table seen by a leaning camera through its lens.
    C = spec.camera
    view = CameraView(W, H, C.lean, C.lean_direction, C.fov, C.barrel)
    if not view.identity:
        canvas = view.warp(canvas)
        owner = view.warp(owner, nearest=True, border=-3)  # -3: past the table drawn (never shown)

    # Annotations: what of each card and each index remains visible.
    cards_ann = []
    for i, (p, Hm, (fw, fh), deck, corners) in enumerate(placed):
        if not view.identity:
            corners = view.to_picture(corners).astype(np.float32)
        bx0, by0, bx1, by1 = deck.index_box
        idx_local = [
            np.array([[bx0 * fw, by0 * fh], [bx1 * fw, by0 * fh], [bx1 * fw, by1 * fh], [bx0 * fw, by1 * fh]]),
            np.array([[(1 - bx0) * fw, (1 - by0) * fh], [(1 - bx1) * fw, (1 - by0) * fh],
                      [(1 - bx1) * fw, (1 - by1) * fh], [(1 - bx0) * fw, (1 - by1) * fh]]),
        ]
        idx_anns = []
        for k, q in enumerate(idx_local):
            quad = _apply(Hm, q) if view.identity else view.to_picture(_apply(Hm, q)).astype(np.float32)
            visible = _visible_fraction(quad, owner, i)
            pip_visible = _visible_fraction(_slice(quad, 1.0 - PIP_SHARE, 1.0), owner, i)
            rank_visible = _visible_fraction(_slice(quad, 0.0, RANK_SHARE), owner, i)
            c = quad.mean(axis=0)
            # Glyph top: top-left index is upright with the card, the other is turned 180.
            top_mid = (quad[0] + quad[1]) / 2
            bottom_mid = (quad[2] + quad[3]) / 2
            v = top_mid - bottom_mid
            ang = math.degrees(math.atan2(-v[0], -v[1]))
            idx_anns.append(IndexAnnotation((float(c[0]), float(c[1])), ang,
                                            float(np.linalg.norm(v)),
                                            float(np.linalg.norm(quad[1] - quad[0])), quad, visible,
                                            pip_visible, rank_visible))
        card_vis = _visible_fraction(corners, owner, i)
        box = _roi(corners, W, H, pad=0) or (0, 0, 0, 0)
        centre, angle, height = tuple(map(float, p.centre)), float(p.angle), float(p.height)
        if not view.identity:  # the card as the camera sees it: its centre, its long axis
            centre = tuple(map(float, corners.mean(axis=0)))
            up = (corners[0] + corners[1]) / 2 - (corners[2] + corners[3]) / 2
            angle, height = math.degrees(math.atan2(-up[0], -up[1])), float(np.linalg.norm(up))
        cards_ann.append(CardAnnotation(p.card, p.deck, corners, box, centre, angle, height, idx_anns, card_vis))

    # Lighting.
    L = spec.lighting
    canvas *= _colour_gains(L.temperature) * L.brightness
    if L.gradient:
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
        g = math.radians(L.gradient_angle)
        t = ((xx - W / 2) * math.cos(g) + (yy - H / 2) * math.sin(g)) / max(W, H)
        canvas *= (1 + L.gradient * t)[:, :, None]
    for (gx, gy, rx, ry, strength) in L.glare:
        mask = np.zeros((H, W), np.float32)
        cv2.ellipse(mask, ((float(gx), float(gy)), (float(2 * rx), float(2 * ry)), float(rng.uniform(0, 180))),
                    1.0, -1, cv2.LINE_AA)
        mask = cv2.GaussianBlur(mask, (0, 0), max(1.0, min(rx, ry) / 2))
        canvas += (strength * mask)[:, :, None]

    # Camera.
    img = canvas
    if C.downscale and C.downscale < 1:
        small = cv2.resize(img, (max(8, int(W * C.downscale)), max(8, int(H * C.downscale))),
                           interpolation=cv2.INTER_AREA)
        img = cv2.resize(small, (W, H), interpolation=cv2.INTER_LINEAR)
    if C.blur > 0:
        img = cv2.GaussianBlur(img, (0, 0), C.blur)
    if C.motion > 1:
        n = int(C.motion) | 1
        k = np.zeros((n, n), np.float32)
        k[n // 2, :] = 1
        R = cv2.getRotationMatrix2D((n / 2 - 0.5, n / 2 - 0.5), C.motion_angle, 1)
        k = cv2.warpAffine(k, R, (n, n))
        img = cv2.filter2D(img, -1, k / max(k.sum(), 1e-6))
    img = np.clip(img * 255.0, 0, 255)
    if C.noise > 0:
        img = img + rng.standard_normal(img.shape, dtype=np.float32) * np.float32(C.noise)
    out = np.clip(img, 0, 255).astype(np.uint8)
    if C.jpeg:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(C.jpeg)])
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out, SceneAnnotation(W, H, cards_ann)


def _slice(quad: np.ndarray, top: float, bottom: float) -> np.ndarray:
    """The part of index ``quad`` (corners 0, 1 along the glyph's top, 2, 3 along its
    bottom) from ``top`` to ``bottom`` of its height, both measured from the glyph's top.

    >>> _slice(np.array([[0, 0], [2, 0], [2, 10], [0, 10]], float), 0.0, 0.6).tolist()
    [[0.0, 0.0], [2.0, 0.0], [2.0, 6.0], [0.0, 6.0]]
    """
    left, right = quad[3] - quad[0], quad[2] - quad[1]
    return np.array([quad[0] + left * top, quad[1] + right * top, quad[1] + right * bottom, quad[0] + left * bottom])


def _visible_fraction(quad: np.ndarray, owner: np.ndarray, i: int) -> float:
    H, W = owner.shape
    roi = _roi(quad, W, H, pad=1)
    if roi is None:
        return 0.0
    x0, y0, x1, y1 = roi
    m = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillPoly(m, [np.round(quad - [x0, y0]).astype(np.int32)], 1)
    # Area of the full quad (part may fall outside the frame and so be invisible).
    full = abs(cv2.contourArea(quad.astype(np.float32)))
    if full < 1:
        return 0.0
    seen = np.count_nonzero((owner[y0:y1, x0:x1] == i) & (m > 0))
    return float(min(1.0, seen / full))


# ---------------------------------------------------------------------------
# Random scenes for training and benchmarks


def seen_from(spec: SceneSpec, lean: float, direction: float = 0.0, barrel: float = 0.0) -> SceneSpec:
    """``spec`` seen by a camera that leans ``lean`` degrees off straight down towards
    ``direction``, through a lens of ``barrel`` distortion (:class:`vision.synth.view.CameraView`).

    The leaning view zooms in so that the picture shows only the table; the cards and
    hands are first drawn that much smaller about the picture's centre, so that they keep
    about their size and stay in view.  A new spec; ``spec`` is left as it was."""
    out = copy.deepcopy(spec)
    out.camera = replace(out.camera, lean=float(lean), lean_direction=float(direction), barrel=float(barrel))
    zoom = CameraView(out.width, out.height, out.camera.lean, out.camera.lean_direction, out.camera.fov,
                      out.camera.barrel).zoom
    if zoom != 1.0:
        centre = np.array([out.width / 2.0, out.height / 2.0])
        for card in out.cards:
            card.centre = tuple(map(float, centre + (np.array(card.centre) - centre) / zoom))
            card.height /= zoom
        for hand in out.hands:
            hand.centre = tuple(map(float, centre + (np.array(hand.centre) - centre) / zoom))
            hand.length /= zoom
    return out


#: The views a scene drawn with ``views`` is seen from (:func:`random_scene_spec`): a lean of up
#: to 50 degrees, and in half of them a barrel lens of up to 0.2.
VIEW_LEAN = (5.0, 50.0)
VIEW_BARREL = 0.2
#: A dim room (``dim``): this share of the scene's light, and this much more sensor noise.
DIM_LIGHT = (0.25, 0.6)
DIM_NOISE = (4.0, 16.0)


def random_scene_spec(rng: np.random.Generator, decks: Sequence[str], width: int = 640, height: int = 480,
                      n_cards: int | None = None, card_height: tuple[float, float] = (60, 200),
                      max_cards: int = 8, hard: float = 1.0, views: float = 0.0, dim: float = 0.0) -> SceneSpec:
    """Sample a varied scene: 1..max_cards cards of one design (a real table
    uses one deck) in a scattered, fanned, row or pile layout, a random
    table, maybe hands and clutter, random lighting and camera effects.
    ``hard`` scales how strong the nuisances are (0 = clean).  ``views`` is the
    share of scenes seen by a camera that is not overhead (:func:`seen_from`,
    :data:`VIEW_LEAN`), ``dim`` the share lit as a dim room (:data:`DIM_LIGHT`);
    at 0 (the default) nothing more is drawn from ``rng``, so that the same seed
    gives the same scenes as before they existed."""
    n = int(n_cards if n_cards is not None else rng.integers(1, max_cards + 1))
    deck = str(rng.choice(list(decks)))
    cards = [str(c) for c in rng.choice(CARDS, size=n, replace=False)]
    ch = float(np.exp(rng.uniform(np.log(card_height[0]), np.log(card_height[1]))))
    placements: list[CardPlacement] = []
    layout = rng.choice(["scatter", "fan", "row", "pile"], p=[0.45, 0.2, 0.15, 0.2]) if n > 1 else "scatter"
    margin = ch * 0.3

    def tilt():
        return (float(rng.normal(0, 0.04 * hard)), float(rng.normal(0, 0.04 * hard)))

    def jitter_h():
        return ch * float(rng.uniform(0.95, 1.05))

    if layout == "fan":
        cx, cy = rng.uniform(margin + ch * 0.5, width - margin - ch * 0.5), rng.uniform(margin + ch * 0.5, height - margin - ch * 0.5)
        base = rng.uniform(0, 360)
        spread = rng.uniform(8, 22)
        for k, c in enumerate(cards):
            a = base + (k - (n - 1) / 2) * spread
            # Cards pivot about a point below their centre, like a hand of cards.
            r = ch * 0.45
            ar = math.radians(a)
            px, py = cx + r * -math.sin(ar) * 0.0, cy
            off = np.array([-math.sin(ar), -math.cos(ar)]) * r
            placements.append(CardPlacement(c, (float(px + off[0]), float(py + off[1])), float(a), jitter_h(), deck, tilt()))
    elif layout == "row":
        ang = rng.uniform(0, 360)
        step = ch * rng.uniform(0.2, 0.8)
        d = np.array([math.cos(math.radians(ang)), math.sin(math.radians(ang))])
        start = np.array([rng.uniform(0, width), rng.uniform(0, height)]) - d * step * (n - 1) / 2
        card_ang = rng.uniform(0, 360)
        for k, c in enumerate(cards):
            pos = start + d * step * k + rng.normal(0, ch * 0.03, 2)
            placements.append(CardPlacement(c, (float(pos[0]), float(pos[1])), float(card_ang + rng.normal(0, 4)),
                                            jitter_h(), deck, tilt()))
    elif layout == "pile":
        cx, cy = rng.uniform(margin, width - margin), rng.uniform(margin, height - margin)
        for c in cards:
            pos = (cx + rng.normal(0, ch * 0.25), cy + rng.normal(0, ch * 0.25))
            placements.append(CardPlacement(c, (float(pos[0]), float(pos[1])), float(rng.uniform(0, 360)),
                                            jitter_h(), deck, tilt()))
    else:
        for c in cards:
            pos = (rng.uniform(-margin * 0.5, width + margin * 0.5), rng.uniform(-margin * 0.5, height + margin * 0.5))
            placements.append(CardPlacement(c, (float(pos[0]), float(pos[1])), float(rng.uniform(0, 360)),
                                            jitter_h(), deck, tilt()))

    hands = []
    if rng.random() < 0.25 * hard:
        edge = rng.integers(4)
        cx = [rng.uniform(0, width), width, rng.uniform(0, width), 0][edge]
        cy = [0, rng.uniform(0, height), height, rng.uniform(0, height)][edge]
        toward = math.degrees(math.atan2(-(height / 2 - cy), width / 2 - cx)) - 90
        L = ch * rng.uniform(1.5, 2.5)
        d = rng.uniform(0.1, 0.45) * L
        ar = math.radians(toward)
        hands.append(Hand((float(cx - math.sin(ar) * d), float(cy - math.cos(ar) * d)), float(toward), float(L)))
    glare = []
    if rng.random() < 0.3 * hard:
        for _ in range(rng.integers(1, 3)):
            glare.append((float(rng.uniform(0, width)), float(rng.uniform(0, height)),
                          float(rng.uniform(0.05, 0.3) * ch), float(rng.uniform(0.05, 0.2) * ch),
                          float(rng.uniform(0.15, 0.6) * hard)))
    lighting = Lighting(temperature=float(rng.uniform(-0.7, 0.9) * hard),
                        brightness=float(np.exp(rng.normal(0, 0.25 * hard))),
                        gradient=float(rng.uniform(0, 0.8) * hard), gradient_angle=float(rng.uniform(0, 360)),
                        glare=glare, shadow=float(rng.uniform(0.1, 0.5)),
                        shadow_offset=(float(rng.normal(0, ch / 50)), float(rng.normal(0, ch / 50))))
    camera = Camera(blur=float(rng.uniform(0, 1.2) * hard) if rng.random() < 0.6 else 0.0,
                    motion=float(rng.uniform(0, ch / 40) * hard) if rng.random() < 0.2 else 0.0,
                    motion_angle=float(rng.uniform(0, 180)),
                    noise=float(rng.uniform(0, 6) * hard),
                    jpeg=int(rng.integers(40, 95)) if rng.random() < 0.6 * hard else 0,
                    downscale=float(rng.uniform(0.5, 1.0)) if rng.random() < 0.3 * hard else 1.0)
    spec = SceneSpec(width, height, placements, table="random",
                     clutter=int(rng.integers(0, 5)) if rng.random() < 0.5 else 0,
                     hands=hands, lighting=lighting, camera=camera)
    if views and rng.random() < views:
        barrel = float(rng.uniform(0, VIEW_BARREL)) if rng.random() < 0.5 else 0.0
        spec = seen_from(spec, float(rng.uniform(*VIEW_LEAN)), float(rng.uniform(0, 360)), barrel)
    if dim and rng.random() < dim:
        spec.lighting.brightness *= float(rng.uniform(*DIM_LIGHT))
        spec.camera.noise += float(rng.uniform(*DIM_NOISE))
    return spec
