"""``cardtable calibrate``: find the table from its four corner markers.

Print the marker sheet (``cardtable markers markers.pdf``), put marker 0 at
the table's top-left corner as the camera sees it, then 1, 2, 3 clockwise,
and run::

    cardtable calibrate --source picamera --table-mm 900 600 --seats 4 --config /etc/cardtable/config.toml

It grabs a frame, finds the markers, lays out the seat zones, writes a
picture with the zones drawn (``--preview``), and prints the ``[geometry]``
table to put in the configuration (or writes it into ``--config`` with
``--write``).  Four corners can also be given by hand with ``--corners``.
"""

from __future__ import annotations

import argparse
import sys

def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="cardtable calibrate", description=__doc__.split("\n\n")[0])
    p.add_argument("--source", default="picamera", help="picamera | usb:N | video:PATH | images:GLOB")
    p.add_argument("--image", help="calibrate from this picture instead of a camera")
    p.add_argument("--table-mm", nargs=2, type=float, default=(900.0, 600.0), metavar=("WIDTH", "DEPTH"),
                   help="distance between the markers' centres, in millimetres")
    p.add_argument("--seats", type=int, default=4)
    p.add_argument("--scoreboard", action="store_true", help="keep a zone for twenty-two's scoring cards")
    p.add_argument("--corners", nargs=8, type=float, metavar="XY",
                   help="four corners by hand, in pixels: x0 y0 x1 y1 x2 y2 x3 y3 (clockwise from top-left)")
    p.add_argument("--preview", help="with --image: write the picture with the zones drawn to this file")
    p.add_argument("--config", help="the configuration file to update with --write")
    p.add_argument("--write", action="store_true", help="replace the [geometry] section of --config")
    args = p.parse_args(argv)
    import cv2

    from vision.live import calibrate, geometry_toml
    from vision.sources import ListSource, make_source
    from vision.table_geometry import CalibrationError, TableGeometry

    try:
        if args.image:
            image = cv2.imread(args.image)
            if image is None:
                raise CalibrationError(f"{args.image}: not an image")
            source = ListSource([image], name=args.image)
        else:
            source = make_source(args.source)
        if args.corners:
            if not args.image:
                raise CalibrationError("--corners needs --image (a picture to take the corners' pixels from)")
            c = args.corners
            geometry = TableGeometry([c[0:2], c[2:4], c[4:6], c[6:8]], args.table_mm, args.seats,
                                     image_size=(image.shape[1], image.shape[0]), scoreboard=args.scoreboard)
        else:
            geometry = calibrate(source, tuple(args.table_mm), args.seats, args.scoreboard)
    except (CalibrationError, ValueError) as exc:
        print(f"cardtable calibrate: {exc}", file=sys.stderr)
        return 2
    section = geometry_toml(geometry)
    if args.preview and args.image:
        cv2.imwrite(args.preview, geometry.draw(image.copy()))
    if args.write:
        if not args.config:
            print("cardtable calibrate: --write needs --config FILE", file=sys.stderr)
            return 2
        replace_section(args.config, section)
        print(f"wrote [geometry] to {args.config}")
    else:
        print(section, end="")
    return 0


def replace_section(path: str, section: str) -> None:
    """Replace (or append) the ``[geometry]`` table (and its ``[[geometry.zones]]``) of a TOML
    file, keeping the rest as written."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines(keepends=True)
    except FileNotFoundError:
        lines = []
    out, skipping = [], False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            skipping = stripped.strip("[]").split(".")[0] == "geometry"
        if not skipping:
            out.append(line)
    if out and not out[-1].endswith("\n"):
        out[-1] += "\n"
    text = "".join(out).rstrip("\n") + ("\n\n" if out else "") + section
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
