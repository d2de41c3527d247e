"""Procedural table textures: felt, wood, cloth, tablecloth patterns, carpet,
newspaper, plain (light or dark) tops, with optional clutter.

No photo data set is reachable from here, so backgrounds are generated.  The
kinds are chosen for what breaks card readers: light tables (no contrast at
card edges), wood grain and weave (edges everywhere), newspaper with printed
letters and digits (glyphs that look like indices), clutter (chips, coins,
phones).  Deterministic from the ``rng`` passed in; numpy and cv2 only.

``make_table(kind, width, height, rng) -> float32 BGR image in [0, 1]``;
``TABLE_KINDS`` lists the kinds; ``kind="random"`` picks one.
"""

from __future__ import annotations

import cv2
import numpy as np

TABLE_KINDS = ("felt", "wood", "cloth", "pattern", "carpet", "newspaper", "plain")


def smooth_noise(h: int, w: int, rng: np.random.Generator, cells: float, channels: int = 1) -> np.ndarray:
    """Low-frequency noise in about [-1, 1]: random values on a coarse grid, upsampled bicubically."""
    gh, gw = max(2, int(h / cells) + 2), max(2, int(w / cells) + 2)
    grid = rng.standard_normal((gh, gw, channels)).astype(np.float32)
    out = cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)
    return out.reshape(h, w, channels) if channels > 1 else out.reshape(h, w)


def _colour(rng: np.random.Generator, lo: float = 0.0, hi: float = 1.0) -> np.ndarray:
    return rng.uniform(lo, hi, 3).astype(np.float32)


def _felt(h, w, rng):
    base = rng.choice(np.array([[0.15, 0.45, 0.1], [0.45, 0.25, 0.05], [0.1, 0.1, 0.5],
                                [0.3, 0.3, 0.3], [0.1, 0.3, 0.35]], np.float32))
    base = base * rng.uniform(0.6, 1.3)
    img = np.ones((h, w, 3), np.float32) * base
    img *= 1 + 0.08 * smooth_noise(h, w, rng, 60)[..., None]
    img += 0.03 * rng.standard_normal((h, w, 1), dtype=np.float32)
    return img


def _wood(h, w, rng):
    dark = np.array([0.05, 0.12, 0.25], np.float32) * rng.uniform(0.6, 1.6)
    light = np.array([0.25, 0.45, 0.7], np.float32) * rng.uniform(0.7, 1.3)
    angle = rng.uniform(0, np.pi)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    t = xx * np.cos(angle) + yy * np.sin(angle)
    warp = smooth_noise(h, w, rng, rng.uniform(80, 250)) * rng.uniform(5, 25)
    freq = rng.uniform(0.05, 0.25)
    grain = 0.5 + 0.5 * np.sin(freq * (t + warp * 4) + smooth_noise(h, w, rng, 30) * 0.8)
    grain = grain ** rng.uniform(0.5, 3)
    # Plank seams.
    if rng.random() < 0.5:
        period = rng.uniform(80, 250)
        u = -xx * np.sin(angle) + yy * np.cos(angle)
        seam = (np.mod(u, period) < 2).astype(np.float32)
        grain = grain * (1 - 0.6 * seam)
    img = dark + (light - dark) * grain[..., None]
    img += 0.015 * rng.standard_normal((h, w, 1), dtype=np.float32)
    return img


def _cloth(h, w, rng):
    base = _colour(rng, 0.1, 0.9)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    p = rng.uniform(2.5, 6)
    weave = 0.5 + 0.25 * np.sin(xx * 2 * np.pi / p) + 0.25 * np.sin(yy * 2 * np.pi / p)
    img = base * (0.8 + 0.3 * weave[..., None])
    img *= 1 + 0.1 * smooth_noise(h, w, rng, 40)[..., None]
    return img


def _pattern(h, w, rng):
    a, b = _colour(rng, 0.0, 1.0), _colour(rng, 0.0, 1.0)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    period = rng.uniform(15, 120)
    kind = rng.integers(3)
    if kind == 0:  # gingham / checks
        m = ((np.floor(xx / period) + np.floor(yy / period)) % 2).astype(np.float32)
    elif kind == 1:  # stripes at an angle
        ang = rng.uniform(0, np.pi)
        m = (np.mod(xx * np.cos(ang) + yy * np.sin(ang), period) < period / 2).astype(np.float32)
    else:  # polka dots
        m = ((np.mod(xx, period) - period / 2) ** 2 + (np.mod(yy, period) - period / 2) ** 2
             < (period / 4) ** 2).astype(np.float32)
    m = cv2.GaussianBlur(m, (0, 0), 0.8)
    return a + (b - a) * m[..., None]


def _carpet(h, w, rng):
    base = _colour(rng, 0.1, 0.7)
    speck = cv2.GaussianBlur(rng.random((h, w, 3)).astype(np.float32), (0, 0), rng.uniform(0.7, 2))
    img = base * (0.6 + 0.8 * speck)
    img *= 1 + 0.15 * smooth_noise(h, w, rng, 50)[..., None]
    return img


