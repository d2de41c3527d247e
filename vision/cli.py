"""``cardtable recognise IMAGE... [--json] [--draw DIR]``: the cards in image files.

With ``--json`` prints one document::

    {"images": [{"file": "a.jpg", "cards": [{"card": "10H", "confidence": 0.98, "box": [x1, y1, x2, y2]}],
                 "unknown": [{"box": [x1, y1, x2, y2]}]}]}

Without it, a readable listing.  A file that is missing or is not an image is
reported on stderr (with an "error" entry in the JSON) after the others have
been read, and the exit status is then 2.

How a picture is read depends on what is known of the camera:

* nothing (the default): a photograph from a level camera (the table's far side
  at the top) of unknown lean, read as it is and, where that leaves an unknown
  box, also turned to straight down at a few leans; the reading that names the
  most cards is kept, unless its indices' sizes spread more than the picture's
  (``Recogniser.recognise_level``); a card is named at the confidence a turned
  picture needs (0.85), since the lean may squeeze its index.  Up to five
  readings' time on a slanted photo, one on a clear one;
* ``--overhead``: the camera looked straight down; read as it is, once, a card
  named at the model's accept threshold;
* ``--config FILE``: the table's calibration from a configuration file
  (``[geometry]``, as ``cardtable calibrate --write`` leaves it): pictures from a
  camera that leans off straight down are read turned to straight down
  (``vision/rectify.py``), as ``cardtable run`` reads them.

``--draw DIR`` also writes each picture read into ``DIR`` (made if need be) with
what was read drawn on it: a green box and the card's name and confidence for
each card, an orange box and a question mark for each unknown one; ``a.jpg``
becomes ``DIR/a.jpg`` (numbered, ``DIR/a-2.jpg``, where an earlier picture took
that name or where it is one of the pictures read: no picture is drawn over; a
picture in another format, a PNG).  A photograph's orientation tag is
honoured, as a phone shows it: the boxes are in the picture as it stands upright.

A large picture is read halved (``vision.recogniser.HALVE_FROM``); a JPEG that will be is
decoded halved in the first place, faster and in less memory (:func:`_read_image`), unless it is
to be drawn on.  The boxes are in the picture's own pixels all the same.
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

if TYPE_CHECKING:   # (the recogniser is imported once the arguments are checked)
    from vision.recogniser import Recognition


#: The markers of a JPEG's frame header, which holds its size: SOF0 to SOF15 but for DHT (C4),
#: JPG (C8) and DAC (CC), which share their range.
_FRAME_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
#: The markers that stand alone, with no length after them (RST0 to RST7, TEM).
_BARE_MARKERS = frozenset(range(0xD0, 0xD8)) | {0x01}


def jpeg_size(data: bytes | memoryview) -> tuple[int, int] | None:
    """The size (width, height) a JPEG's frame header gives, as stored (before an Exif orientation
    tag turns it), or None where ``data`` is not a JPEG or its header cannot be found.

    >>> ok, data = cv2.imencode(".jpg", np.zeros((30, 41, 3), np.uint8))
    >>> jpeg_size(data.tobytes()), jpeg_size(b"\\x89PNG..."), jpeg_size(data.tobytes()[:20])
    ((41, 30), None, None)
    """
    if data[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return None                                  # not at a marker: a damaged header
        marker = data[i + 1]
        if marker == 0xFF:                               # a fill byte before the marker
            i += 1
            continue
        if marker in _BARE_MARKERS:
            i += 2
            continue
        if marker == 0xDA:                               # the scan began with no frame header
            return None
        if marker in _FRAME_MARKERS:
            if i + 9 > len(data):
                return None
            height, width = struct.unpack(">HH", data[i + 5:i + 9])
            return (width, height) if width and height else None
        length = struct.unpack(">H", data[i + 2:i + 4])[0]
        if length < 2:                                   # (a segment's length counts its own two bytes)
            return None
        i += 2 + length
    return None


#: ``cv2.imdecode``'s flags that decode a JPEG at a half, a quarter and an eighth of its size.
_REDUCED = {1: cv2.IMREAD_REDUCED_COLOR_2, 2: cv2.IMREAD_REDUCED_COLOR_4, 3: cv2.IMREAD_REDUCED_COLOR_8}


def _read_image(path: Path, long_side: int | None = None) -> tuple[np.ndarray, int, tuple[int, int]]:
    """The picture in ``path``: ``(image, times, size)``, ``image`` shrunk ``times`` times by half
    from the picture's own ``size`` (width, height).

    With a detector's ``long_side``, a JPEG the recogniser would read halved
    (:func:`vision.recogniser.halvings`) is decoded at that size straight away (up to an eighth):
    libjpeg scales it as it decodes (each small pixel from its block's low frequencies: within
    half a level, on average, of the mean that :func:`vision.recogniser.halve` takes), in about
    half the time of the whole decode and a quarter of its memory; only as often as its sides
    stay whole, so that it is the picture the recogniser would read and the boxes grow back as
    the recogniser's own do (the recogniser halves the rest itself).  Anything else is decoded whole (``times`` 0).  Raises ``OSError``
    with a message for the user.
    """
    if not path.exists():
        raise OSError(f"{path}: no such file")
    if path.is_dir():
        raise OSError(f"{path}: is a directory, not an image")
    # imdecode from bytes, not imread: it works for any path (non-ASCII too)
    # and does not print OpenCV warnings for non-images.
    try:
        data = np.fromfile(str(path), dtype=np.uint8)
    except OSError as exc:
        raise OSError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    stored = jpeg_size(memoryview(data)) if long_side is not None else None
    if stored is not None:
        from vision.recogniser import halvings
        times = min(halvings(stored, long_side), max(_REDUCED))
        # Only whole blocks: where a side is not a multiple of the scale, its last small pixel
        # covers a part block, on an edge that an orientation tag may move (the recogniser
        # drops an odd last row or column of the picture as shown).  A phone's sides are.
        while times and any(v % (1 << times) for v in stored):
            times -= 1
        img = cv2.imdecode(data, _REDUCED[times]) if times else None
        if img is not None:
            small = (stored[0] >> times, stored[1] >> times)
            # (a photograph's orientation tag may have turned it a quarter)
            for size, got in ((stored, small), (stored[::-1], small[::-1])):
                if (img.shape[1], img.shape[0]) == got:
                    return img, times, size
    img = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if img is None:
        raise OSError(f"{path}: not an image OpenCV can read (JPEG, PNG, BMP, TIFF, WebP...)")
    return img, 0, (img.shape[1], img.shape[0])


def draw(image: np.ndarray, found: Recognition) -> np.ndarray:
    """A copy of ``image`` with ``found`` (a :class:`vision.recogniser.Recognition`) drawn on it:
    each card's box in green with its name and confidence, each unknown box in orange with a
    question mark; lines and letters grow with the picture, so that a phone's photo shows them too.

    >>> from vision.recogniser import CardReading, Recognition, UnknownCard
    >>> img = np.zeros((200, 300, 3), np.uint8)
    >>> out = draw(img, Recognition([CardReading("10H", 0.98, (20, 30, 120, 170))], [UnknownCard((150, 30, 250, 170))]))
    >>> out[100, 20].tolist(), out[100, 150].tolist(), img.any()
    ([0, 200, 0], [0, 150, 255], False)
    """
    out = image.copy()
    thick = max(2, round(max(image.shape[:2]) / 500))
    scale = thick / 3
    marks = [(c.box, f"{c.card} {c.confidence:.2f}", (0, 200, 0)) for c in found.cards]
    marks += [(u.box, "?", (0, 150, 255)) for u in found.unknown]
    for (x1, y1, x2, y2), text, colour in marks:
        cv2.rectangle(out, (x1, y1), (x2, y2), colour, thick)
        stroke = max(1, thick // 2)
        (w, h), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, stroke)
        top = y1 - h - base - thick if y1 - h - base - thick >= 0 else y1 + thick   # above the box, or inside
        left = max(0, min(x1, out.shape[1] - w - 2 * thick))                          # within the picture
        cv2.rectangle(out, (left, top), (left + w + 2 * thick, top + h + base + thick), colour, -1)
        cv2.putText(out, text, (left + thick, top + h + thick // 2), cv2.FONT_HERSHEY_SIMPLEX, scale,
                    (255, 255, 255), stroke, cv2.LINE_AA)
    return out


def _drawn_name(out_dir: Path, image: Path, taken: set[str], pictures: set[Path]) -> Path:
    """Where ``image``'s drawing goes in ``out_dir``: its own name (a PNG where it is not a JPEG
    or a PNG), numbered where an earlier picture of this run already took it or where it would
    land on one of the ``pictures`` read (resolved paths: ``--draw`` into the pictures' own
    folder must not draw over one, least of all one not read yet)."""
    suffix = image.suffix.lower() if image.suffix.lower() in (".jpg", ".jpeg", ".png") else ".png"
    name, k = image.stem + suffix, 1
    while name in taken or (out_dir / name).resolve() in pictures:
        k += 1
        name = f"{image.stem}-{k}{suffix}"
    taken.add(name)
    return out_dir / name


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="cardtable recognise",
                                 description="Recognise the playing cards in images.")
    ap.add_argument("images", nargs="+", metavar="IMAGE", help="image files (JPEG, PNG, ...)")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    ap.add_argument("--model", type=Path, default=None, help="model directory (default: the bundled model)")
    ap.add_argument("--threshold", type=float, default=None,
                    help="confidence below which a card is reported as unknown (default from the model; "
                         "0.85 at least where the picture is read turned or its lean is unknown)")
    ap.add_argument("--config", metavar="FILE", default=None,
                    help="a configuration file whose [geometry] calibration says how the camera looks at the "
                         "table: a slanted view is read turned to straight down, as cardtable run reads it")
    ap.add_argument("--overhead", action="store_true",
                    help="the camera looked straight down: read each picture as it is, once (without it, a "
                         "photograph that leaves a card unread is also read turned at a few leans)")
    ap.add_argument("--draw", metavar="DIR", type=Path, default=None,
                    help="also write each picture into DIR with its cards' boxes and names drawn on it")
    args = ap.parse_args(argv)
    if args.overhead and args.config is not None:
        ap.error("--overhead and --config both say how the camera looks at the table: give one")
    table = None
    if args.config is not None:
        from cardtable.config import ConfigError, load_config
        from vision.table_geometry import CalibrationError, TableGeometry
        try:
            geometry = load_config(args.config).geometry
            if not geometry.get("corners_px"):
                raise ConfigError(f"{args.config} has no [geometry] calibration (cardtable calibrate writes one)")
            table = TableGeometry.from_config(geometry)
        except (OSError, ConfigError, CalibrationError) as exc:
            print(f"cardtable recognise: {exc}", file=sys.stderr)
            return 2

    if args.draw is not None:
        try:
            args.draw.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            print(f"cardtable recognise: cannot make --draw {args.draw}: {exc.strerror or exc}", file=sys.stderr)
            return 2

    from vision.recogniser import ModelError, Recogniser, grown  # after argument errors, before any image
    from vision.rectify import table_view
    try:
        rec = Recogniser(args.model, accept_threshold=args.threshold)
    except ModelError as exc:
        print(f"cardtable recognise: {exc}", file=sys.stderr)
        return 2

    entries, errors, drawn = [], [], set()
    pictures = {Path(name).resolve() for name in args.images}
    for name in args.images:
        path = Path(name)
        try:
            # (a drawing is of the whole picture: it is decoded whole; the recogniser halves it)
            img, times, size = _read_image(path, rec.long_side if args.draw is None else None)
        except OSError as exc:
            errors.append(str(exc))
            entries.append({"file": name, "error": str(exc)})
            continue
        try:
            view = table_view(table, size) if table is not None else None
        except ValueError as exc:
            errors.append(f"{name}: {exc}")
            entries.append({"file": name, "error": f"{name}: {exc}"})
            continue
        for _ in range(times if view is not None else 0):
            view = view.halved()
        if table is not None or args.overhead:
            found = rec.recognise(img, view=view)
        else:
            found = rec.recognise_level(img)
        if times:
            found = grown(found, 1 << times, size, (img.shape[1], img.shape[0]))
        entry = {"file": name, **found.to_dict()}
        entries.append(entry)
        if args.draw is not None:
            target = _drawn_name(args.draw, path, drawn, pictures)
            ok, data = cv2.imencode(target.suffix, draw(img, found))
            try:
                if not ok:
                    raise OSError("OpenCV could not encode it")
                target.write_bytes(data.tobytes())
            except OSError as exc:
                errors.append(f"{name}: cannot write {target}: {exc.strerror or exc}")

    if args.json:
        print(json.dumps({"images": entries}))
    else:
        for e in entries:
            if "error" in e:
                continue
            print(f"{e['file']}: {len(e['cards'])} card(s)"
                  + (f", {len(e['unknown'])} unreadable" if e["unknown"] else ""))
            for c in e["cards"]:
                print(f"  {c['card']:>3}  {c['confidence']:.2f}  at {c['box']}")
            for u in e["unknown"]:
                print(f"    ?  unreadable card at {u['box']}")
    for msg in errors:
        print(f"cardtable recognise: {msg}", file=sys.stderr)
    return 2 if errors else 0
