"""Table geometry: the homography to millimetres, seat zones, plain-data configuration, markers."""

from __future__ import annotations

import struct
import zlib

import cv2
import numpy as np
import pytest

from vision.markers import make_marker_sheet, marker_image, render_marker_sheet
from vision.table_geometry import CalibrationError, TableGeometry, default_zones, find_marker_corners

TABLE = (900.0, 560.0)
CAMERA = [[160, 40], [1120, 60], [1250, 700], [30, 680]]   # a camera not quite overhead


def test_homography_maps_corners_and_round_trips():
    g = TableGeometry(CAMERA, TABLE, seats=4, image_size=(1280, 720))
    assert np.allclose(g.to_mm(CAMERA), [[0, 0], [900, 0], [900, 560], [0, 560]], atol=1e-6)
    pts = np.array([[100.0, 100.0], [450.0, 280.0], [880.0, 20.0]])
    assert np.allclose(g.to_mm(g.to_px(pts)), pts, atol=1e-6)
    # perspective: the far (top) edge is smaller in the picture than the near one
    assert g.scale_at((450, 20)) < g.scale_at((450, 540))


@pytest.mark.parametrize("seats", [2, 3, 4, 5, 6, 7, 8])
def test_seat_zones_go_round_clockwise_from_the_bottom(seats):
    g = TableGeometry(CAMERA, TABLE, seats=seats)
    centre = np.array(TABLE) / 2
    assert g.seat_at((450, 555)) == 0                 # the bottom edge is seat 0
    angles = []
    for s in range(seats):
        zone = next(z for z in g.zones if z.kind == "seat" and z.seat == s)
        inner = np.asarray(zone.polygon).mean(axis=0)
        spot = centre + (inner - centre) * 1.6
        assert g.seat_at(spot) == s
        v = spot - centre
        angles.append(np.degrees(np.arctan2(v[1], v[0])) % 360)
    # y is down: increasing angle is clockwise on screen; seat 0 at 90 degrees (bottom)
    unwrapped = [(a - 90) % 360 for a in angles]
    assert unwrapped == sorted(unwrapped)
    assert g.zone_at(centre).kind == "centre"
    assert g.zone_at((5000, 5000)) is None
    assert g.seat_at((450, 575)) == 0               # a card overhanging the near edge


def test_scoreboard_zone_for_twenty_two():
    g = TableGeometry(CAMERA, TABLE, seats=3, scoreboard=True)
    kinds = {z.kind for z in g.zones}
    assert kinds == {"seat", "centre", "scoreboard"}
    sb = next(z for z in g.zones if z.kind == "scoreboard")
    inside = np.asarray(sb.polygon).mean(axis=0)
    assert g.zone_at(inside).kind == "scoreboard"
    assert g.zone_at((400, 280)).kind == "centre"


def test_configuration_round_trip_keeps_hand_adjusted_zones():
    g = TableGeometry(CAMERA, TABLE, seats=4, image_size=(1280, 720))
    data = g.to_config()
    # a person widens seat 0's zone by hand in the TOML: it is plain data
    zone0 = next(z for z in data["zones"] if z.get("seat") == 0)
    zone0["polygon_mm"] = [[0, 300], [900, 300], [900, 560], [0, 560]]
    again = TableGeometry.from_config(data)
    assert again.image_size == (1280, 720) and again.table_mm == TABLE
    assert again.seat_at((50, 320)) == 0          # was seat 1's corner before
    assert np.allclose(again.corners_px, CAMERA)
    # another number of players lays the zones out afresh
    assert TableGeometry.from_config(data, seats=2).seats == 2
    assert len([z for z in TableGeometry.from_config(data, seats=6).zones if z.kind == "seat"]) == 6


def test_configuration_errors_name_the_problem():
    with pytest.raises(CalibrationError, match="no corners_px"):
        TableGeometry.from_config({"seats": 4})
    with pytest.raises(CalibrationError, match="four table corners"):
        TableGeometry([[0, 0], [1, 1]], TABLE)
    with pytest.raises(CalibrationError, match="convex"):
        TableGeometry([[0, 0], [100, 0], [30, 30], [0, 100]], TABLE)
    g = TableGeometry(CAMERA, TABLE).to_config()
    g["zones"][1]["seat"] = 9
    with pytest.raises(CalibrationError, match="seat 0-3"):
        TableGeometry.from_config(g)
    g["zones"][1] = {"kind": "bar", "polygon_mm": [[0, 0], [1, 0], [1, 1]]}
    with pytest.raises(CalibrationError, match="kind must be"):
        TableGeometry.from_config(g)
    with pytest.raises(ValueError):
        default_zones(TABLE, 0)