_GLYPHS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 .,"


def _newspaper(h, w, rng):
    paper = rng.uniform(0.75, 0.95)
    img = np.full((h, w, 3), paper, np.float32)
    img *= np.array([1.0, 1.0, 1.0]) - np.array([0.05, 0.0, -0.02]) * rng.random()
    canvas = (img * 255).astype(np.uint8)
    size = rng.uniform(0.3, 1.2)
    line_h = int(30 * size) + 4
    col_w = int(rng.uniform(150, 400))
    for x0 in range(int(rng.uniform(-50, 10)), w, col_w + 15):
        for y in range(int(rng.uniform(10, 30)), h + line_h, line_h):
            n = int(col_w / (18 * size)) + 1
            text = "".join(rng.choice(list(_GLYPHS), n))
            ink = int(rng.uniform(10, 60))
            cv2.putText(canvas, text, (x0, y), int(rng.choice([0, 2, 3, 4])), size,
                        (ink, ink, ink), max(1, int(2 * size)), cv2.LINE_AA)
    # Headlines: large letters, sometimes red, like a card index.
    for _ in range(rng.integers(0, 4)):
        col = (20, 20, 160) if rng.random() < 0.3 else (20, 20, 20)
        txt = "".join(rng.choice(list("AKQJ1023456789"), rng.integers(1, 4)))
        s = rng.uniform(1.5, 4)
        cv2.putText(canvas, txt, (int(rng.uniform(0, w)), int(rng.uniform(0, h))), int(rng.choice([0, 2, 3])),
                    s, col, int(2 * s), cv2.LINE_AA)
    return canvas.astype(np.float32) / 255


def _plain(h, w, rng):
    base = _colour(rng, 0.02, 1.0) if rng.random() < 0.6 else np.full(3, rng.uniform(0.6, 0.98), np.float32)
    img = np.ones((h, w, 3), np.float32) * base
    img *= 1 + 0.06 * smooth_noise(h, w, rng, 200)[..., None]
    img += 0.01 * rng.standard_normal((h, w, 1), dtype=np.float32)
    return img


_MAKERS = {"felt": _felt, "wood": _wood, "cloth": _cloth, "pattern": _pattern,
           "carpet": _carpet, "newspaper": _newspaper, "plain": _plain}


def add_clutter(img: np.ndarray, rng: np.random.Generator, count: int) -> None:
    """Draw objects lying on the table in place: chips, coins, a phone, a pen, a mug ring."""
    h, w = img.shape[:2]
    canvas = img
    for _ in range(count):
        col = tuple(float(c) for c in _colour(rng, 0.0, 1.0))
        cx, cy = int(rng.uniform(0, w)), int(rng.uniform(0, h))
        kind = rng.integers(4)
        s = rng.uniform(0.02, 0.09) * max(h, w)
        if kind == 0:  # chip or coin with an edge ring
            cv2.circle(canvas, (cx, cy), int(s / 2), col, -1, cv2.LINE_AA)
            cv2.circle(canvas, (cx, cy), int(s / 2.6), tuple(c * 0.7 for c in col), max(1, int(s / 20)),
                       cv2.LINE_AA)
        elif kind == 1:  # phone or box
            rect = ((cx, cy), (s * 1.2, s * 2.2), rng.uniform(0, 180))
            pts = cv2.boxPoints(rect).astype(np.int32)
            cv2.fillConvexPoly(canvas, pts, tuple(c * 0.3 for c in col), cv2.LINE_AA)
        elif kind == 2:  # pen
            ang = rng.uniform(0, np.pi)
            d = np.array([np.cos(ang), np.sin(ang)]) * s * 1.5
            cv2.line(canvas, (int(cx - d[0]), int(cy - d[1])), (int(cx + d[0]), int(cy + d[1])), col,
                     max(2, int(s / 10)), cv2.LINE_AA)
        else:  # mug ring or stain
            cv2.ellipse(canvas, ((cx, cy), (s, s * rng.uniform(0.8, 1.2)), rng.uniform(0, 180)),
                        tuple(c * 0.6 for c in col), max(1, int(s / 25)), cv2.LINE_AA)


def make_table(kind: str, width: int, height: int, rng: np.random.Generator, clutter: int = 0) -> np.ndarray:
    """A ``height x width`` float32 BGR table image in [0, 1]."""
    if kind == "random":
        kind = str(rng.choice(TABLE_KINDS))
    if kind not in _MAKERS:
        raise ValueError(f"unknown table kind {kind!r}; expected one of {', '.join(TABLE_KINDS)} or 'random'")
    img = np.ascontiguousarray(_MAKERS[kind](height, width, rng), dtype=np.float32)
    if clutter:
        add_clutter(img, rng, clutter)
    return np.clip(img, 0, 1)
