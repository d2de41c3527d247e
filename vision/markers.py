"""The printable sheet of the four table-corner markers (ArUco ``DICT_4X4_50``, ids 0-3).

:func:`make_marker_sheet` writes one A4 page with the four markers, each
labelled with its corner (0 top-left, 1 top-right, 2 bottom-right, 3
bottom-left as the camera sees the table).  ``.pdf`` gives a PDF that prints
at true size (print at 100 %, no "fit to page"); ``.png`` gives a 300 dpi image
with its resolution recorded in the file.  Cut the four squares out and lay
them flat at the corners of the play area, text upright toward the bottom
edge; the play area runs between the markers' centres (the small cross).

Only numpy, cv2 and the standard library are used (the PDF is written by hand).

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "markers.pdf")
>>> make_marker_sheet(path) == path and open(path, "rb").read(5)
b'%PDF-'
"""

from __future__ import annotations

import struct
import sys
import zlib

import cv2
import numpy as np

from vision.table_geometry import CORNER_NAMES, MARKER_DICTIONARY, MARKER_IDS, aruco_dictionary

A4_MM = (210.0, 297.0)
MM_PER_INCH = 25.4


def marker_image(marker_id: int, pixels: int) -> np.ndarray:
    """One marker, ``pixels`` square, black on white (no quiet zone)."""
    return cv2.aruco.generateImageMarker(aruco_dictionary(), int(marker_id), int(pixels), borderBits=1)


def render_marker_sheet(size_mm: float = 70.0, dpi: int = 300) -> np.ndarray:
    """The A4 page as a grayscale image at ``dpi``: four markers of ``size_mm``."""
    px_per_mm = dpi / MM_PER_INCH
    w, h = int(round(A4_MM[0] * px_per_mm)), int(round(A4_MM[1] * px_per_mm))
    page = np.full((h, w), 255, np.uint8)
    if not 20 <= size_mm <= 90:
        raise ValueError(f"marker size must be 20-90 mm to fit four on A4, got {size_mm}")
    side = int(round(size_mm * px_per_mm))
    quiet = int(round(8 * px_per_mm))
    cell_w, cell_h = w // 2, (h - int(30 * px_per_mm)) // 2
    top = int(30 * px_per_mm)
    font = cv2.FONT_HERSHEY_SIMPLEX
    scale = dpi / 300 * 1.2
    cv2.putText(page, "Cardtable corner markers (ArUco 4x4_50) - print at 100%, no scaling", (int(10 * px_per_mm),
                int(12 * px_per_mm)), font, scale, 0, max(1, dpi // 150), cv2.LINE_AA)
    cv2.putText(page, f"Each black square is {size_mm:g} mm. Lay the markers flat at the corners of the play "
                "area; measure the table", (int(10 * px_per_mm), int(19 * px_per_mm)), font, scale * 0.75, 0,
                max(1, dpi // 200), cv2.LINE_AA)
    cv2.putText(page, "between the marker centres (the crosses) and enter width x height in mm at calibration.",
                (int(10 * px_per_mm), int(25 * px_per_mm)), font, scale * 0.75, 0, max(1, dpi // 200), cv2.LINE_AA)
    for k, (mid, corner) in enumerate(zip(MARKER_IDS, CORNER_NAMES)):
        col, row = k % 2, k // 2
        if k >= 2:  # bottom row reads right-to-left so the sheet mirrors the table: 3 2
            col = 1 - col
        cx = col * cell_w + cell_w // 2
        cy = top + row * cell_h + cell_h // 2
        x0, y0 = cx - side // 2, cy - side // 2
        page[y0:y0 + side, x0:x0 + side] = marker_image(mid, side)
        # cut line around the quiet zone
        cv2.rectangle(page, (x0 - quiet, y0 - quiet), (x0 + side + quiet, y0 + side + quiet), 170, 1)
        # a small cross at the centre on the quiet zone's edges
        for dx, dy in ((0, -1), (0, 1), (-1, 0), (1, 0)):
            ex, ey = cx + dx * (side // 2 + quiet), cy + dy * (side // 2 + quiet)
            ix, iy = cx + dx * (side // 2 + quiet // 3), cy + dy * (side // 2 + quiet // 3)
            cv2.line(page, (ix, iy), (ex, ey), 0, max(1, dpi // 150))
        cv2.putText(page, f"{mid}: {corner}", (x0, y0 + side + quiet + int(8 * px_per_mm)), font, scale, 0,
                    max(1, dpi // 150), cv2.LINE_AA)
    return page


def _png_with_dpi(gray: np.ndarray, dpi: int) -> bytes:
    ok, buf = cv2.imencode(".png", gray)
    if not ok:
        raise RuntimeError("PNG encoding failed")
    data = buf.tobytes()
    ppm = int(round(dpi / 0.0254))
    body = b"pHYs" + struct.pack(">IIB", ppm, ppm, 1)
    chunk = struct.pack(">I", 9) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    at = 8 + 8 + 13 + 4   # signature, IHDR length+type, IHDR data, CRC
    return data[:at] + chunk + data[at:]


def _pdf(gray: np.ndarray, page_mm: tuple[float, float]) -> bytes:
    h, w = gray.shape
    pw, ph = page_mm[0] / MM_PER_INCH * 72, page_mm[1] / MM_PER_INCH * 72
    image = zlib.compress(np.ascontiguousarray(gray).tobytes(), 9)
    content = f"q {pw:.3f} 0 0 {ph:.3f} 0 0 cm /Im0 Do Q".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {pw:.3f} {ph:.3f}] "
        f"/Resources << /XObject << /Im0 5 0 R >> >> /Contents 4 0 R >>".encode(),
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        f"<< /Type /XObject /Subtype /Image /Width {w} /Height {h} /ColorSpace /DeviceGray "
        f"/BitsPerComponent 8 /Filter /FlateDecode /Length {len(image)} >>\nstream\n".encode()
        + image + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + obj + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def make_marker_sheet(path: str, size_mm: float = 70.0, dpi: int = 300) -> str:
    """Write the marker sheet to ``path`` (``.pdf`` or ``.png``); returns the path."""
    page = render_marker_sheet(size_mm, dpi)
    if path.lower().endswith(".pdf"):
        data = _pdf(page, A4_MM)
    elif path.lower().endswith(".png"):
        data = _png_with_dpi(page, dpi)
    else:
        raise ValueError(f"marker sheet must be .pdf or .png, got {path!r}")
    with open(path, "wb") as fh:
        fh.write(data)
    return path


def main(argv: list[str] | None = None) -> int:
    """``python -m vision.markers markers.pdf [SIZE_MM]``"""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print("usage: python -m vision.markers OUT.pdf|OUT.png [SIZE_MM]\n"
              f"Writes the four table-corner markers ({MARKER_DICTIONARY}, ids 0-3) on one A4 page.")
        return 0 if args else 2
    size = float(args[1]) if len(args) > 1 else 70.0
    print(make_marker_sheet(args[0], size))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
