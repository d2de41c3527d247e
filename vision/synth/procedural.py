"""Procedural deck designs: many typefaces and pip shapes, for training only.

The registry decks give 15 training designs; a recogniser trained on 15
typefaces is unsure of a 16th.  Real decks differ mostly in the index's
typeface, weight, size, the shape of the small suit pip and the colours, so
this module draws whole 52-card designs from those parameters: the rank in
one of the typefaces installed from Debian's font packages (URW base35,
Liberation, FreeFont, TeX Gyre, Linux Libertine, Lato, Open Sans, Roboto,
Caladea, Carlito, DejaVu), the pip as a font glyph or one of our own
parametric shapes, pip layouts for the number cards, and busy framed art for
the court cards (so that court art is seen as "not an index").

Each design is a pure function of its number: ``generated_deck_names(n)``
names them ``gen-000`` ... and :func:`build_generated_decks` renders them
into the face cache in the same format as the registry decks (a 52-card SVG
sheet through ``rsvg-convert``), with the index box measured from a second
rendering that holds only the top-left indices.  Nothing here is committed
or shipped; the held-out benchmark designs are never among them.

    >>> from vision.synth.procedural import design_params
    >>> p = design_params(3)
    >>> sorted(p)[:3]
    ['aspect', 'back', 'black']
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
from pathlib import Path

import cv2
import numpy as np

from vision.index_geometry import MAX_INDEX_SHARE

from .decks import CARDS, FACE_DIR, FACE_HEIGHT, RANKS, SUITS, _trim_and_scale, rsvg_available

#: Typefaces for the rank (family, weight).  All come from Debian font packages
#: listed in scripts/apt-packages.txt; fontconfig falls back to DejaVu for a
#: missing one, which only narrows the variety.
RANK_FONTS: tuple[tuple[str, str], ...] = (
    ("Nimbus Sans", "bold"), ("Nimbus Sans", "normal"), ("Nimbus Sans Narrow", "bold"),
    ("Nimbus Roman", "bold"), ("Nimbus Roman", "normal"), ("C059", "bold"), ("C059", "normal"),
    ("P052", "bold"), ("P052", "normal"), ("URW Bookman", "bold"), ("URW Bookman", "normal"),
    ("URW Gothic", "bold"), ("URW Gothic", "normal"), ("Nimbus Mono PS", "bold"),
    ("Liberation Sans", "bold"), ("Liberation Serif", "bold"), ("Liberation Sans Narrow", "bold"),
    ("Liberation Mono", "bold"), ("FreeSans", "bold"), ("FreeSerif", "bold"), ("FreeSerif", "normal"),
    ("FreeMono", "bold"), ("TeX Gyre Adventor", "bold"), ("TeX Gyre Bonum", "bold"),
    ("TeX Gyre Cursor", "bold"), ("TeX Gyre Heros", "bold"), ("TeX Gyre Pagella", "bold"),
    ("TeX Gyre Schola", "bold"), ("TeX Gyre Termes", "bold"), ("TeX Gyre Chorus", "normal"),
    ("Linux Libertine O", "bold"), ("Linux Libertine O", "normal"), ("Linux Biolinum O", "bold"),
    ("Lato", "bold"), ("Lato", "900"), ("Lato", "normal"), ("Open Sans", "bold"), ("Open Sans", "800"),
    ("Open Sans Condensed", "bold"), ("Roboto", "bold"), ("Roboto", "500"), ("Roboto Condensed", "bold"),
    ("Caladea", "bold"), ("Carlito", "bold"), ("DejaVu Sans", "bold"), ("DejaVu Serif", "bold"),
    ("DejaVu Sans Mono", "bold"), ("DejaVu Sans Condensed", "bold"),
    # Second set (fonts-gfs-*, -oldstandard, -cmu, -adf-*, -cabin, -cantarell, -ebgaramond, -inter,
    # -quattrocento, -sil-*, -croscore, -jura, -comfortaa, -cardo): Didone and old-style serifs that
    # many card decks use, and more grotesques.
    ("GFS Didot", "bold"), ("GFS Didot", "normal"), ("GFS BodoniClassic", "normal"),
    ("Old Standard TT", "bold"), ("Old Standard TT", "normal"), ("CMU Serif", "bold"), ("CMU Serif", "normal"),
    ("CMU Sans Serif", "bold"), ("CMU Bright", "bold"), ("CMU Concrete", "bold"),
    ("Baskervald ADF Std", "bold"), ("Baskervald ADF Std", "900"), ("Gillius ADF", "bold"),
    ("Universalis ADF Std", "bold"), ("Romande ADF Std", "600"), ("Accanthis ADF Std", "bold"),
    ("Cabin", "bold"), ("Cabin", "600"), ("Cantarell", "bold"), ("Cantarell", "800"),
    ("EB Garamond", "bold"), ("EB Garamond", "normal"), ("Inter", "bold"), ("Inter", "800"),
    ("Quattrocento", "normal"), ("Charis SIL", "bold"), ("Andika", "bold"), ("Gentium Plus", "bold"),
    ("Arimo", "bold"), ("Tinos", "bold"), ("Cousine", "bold"), ("Jura", "bold"), ("Comfortaa", "bold"),
    ("Cardo", "bold"),
)
#: Fonts that carry the four suit glyphs (U+2660 spade, 2665 heart, 2666 diamond, 2663 club).
PIP_FONTS: tuple[str, ...] = ("DejaVu Sans", "FreeSerif", "FreeSans", "Standard Symbols PS", "D050000L",
                              "Nimbus Sans", "DejaVu Serif")
_SUIT_GLYPH = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}

SHEET_MARGIN = 12  # user units around each card on the sheet


def generated_deck_names(n: int) -> list[str]:
    return [f"gen-{i:03d}" for i in range(n)]


def design_params(number: int) -> dict:
    """The random but reproducible choices that make design ``number``."""
    rng = np.random.default_rng([7321, number])
    font, weight = RANK_FONTS[int(rng.integers(len(RANK_FONTS)))]
    red = [int(rng.integers(150, 236)), int(rng.integers(0, 45)), int(rng.integers(0, 70))]  # R, G, B
    black = [int(rng.integers(0, 45))] * 3 if rng.random() < 0.8 else [int(rng.integers(0, 40)), int(rng.integers(0, 40)), int(rng.integers(40, 90))]
    four_colour = bool(rng.random() < 0.12)
    paper = int(rng.integers(232, 256))
    aspect = float(rng.uniform(0.64, 0.72))                          # width / height
    rank_h = float(rng.uniform(0.06, 0.16))                          # cap height / card height
    squeeze_10 = bool(rank_h > 0.11 or rng.random() < 0.5)           # "10" narrowed, as jumbo decks do
    gap = float(rng.uniform(0.05, 0.35))                             # rank-to-pip gap / cap height
    # Real indices stay within MAX_INDEX_SHARE of the card's height (jumbo designs).  Pips
    # go down to 0.4 of the rank's height, as jumbo-index decks print them (from 0.55 before
    # session 40; the smaller ones cost nothing on the benchmark: docs/vision-experiments.md).
    pip_scale = min(float(rng.uniform(0.4, 1.0)), MAX_INDEX_SHARE / rank_h - 1 - gap)
    # Keep the widest rank ("10") inside the card: half its width plus a margin.
    half_10 = (0.66 if squeeze_10 else 0.78) * rank_h / aspect
    index_x = max(float(rng.uniform(0.07, 0.12)), half_10 + 0.03)
    return {
        "font": font, "weight": weight,
        "italic": bool(rng.random() < 0.08),
        "aspect": aspect,
        "rank_h": rank_h,
        "squeeze_10": squeeze_10,
        "pip_source": "glyph" if rng.random() < 0.45 else "shape",
        "pip_font": PIP_FONTS[int(rng.integers(len(PIP_FONTS)))],
        "pip_scale": pip_scale,                                       # pip height / rank cap height
        "pip_gap": gap,
        "index_x": index_x,                                           # index centre / card width
        "index_y": float(rng.uniform(0.035, 0.075)),                  # index top / card height
        "shape": {"heart_w": float(rng.uniform(0.85, 1.1)), "diamond_w": float(rng.uniform(0.55, 0.85)),
                  "diamond_curve": float(rng.uniform(0.0, 0.5)), "club_r": float(rng.uniform(0.19, 0.25)),
                  "spade_w": float(rng.uniform(0.85, 1.1)), "stem": float(rng.uniform(0.1, 0.2))},
        "red": red, "black": black, "four_colour": four_colour,
        "blue": [int(rng.integers(0, 40)), int(rng.integers(40, 110)), int(rng.integers(150, 230))],
        "green": [int(rng.integers(0, 40)), int(rng.integers(110, 160)), int(rng.integers(20, 80))],
        "paper": [paper, paper - int(rng.integers(0, 10)), paper - int(rng.integers(0, 22))],
        "radius": float(rng.uniform(0.025, 0.07)),
        "frame": bool(rng.random() < 0.3),
        "frame_colour": [int(x) for x in rng.integers(0, 200, 3)],
        "centre_pip": float(rng.uniform(0.13, 0.19)),                 # number-card pips: 0.75 x this x card height
        "court_letter_font": RANK_FONTS[int(rng.integers(len(RANK_FONTS)))][0],
        "court_colours": [[int(x) for x in rng.integers(0, 256, 3)] for _ in range(4)],
        "back": int(rng.integers(1 << 30)),
    }


def _hex(rgb) -> str:
    return "#%02x%02x%02x" % tuple(int(max(0, min(255, v))) for v in rgb)


def _suit_colour(p: dict, suit: str) -> str:
    if p["four_colour"]:
        return _hex({"S": p["black"], "H": p["red"], "D": p["blue"], "C": p["green"]}[suit])
    return _hex(p["red"] if suit in "HD" else p["black"])


def _shape_path(suit: str, s: dict) -> str:
    """A suit pip as a path in a unit box centred on (0, 0), height 1."""
    if suit == "H":
        w = 0.5 * s["heart_w"]
        return (f"M0,0.48 C{-0.1 * w / 0.5:.3f},0.32 {-w:.3f},0.1 {-w:.3f},-0.18 "
                f"C{-w:.3f},-0.42 {-0.45 * w:.3f},-0.56 0,-0.3 C{0.45 * w:.3f},-0.56 {w:.3f},-0.42 {w:.3f},-0.18 "
                f"C{w:.3f},0.1 {0.1 * w / 0.5:.3f},0.32 0,0.48 Z")
    if suit == "D":
        w = 0.5 * s["diamond_w"]
        q = s["diamond_curve"]
        qx, qy = w * (0.5 - 0.3 * q), 0.5 * (0.5 - 0.3 * q)
        return (f"M0,-0.5 Q{qx:.3f},{-qy:.3f} {w:.3f},0 Q{qx:.3f},{qy:.3f} 0,0.5 "
                f"Q{-qx:.3f},{qy:.3f} {-w:.3f},0 Q{-qx:.3f},{-qy:.3f} 0,-0.5 Z")
    if suit == "S":
        w = 0.5 * s["spade_w"]
        st = s["stem"]
        return (f"M0,-0.5 C{-0.1:.3f},-0.33 {-w:.3f},-0.15 {-w:.3f},0.1 C{-w:.3f},0.32 {-0.4 * w:.3f},0.42 "
                f"-0.05,0.2 L{-st:.3f},0.5 L{st:.3f},0.5 L0.05,0.2 C{0.4 * w:.3f},0.42 {w:.3f},0.32 {w:.3f},0.1 "
                f"C{w:.3f},-0.15 0.1,-0.33 0,-0.5 Z")
    r = s["club_r"]
    st = s["stem"]
    return (f"M0,0.05 L{-st:.3f},0.5 L{st:.3f},0.5 Z "
            + " ".join(f"M{cx - r:.3f},{cy:.3f} a{r:.3f},{r:.3f} 0 1,0 {2 * r:.3f},0 a{r:.3f},{r:.3f} 0 1,0 {-2 * r:.3f},0 Z"
                       for cx, cy in ((0.0, -0.5 + r), (-0.5 + r, 0.12), (0.5 - r, 0.12), (0.0, 0.05))))


def _pip(p: dict, suit: str, cx: float, cy: float, h: float, turn: bool = False) -> str:
    """One suit pip of height ``h`` centred on (cx, cy), optionally turned 180 degrees."""
    colour = _suit_colour(p, suit)
    rot = f" rotate(180)" if turn else ""
    if p["pip_source"] == "glyph":
        # Suit glyphs sit on the baseline and are about 0.75 em high.
        fs = h / 0.75
        return (f'<g transform="translate({cx:.2f},{cy:.2f}){rot}"><text x="0" y="{0.37 * fs:.2f}" '
                f'font-family="{p["pip_font"]}" font-size="{fs:.2f}" text-anchor="middle" fill="{colour}">'
                f'{_SUIT_GLYPH[suit]}</text></g>')
    return (f'<path transform="translate({cx:.2f},{cy:.2f}){rot} scale({h:.2f})" d="{_shape_path(suit, p["shape"])}" '
            f'fill="{colour}"/>')


def _index(p: dict, rank: str, suit: str, W: float, H: float) -> str:
    """The top-left corner index (rank above pip), in card coordinates."""
    cap = p["rank_h"] * H
    fs = cap / 0.72                      # cap height is about 0.72 em in these typefaces
    x = p["index_x"] * W
    top = p["index_y"] * H
    style = ' font-style="italic"' if p["italic"] else ""
    fit = ""
    if rank == "10" and p["squeeze_10"]:
        fit = f' textLength="{0.95 * fs:.2f}" lengthAdjust="spacingAndGlyphs"'
    text = (f'<text x="{x:.2f}" y="{top + cap:.2f}" font-family="{p["font"]}" font-weight="{p["weight"]}"{style} '
            f'font-size="{fs:.2f}" text-anchor="middle" fill="{_suit_colour(p, suit)}"{fit}>{rank}</text>')
    ph = cap * p["pip_scale"]
    return text + _pip(p, suit, x, top + cap + p["pip_gap"] * cap + ph / 2, ph)


_LAYOUT = {
    1: [(0.5, 0.5)],
    2: [(0.5, 0.0), (0.5, 1.0)],
    3: [(0.5, 0.0), (0.5, 0.5), (0.5, 1.0)],
    4: [(0, 0), (1, 0), (0, 1), (1, 1)],
    5: [(0, 0), (1, 0), (0.5, 0.5), (0, 1), (1, 1)],
    6: [(0, 0), (1, 0), (0, 0.5), (1, 0.5), (0, 1), (1, 1)],
    7: [(0, 0), (1, 0), (0.5, 0.25), (0, 0.5), (1, 0.5), (0, 1), (1, 1)],
    8: [(0, 0), (1, 0), (0.5, 0.25), (0, 0.5), (1, 0.5), (0.5, 0.75), (0, 1), (1, 1)],
    9: [(0, 0), (1, 0), (0, 1 / 3), (1, 1 / 3), (0.5, 0.5), (0, 2 / 3), (1, 2 / 3), (0, 1), (1, 1)],
    10: [(0, 0), (1, 0), (0.5, 1 / 6), (0, 1 / 3), (1, 1 / 3), (0, 2 / 3), (1, 2 / 3), (0.5, 5 / 6), (0, 1), (1, 1)],
}


def _centre(p: dict, rank: str, suit: str, W: float, H: float, rng: np.random.Generator) -> str:
    # The art keeps clear of the indices, as on real cards (jumbo designs move it inwards).
    index_right = (p["index_x"] + (0.66 if p["squeeze_10"] else 0.78) * p["rank_h"] / p["aspect"] + 0.03) * W
    if rank in ("J", "Q", "K"):
        x0, y0, x1, y1 = max(0.2 * W, index_right), 0.13 * H, min(0.8 * W, W - index_right), 0.87 * H
        c = p["court_colours"]
        parts = [f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{y1 - y0:.1f}" fill="{_hex(c[0])}" '
                 f'stroke="{_hex(p["black"])}" stroke-width="{0.006 * H:.2f}"/>']
        for _ in range(int(rng.integers(6, 14))):  # robes, crowns, faces: busy shapes in the frame
            kind = rng.integers(3)
            col = _hex(c[int(rng.integers(4))] if rng.random() < 0.7 else p["red"] if rng.random() < 0.5 else p["black"])
            cx, cy = rng.uniform(x0, x1), rng.uniform(y0, y1)
            s = rng.uniform(0.05, 0.2) * W
            if kind == 0:
                parts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{s:.1f}" fill="{col}"/>')
            elif kind == 1:
                parts.append(f'<rect x="{max(x0, cx - s):.1f}" y="{max(y0, cy - s / 2):.1f}" width="{s:.1f}" '
                             f'height="{s / 2:.1f}" fill="{col}" transform="rotate({rng.uniform(-40, 40):.0f},{cx:.1f},{cy:.1f})"/>')
            else:
                parts.append(f'<path d="M{cx:.1f},{cy:.1f} l{s:.1f},{s / 3:.1f} l{-s / 2:.1f},{s:.1f} Z" fill="{col}"/>')
        # The court letter drawn large in the art (a classic confuser for a rank reader).
        parts.append(f'<text x="{W / 2:.1f}" y="{0.55 * H:.1f}" font-family="{p["court_letter_font"]}" '
                     f'font-size="{0.3 * H:.1f}" text-anchor="middle" fill="{_hex(c[1])}" opacity="0.8">{rank}</text>')
        parts.append(_pip(p, suit, x0 + 0.1 * W, y0 + 0.09 * H, 0.08 * H))
        parts.append(_pip(p, suit, x1 - 0.1 * W, y1 - 0.09 * H, 0.08 * H, turn=True))
        return "".join(parts)
    n = 1 if rank == "A" else int(rank)
    if n == 1:
        return _pip(p, suit, W / 2, H / 2, float(rng.uniform(0.25, 0.45)) * W)
    ph = p["centre_pip"] * H * 0.75
    xa = min(0.4 * W, max(0.3 * W, index_right + 0.4 * ph))
    ph = min(ph, 1.6 * (xa - index_right))  # narrow cards with jumbo indices get smaller pips
    xb = W - xa
    ya, yb = 0.2 * H, 0.8 * H
    out = []
    for u, v in _LAYOUT[n]:
        cx = xa + (xb - xa) * u
        cy = ya + (yb - ya) * v
        out.append(_pip(p, suit, cx, cy, ph, turn=v > 0.55))
    return "".join(out)


def sheet_svg(number: int, index_only: bool = False) -> str:
    """An SVG sheet of the 52 cards of design ``number`` (13 columns, suits in rows).

    ``index_only`` draws the blank cards with only their top-left index, so
    that the index's extent can be measured from the rendering.
    """
    p = design_params(number)
    H = 320.0
    W = H * p["aspect"]
    m = SHEET_MARGIN
    cw, chh = W + 2 * m, H + 2 * m
    rng = np.random.default_rng([7321, number, 1])
    cards = []
    for row, suit in enumerate(SUITS):
        for col, rank in enumerate(RANKS):
            x, y = col * cw + m, row * chh + m
            # The index-only sheet has no edge line, so that only the index is ink there.
            edge = 'stroke="none"' if index_only else 'stroke="#8c8c8c" stroke-width="1"'
            body = [f'<rect x="0" y="0" width="{W:.2f}" height="{H:.2f}" rx="{p["radius"] * W:.2f}" '
                    f'fill="{_hex(p["paper"])}" {edge}/>']
            if not index_only:
                if p["frame"]:
                    body.append(f'<rect x="{0.04 * W:.1f}" y="{0.03 * H:.1f}" width="{0.92 * W:.1f}" height="{0.94 * H:.1f}" '
                                f'rx="{p["radius"] * W:.1f}" fill="none" stroke="{_hex(p["frame_colour"])}" stroke-width="1.2"/>')
                body.append(_centre(p, rank, suit, W, H, rng))
            idx = _index(p, rank, suit, W, H)
            body.append(idx)
            if not index_only:
                body.append(f'<g transform="rotate(180,{W / 2:.2f},{H / 2:.2f})">{idx}</g>')
            cards.append(f'<g transform="translate({x:.2f},{y:.2f})">{"".join(body)}</g>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{13 * cw:.0f}" height="{4 * chh:.0f}" '
            f'viewBox="0 0 {13 * cw:.2f} {4 * chh:.2f}">{"".join(cards)}</svg>')


def _cells(png: Path, number: int) -> dict[str, np.ndarray]:
    sheet = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
    if sheet is None or sheet.ndim != 3 or sheet.shape[2] != 4:
        raise ValueError(f"rsvg-convert gave no RGBA sheet for design {number}")
    ch, cw = sheet.shape[0] / 4, sheet.shape[1] / 13
    out = {}
    for row, suit in enumerate(SUITS):
        for col, rank in enumerate(RANKS):
            out[rank + suit] = sheet[int(round(row * ch)):int(round((row + 1) * ch)),
                                     int(round(col * cw)):int(round((col + 1) * cw))]
    return out


def render_design(number: int, tmp: Path) -> tuple[dict[str, np.ndarray], tuple[float, float, float, float]]:
    """Faces (BGRA, FACE_HEIGHT high) and the measured top-left index box of design ``number``."""
    scale = 2  # render at twice the face height, then scale down (smooth edges)
    width = int(round(13 * (320 * design_params(number)["aspect"] + 2 * SHEET_MARGIN) * scale))
    sheets = {}
    for kind, only in (("full", False), ("index", True)):
        svg, png = tmp / f"{kind}.svg", tmp / f"{kind}.png"
        svg.write_text(sheet_svg(number, index_only=only))
        subprocess.run(["rsvg-convert", "-f", "png", "-w", str(width), "--keep-aspect-ratio", "-o", str(png), str(svg)],
                       check=True, capture_output=True)
        sheets[kind] = _cells(png, number)
    faces = {c: _trim_and_scale(img) for c, img in sheets["full"].items()}
    # The index box: union of the top-left ink over all 52 index-only cards.
    x0 = y0 = 1.0
    x1 = y1 = 0.0
    for c, img in sheets["index"].items():
        card = _trim_and_scale(img)
        h, w = card.shape[:2]
        bgr = card[:, :, :3].astype(np.int16)
        paper = np.median(bgr[h // 2 - 5:h // 2 + 5, w // 2 - 5:w // 2 + 5].reshape(-1, 3), axis=0)
        ink = (np.abs(bgr - paper).max(axis=2) > 60) & (card[:, :, 3] > 128)
        ink[:max(2, int(0.015 * h))] = False  # the card's own edge line
        ink[:, :max(2, int(0.015 * w))] = False
        ink[int(0.5 * h):] = False
        ink[:, int(0.5 * w):] = False
        ys, xs = np.nonzero(ink)
        if len(xs) == 0:
            raise ValueError(f"design {number}: card {c} has no visible index")
        x0, y0 = min(x0, xs.min() / w), min(y0, ys.min() / h)
        x1, y1 = max(x1, (xs.max() + 1) / w), max(y1, (ys.max() + 1) / h)
    m = 0.01
    return faces, (max(0.0, x0 - m * 0.7), max(0.0, y0 - m), min(1.0, x1 + m * 0.7), min(1.0, y1 + m))


def _design_digest(number: int) -> str:
    """A design's parameters in 16 hex digits: rendered anew when they change (a new typeface list, say)."""
    return hashlib.sha256(json.dumps(design_params(number), sort_keys=True).encode()).hexdigest()[:16]