def camera_view_of_markers(size_mm=60.0, px_per_mm=2.0, margin=60.0):
    """A top-down picture of the table with the four markers centred on its corners,
    seen by a tilted camera; returns the camera image and the true mm -> camera px map."""
    w, h = TABLE
    W, H = int((w + 2 * margin) * px_per_mm), int((h + 2 * margin) * px_per_mm)
    top = np.full((H, W), 140, np.uint8)
    side = int(size_mm * px_per_mm)
    quiet = int(8 * px_per_mm)
    for mid, (x, y) in zip(range(4), [(0, 0), (w, 0), (w, h), (0, h)]):
        cx, cy = int((x + margin) * px_per_mm), int((y + margin) * px_per_mm)
        x0, y0 = cx - side // 2, cy - side // 2
        top[y0 - quiet:y0 + side + quiet, x0 - quiet:x0 + side + quiet] = 255
        top[y0:y0 + side, x0:x0 + side] = marker_image(mid, side)
    mm_to_top = np.array([[px_per_mm, 0, margin * px_per_mm], [0, px_per_mm, margin * px_per_mm], [0, 0, 1]])
    src = np.float32([[0, 0], [W, 0], [W, H], [0, H]])
    dst = np.float32([[170, 30], [1110, 50], [1260, 710], [20, 690]])
    top_to_cam = cv2.getPerspectiveTransform(src, dst)
    cam = cv2.warpPerspective(top, top_to_cam, (1280, 720), borderValue=90)
    return cv2.cvtColor(cam, cv2.COLOR_GRAY2BGR), top_to_cam @ mm_to_top


def test_calibration_from_printed_markers_is_accurate_to_millimetres():
    image, mm_to_cam = camera_view_of_markers()
    g = TableGeometry.from_markers(image, TABLE, seats=4)
    assert g.image_size == (1280, 720)
    probe = np.array([[0, 0], [450, 280], [900, 560], [120, 500], [800, 40]], np.float64)
    cam = cv2.perspectiveTransform(probe.reshape(-1, 1, 2), mm_to_cam).reshape(-1, 2)
    err = np.linalg.norm(g.to_mm(cam) - probe, axis=1)
    assert err.max() < 3.0, err


def test_calibration_names_the_missing_marker():
    image, _ = camera_view_of_markers()
    image[560:, 1000:] = 90                       # cover the bottom-right marker
    with pytest.raises(CalibrationError, match=r"2 \(bottom-right\)"):
        find_marker_corners(image)
    with pytest.raises(CalibrationError):
        find_marker_corners(np.full((100, 100, 3), 255, np.uint8))


def test_the_printed_sheet_has_the_four_markers_at_true_size(tmp_path):
    page = render_marker_sheet(size_mm=70, dpi=150)
    assert page.shape == (round(297 / 25.4 * 150), round(210 / 25.4 * 150))
    corners = find_marker_corners(page)                # all four found on the sheet itself
    assert corners.shape == (4, 2)
    detector = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50),
                                       cv2.aruco.DetectorParameters())
    quads, ids, _ = detector.detectMarkers(page)
    side_px = np.linalg.norm(quads[0].reshape(4, 2)[1] - quads[0].reshape(4, 2)[0])
    assert abs(side_px / 150 * 25.4 - 70) < 1.0          # 70 mm when printed at 150 dpi
    png = make_marker_sheet(str(tmp_path / "m.png"), dpi=150)
    data = open(png, "rb").read()
    at = data.index(b"pHYs")
    ppm_x, ppm_y, unit = struct.unpack(">IIB", data[at + 4:at + 13])
    assert unit == 1 and abs(ppm_x - 150 / 0.0254) < 1 and ppm_x == ppm_y
    assert zlib.crc32(data[at:at + 13]) & 0xFFFFFFFF == struct.unpack(">I", data[at + 13:at + 17])[0]
    assert cv2.imread(png) is not None
    pdf = open(make_marker_sheet(str(tmp_path / "m.pdf"), dpi=150), "rb").read()
    assert pdf.startswith(b"%PDF-1.4") and b"/MediaBox [0 0 595.276 841.890]" in pdf and pdf.endswith(b"%%EOF\n")
    with pytest.raises(ValueError):
        make_marker_sheet(str(tmp_path / "m.gif"))


