"""``cardtable calibrate`` and ``cardtable markers``: from a picture of the
four corner markers to a ``[geometry]`` section the live table accepts."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import cv2
import numpy as np

from cardtable.config import load_config
from vision.markers import marker_image
from vision.table_geometry import TableGeometry

SPOTS = [(100, 80), (1100, 80), (1100, 560), (100, 560)]


def table_picture(path, with_markers=4) -> str:
    img = np.full((720, 1280, 3), 120, np.uint8)
    for i, (x, y) in enumerate(SPOTS[:with_markers]):
        img[y:y + 80, x:x + 80] = cv2.cvtColor(marker_image(i, 80), cv2.COLOR_GRAY2BGR)
    cv2.imwrite(str(path), img)
    return str(path)


def cli(*args):
    return subprocess.run([sys.executable, "-m", "cardtable", *args], capture_output=True, text=True, timeout=120)


def test_calibration_prints_a_geometry_section_the_live_table_accepts(tmp_path):
    out = cli("calibrate", "--image", table_picture(tmp_path / "t.png"), "--table-mm", "900", "600",
              "--seats", "3", "--preview", str(tmp_path / "p.png"))
    assert out.returncode == 0, out.stderr
    geometry = tomllib.loads(out.stdout)["geometry"]
    assert geometry["seats"] == 3 and geometry["image_size"] == [1280, 720]
    table = TableGeometry.from_config(geometry)
    # the marker centres map to the table's corners in millimetres
    centre0 = np.array(SPOTS[0]) + 40
    assert np.allclose(table.to_mm([centre0])[0], [0, 0], atol=3)
    assert cv2.imread(str(tmp_path / "p.png")) is not None


def test_write_replaces_only_the_geometry_section(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('[table]\npin = "1234"\n\n[geometry]\ncorners_px = [[0, 0]]\n\n[camera]\nsource = "usb:0"\n')
    for _ in range(2):      # a second calibration replaces the first, zones included
        out = cli("calibrate", "--image", table_picture(tmp_path / "t.png"), "--config", str(config), "--write")
        assert out.returncode == 0, out.stderr
    loaded = load_config(str(config))
    assert loaded.pin == "1234" and loaded.source == "usb:0"
    assert len(loaded.geometry["corners_px"]) == 4
    assert len(loaded.geometry["zones"]) == 5          # four seats and the centre
    assert config.read_text().count("[geometry]") == 1


def test_missing_markers_and_bad_pictures_exit_2(tmp_path):
    out = cli("calibrate", "--image", table_picture(tmp_path / "t.png", with_markers=3))
    assert out.returncode == 2 and "marker" in out.stderr
    (tmp_path / "x.png").write_text("not a picture")
    out = cli("calibrate", "--image", str(tmp_path / "x.png"))
    assert out.returncode == 2 and "not an image" in out.stderr


def test_corners_by_hand(tmp_path):
    out = cli("calibrate", "--image", table_picture(tmp_path / "t.png"), "--corners",
              "10", "10", "1270", "10", "1270", "710", "10", "710")
    assert out.returncode == 0, out.stderr
    assert tomllib.loads(out.stdout)["geometry"]["corners_px"][2] == [1270.0, 710.0]


def test_marker_sheet(tmp_path):
    out = cli("markers", str(tmp_path / "m.png"))
    assert out.returncode == 0
    sheet = cv2.imread(str(tmp_path / "m.png"), cv2.IMREAD_GRAYSCALE)
    found = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)).detectMarkers(sheet)
    assert sorted(int(i) for i in found[1].ravel()) == [0, 1, 2, 3]