def _build_design(job: tuple[int, str, str]) -> str:
    """Render design ``number`` into ``face_dir/name`` (a worker of :func:`build_generated_decks`)."""
    number, name, face_dir = job
    p, out = design_params(number), Path(face_dir) / name
    with tempfile.TemporaryDirectory() as tmp:
        faces, box = render_design(number, Path(tmp))
    out.mkdir(parents=True, exist_ok=True)
    for card, img in faces.items():
        cv2.imwrite(str(out / f"{card}.png"), img)
    meta = {"name": name, "index_box": box, "licence": "generated (fonts: their Debian packages' licences)",
            "package": "vision.synth.procedural", "note": f"{p['font']} {p['weight']}, pips: {p['pip_source']}",
            "face_height": FACE_HEIGHT, "params": _design_digest(number)}
    (out / "deck.json").write_text(json.dumps(meta, indent=1))   # last: a design without it is unfinished
    return name


def build_generated_decks(n: int, face_dir: Path = FACE_DIR, log=print, workers: int = 1,
                          first: int = 0) -> list[str]:
    """Render designs ``gen-000`` .. ``gen-{n-1}`` into the face cache (idempotent); return their
    names.  ``first``: start there instead (designs a model never trained on, for a benchmark).

    ``workers`` processes render them at once: a design takes about 5 s, most of it
    in ``rsvg-convert``, so the 128 of ``full`` take about 10 minutes one at a time.
    Each design is a pure function of its number, so the files are the same either way.
    """
    if not rsvg_available():
        log("procedural decks: rsvg-convert missing (Debian librsvg2-bin)")
        return []
    names = generated_deck_names(n)[first:]
    todo = []
    for number, name in enumerate(names, start=first):
        meta = face_dir / name / "deck.json"
        if not (meta.exists() and json.loads(meta.read_text()).get("params") == _design_digest(number)):
            todo.append((number, name, str(face_dir)))
    if workers > 1 and len(todo) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(min(workers, len(todo))) as pool:
            list(pool.map(_build_design, todo))
    else:
        for job in todo:
            _build_design(job)
    if names:
        log(f"procedural decks ready: {len(names)}" + (f" ({len(todo)} rendered now)" if todo else ""))
    return names


if __name__ == "__main__":
    import sys
    names = build_generated_decks(int(sys.argv[1]) if len(sys.argv) > 1 else 8, log=print)
    print(", ".join(names))