def test_calibrate_from_a_source_and_build_the_live_table_from_the_configuration(tmp_path):
    from cardtable.config import Config
    from cardtable.session import Session
    from cardtable.store import Store
    from vision.card_reader import LookupReader
    from vision.live import calibrate, live_table_from_config

    image, mm_to_cam = camera_view_of_markers()
    covered = image.copy()
    covered[:200, :300] = 90                                   # a hand over marker 0 in the first frame
    cv2.imwrite(str(tmp_path / "a.png"), covered)
    cv2.imwrite(str(tmp_path / "b.png"), image)
    geometry = calibrate(f"images:{tmp_path}/*.png", TABLE, seats=3)
    assert geometry.image_size == (1280, 720) and geometry.seats == 3
    with pytest.raises(CalibrationError, match=r"0 \(top-left\)"):
        calibrate(f"images:{tmp_path}/a.png", TABLE)
    with pytest.raises(CalibrationError, match="no camera"):
        calibrate("usb:57", TABLE)

    config = Config.from_dict({"camera": {"source": f"images:{tmp_path}/*.png"},
                               "geometry": geometry.to_config(), "recognition": {"still_s": 0.5, "need": 3}})
    session = Session(Store(str(tmp_path / "t.sqlite")))
    live = live_table_from_config(config, session, reader=LookupReader())
    assert live.observer.config.still_s == 0.5 and live.observer.config.need == 3
    assert live.geometry.seats == 3 and live.feed.size == (1280, 720)
    assert live.step() and live.feed.status()["state"] == "ok"
    live = live_table_from_config(config, session, source="usb:57", reader=LookupReader())
    assert live.step() and live.status()["state"] == "missing"
    with pytest.raises(CalibrationError, match="calibrate the table first"):
        live_table_from_config(Config.from_dict({}), session, reader=LookupReader())


def test_calibrate_command_prints_the_geometry_section_as_toml(tmp_path, capsys):
    import tomllib

    from vision.live import main

    image, _ = camera_view_of_markers()
    cv2.imwrite(str(tmp_path / "cal.png"), image)
    assert main(["calibrate", "--source", f"images:{tmp_path}/cal.png", "--table", "900x560", "--seats", "3",
                 "--scoreboard"]) == 0
    text = capsys.readouterr().out
    data = tomllib.loads(text)
    g = TableGeometry.from_config(data["geometry"])
    assert g.seats == 3 and g.scoreboard and g.table_mm == TABLE and g.image_size == (1280, 720)
    assert main(["calibrate", "--source", f"images:{tmp_path}/none*.png", "--table", "900x560"]) == 2
    assert "calibration failed" in capsys.readouterr().err


def test_the_recognition_section_chooses_the_recognisers_engine_and_threads(tmp_path):
    """``[recognition] engine`` and ``threads`` reach the recogniser that ``cardtable run`` builds;
    a bad value is refused when the table is built, not at the first card."""
    from cardtable.config import Config
    from cardtable.session import Session
    from cardtable.store import Store
    from vision.live import calibrate, live_table_from_config

    image, _ = camera_view_of_markers()
    cv2.imwrite(str(tmp_path / "b.png"), image)
    geometry = calibrate(f"images:{tmp_path}/b.png", TABLE, seats=3)
    session = Session(Store(str(tmp_path / "t.sqlite")))

    def build(**recognition):
        config = Config.from_dict({"camera": {"source": f"images:{tmp_path}/b.png"},
                                   "geometry": geometry.to_config(), "recognition": recognition})
        return live_table_from_config(config, session)

    recogniser = build(engine="opencv", threads=2).observer.reader.recogniser
    assert recogniser.engine == "opencv"
    assert build(threads=1).observer.reader.recogniser.engine == "onnxruntime"
    with pytest.raises(ValueError, match="unknown inference engine 'gpu'"):
        build(engine="gpu")
    with pytest.raises(ValueError, match="threads must be a whole number"):
        build(threads=0)
