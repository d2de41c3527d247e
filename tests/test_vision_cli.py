"""`cardtable recognise IMAGE... [--json]`: output format and error cases."""

from __future__ import annotations

import json
import struct
import subprocess
import sys

import cv2
import numpy as np
import pytest

from referee.cards import parse_card
from vision.cli import main
from vision.recogniser import Recogniser
from vision.synth.scene import CardPlacement, SceneSpec, render_scene


@pytest.fixture(scope="module")
def table_png(tmp_path_factory):
    deck = Recogniser().meta["held_out"][0]
    spec = SceneSpec(960, 540, [CardPlacement("10H", (300, 270), 15, 260, deck),
                                CardPlacement("AS", (650, 270), -100, 260, deck)], table="wood")
    img, _ = render_scene(spec, np.random.default_rng(0))
    path = tmp_path_factory.mktemp("imgs") / "table.png"
    cv2.imwrite(str(path), img)
    return path


def test_json_document(table_png, capsys):
    assert main([str(table_png), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (entry,) = doc["images"]
    assert entry["file"] == str(table_png)
    assert sorted(c["card"] for c in entry["cards"]) == ["10H", "AS"]
    for c in entry["cards"]:
        assert str(parse_card(c["card"])) == c["card"]  # the project's notation
        assert 0 < c["confidence"] <= 1
        x1, y1, x2, y2 = c["box"]
        assert all(isinstance(v, int) for v in c["box"]) and 0 <= x1 < x2 <= 960 and 0 <= y1 < y2 <= 540
    assert entry["unknown"] == []


def test_missing_and_non_image_files_exit_2_after_the_others(table_png, tmp_path, capsys):
    text = tmp_path / "notes.jpg"
    text.write_text("not a picture")
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    rc = main([str(tmp_path / "nope.jpg"), str(text), str(table_png), str(empty), "--json"])
    out, err = capsys.readouterr()
    assert rc == 2
    doc = json.loads(out)
    files = [e["file"] for e in doc["images"]]
    assert files == [str(tmp_path / "nope.jpg"), str(text), str(table_png), str(empty)]
    assert len(doc["images"][2]["cards"]) == 2  # the good image is still read
    assert "nope.jpg: no such file" in err
    assert "notes.jpg: not an image" in err and "empty.png: not an image" in err
    assert "error" in doc["images"][0] and "error" in doc["images"][1]


def test_directory_is_refused(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_readable_listing(table_png, capsys):
    assert main([str(table_png)]) == 0
    out = capsys.readouterr().out
    assert "2 card(s)" in out and "10H" in out and "AS" in out


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2
    assert "IMAGE" in capsys.readouterr().err


def test_through_the_cardtable_command(table_png, tmp_path):
    missing = tmp_path / "gone.png"
    proc = subprocess.run([sys.executable, "-m", "cardtable.cli", "recognise", str(table_png), str(missing),
                           "--json"], capture_output=True, text=True)
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert [len(e.get("cards", [])) for e in doc["images"]] == [2, 0]
    assert "gone.png: no such file" in proc.stderr


def test_draw_writes_each_picture_with_its_cards_boxed_and_named(table_png, tmp_path, capsys):
    assert main([str(table_png), "--json"]) == 0
    plain = capsys.readouterr().out
    out_dir = tmp_path / "drawn" / "here"               # made, parents too
    assert main([str(table_png), "--json", "--draw", str(out_dir)]) == 0
    assert capsys.readouterr().out == plain             # the document is the same
    picture, drawn = cv2.imread(str(table_png)), cv2.imread(str(out_dir / "table.png"))
    assert drawn.shape == picture.shape and (drawn != picture).any()
    for c in json.loads(plain)["images"][0]["cards"]:
        x1, y1, x2, y2 = c["box"]
        assert drawn[(y1 + y2) // 2, x1].tolist() == [0, 200, 0]    # the box's left side, in green
        assert drawn[(y1 + y2) // 2, (x1 + x2) // 2].tolist() == picture[(y1 + y2) // 2, (x1 + x2) // 2].tolist()


def test_draw_keeps_two_pictures_of_one_name_apart_and_writes_what_it_cannot_name_as_png(table_png, tmp_path, capsys):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "table.png").write_bytes(table_png.read_bytes())
    odd = tmp_path / "scan.webp"                        # (a PNG by another name: read all the same)
    odd.write_bytes(table_png.read_bytes())
    out_dir = tmp_path / "out"
    assert main([str(tmp_path / "a" / "table.png"), str(tmp_path / "b" / "table.png"), str(odd),
                 "--draw", str(out_dir)]) == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["scan.png", "table-2.png", "table.png"]


def test_draw_into_what_cannot_be_a_folder_exits_2_before_reading(table_png, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main([str(table_png), "--json", "--draw", str(blocker / "sub")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and f"cannot make --draw {blocker / 'sub'}" in err


def _with_orientation(jpeg: bytes, orientation: int) -> bytes:
    """``jpeg`` with an Exif orientation tag, as a phone writes one (a little-endian TIFF header,
    one IFD entry: tag 0x0112, a SHORT)."""
    tiff = (b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", 1)
            + struct.pack("<HHIHH", 0x0112, 3, 1, orientation, 0) + struct.pack("<I", 0))
    app1 = b"Exif\x00\x00" + tiff
    return jpeg[:2] + b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + jpeg[2:]


def test_a_phone_photo_stored_sideways_is_read_as_the_phone_shows_it(table_png, tmp_path, capsys):
    upright = cv2.imread(str(table_png))
    # A phone held upright stores its sensor's rows sideways and says so in the Exif
    # orientation (6: turn a quarter clockwise to show it).
    ok, data = cv2.imencode(".jpg", cv2.rotate(upright, cv2.ROTATE_90_COUNTERCLOCKWISE), [cv2.IMWRITE_JPEG_QUALITY, 95])
    photo = tmp_path / "phone.jpg"
    photo.write_bytes(_with_orientation(data.tobytes(), 6))
    assert main([str(table_png), str(photo), "--json", "--draw", str(tmp_path / "drawn")]) == 0
    flat, phone = json.loads(capsys.readouterr().out)["images"]
    assert sorted(c["card"] for c in phone["cards"]) == ["10H", "AS"]
    boxes = {c["card"]: c["box"] for c in flat["cards"]}
    for c in phone["cards"]:                              # in the upright picture's pixels
        assert np.abs(np.subtract(c["box"], boxes[c["card"]])).max() <= 8
    assert cv2.imread(str(tmp_path / "drawn" / "phone.jpg")).shape == upright.shape


def test_a_drawing_that_cannot_be_written_is_reported_after_the_others_with_exit_2(table_png, tmp_path, capsys):
    out_dir = tmp_path / "out"
    (out_dir / "table.png").mkdir(parents=True)          # a folder where the drawing would go
    other = tmp_path / "other.png"
    other.write_bytes(table_png.read_bytes())
    assert main([str(table_png), str(other), "--json", "--draw", str(out_dir)]) == 2
    out, err = capsys.readouterr()
    assert [len(e["cards"]) for e in json.loads(out)["images"]] == [2, 2]   # both still read
    assert f"cannot write {out_dir / 'table.png'}" in err and (out_dir / "other.png").is_file()


def test_draw_into_the_pictures_own_folder_draws_over_none_of_them(table_png, tmp_path, capsys):
    """``--draw`` into the folder the pictures are in: a drawing never takes a picture's name,
    least of all that of one not read yet (b's drawing would land on a/table.png before it is read)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = tmp_path / "b" / "table.png", tmp_path / "a" / "table.png"
    blank = np.full((540, 960, 3), 90, np.uint8)
    cv2.imwrite(str(first), blank)
    second.write_bytes(table_png.read_bytes())
    before = second.read_bytes()
    assert main([str(first), str(second), "--json", "--draw", str(tmp_path / "a")]) == 0
    counts = [len(e["cards"]) for e in json.loads(capsys.readouterr().out)["images"]]
    assert counts == [0, 2] and second.read_bytes() == before and cv2.imread(str(first)).tolist() == blank.tolist()
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["table-2.png", "table-3.png", "table.png"]


def test_jpeg_size_reads_the_frame_header_past_what_comes_before_it():
    from vision.cli import jpeg_size

    picture = np.zeros((37, 53, 3), np.uint8)
    baseline = cv2.imencode(".jpg", picture)[1].tobytes()
    progressive = cv2.imencode(".jpg", picture, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])[1].tobytes()
    exif = _with_orientation(baseline, 6)                     # (the stored size: the tag is not applied)
    filled = baseline[:2] + b"\xff\xff" + baseline[2:]        # fill bytes before a marker
    for data in (baseline, progressive, exif, filled):
        assert jpeg_size(data) == (53, 37)
        assert jpeg_size(memoryview(np.frombuffer(data, np.uint8))) == (53, 37)
    # A thumbnail in the Exif block has a frame header of its own: skipped with its block.
    thumbnail = cv2.imencode(".jpg", np.zeros((7, 9, 3), np.uint8))[1].tobytes()
    app1 = b"Exif\x00\x00II*\x00" + thumbnail
    with_thumbnail = baseline[:2] + b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + baseline[2:]
    assert jpeg_size(thumbnail) == (9, 7) and jpeg_size(with_thumbnail) == (53, 37)
    assert jpeg_size(baseline[:2] + b"\xff\xe1\x00\x01" + baseline[2:]) is None   # a length under its own 2 bytes
    png = cv2.imencode(".png", picture)[1].tobytes()
    assert jpeg_size(png) is None and jpeg_size(b"") is None and jpeg_size(b"\xff\xd8") is None
    # Cut anywhere, or damaged, a header gives its size or None, never an exception.
    for n in range(len(exif)):
        assert jpeg_size(exif[:n]) in (None, (53, 37))
    assert [jpeg_size(exif[:n]) for n in (20, len(exif) // 2)] == [None, (53, 37)]
    assert jpeg_size(baseline[:2] + b"\x00" + baseline[3:]) is None
    rng = np.random.default_rng(0)
    for _ in range(200):
        jpeg_size(b"\xff\xd8" + rng.integers(0, 256, 60, dtype=np.uint8).tobytes())


def _smooth_picture(w: int, h: int) -> np.ndarray:
    rng = np.random.default_rng(1)
    return cv2.resize(rng.integers(0, 256, (h // 40, w // 40, 3), dtype=np.uint8), (w, h),
                      interpolation=cv2.INTER_CUBIC)


def test_a_large_jpeg_is_decoded_at_the_size_the_recogniser_reads_it_at(tmp_path):
    """A JPEG that the recogniser would halve is decoded halved (libjpeg scales it as it
    decodes), as often as its sides stay whole; its size is the picture's as it stands upright."""
    from vision.cli import _read_image
    from vision.recogniser import halve

    def jpeg(name, picture, orientation=None):
        data = cv2.imencode(".jpg", picture, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes()
        (tmp_path / name).write_bytes(data if orientation is None else _with_orientation(data, orientation))
        return tmp_path / name

    picture = _smooth_picture(2560, 1440)
    photo = jpeg("photo.jpg", picture)
    # A phone held upright stores its rows sideways (orientation 6: turn a quarter clockwise).
    sideways = jpeg("sideways.jpg", cv2.rotate(picture, cv2.ROTATE_90_COUNTERCLOCKWISE), 6)
    whole, times, size = _read_image(photo)                     # no detector: decoded whole
    assert (whole.shape, times, size) == ((1440, 2560, 3), 0, (2560, 1440))
    half = halve(whole).astype(int)
    for path in (photo, sideways):
        img, times, size = _read_image(path, 640)
        assert (img.shape, times, size) == ((720, 1280, 3), 1, (2560, 1440))
        # Each small pixel the mean of its 2 x 2 block, as halving gives it: closer than a pixel off.
        near = np.abs(img.astype(int) - half).mean()
        assert near < 1.0 and near < np.abs(img[:, 1:].astype(int) - half[:, :-1]).mean() / 4
        assert near < np.abs(img[1:].astype(int) - half[:-1]).mean() / 4
    png = tmp_path / "photo.png"
    cv2.imwrite(str(png), picture)
    assert _read_image(png, 640)[1:] == (0, (2560, 1440))      # not a JPEG: decoded whole
    assert _read_image(photo, 1281)[1] == 0                     # a larger detector would read it whole
    # An odd side decodes whole: the recogniser halves it, the odd row dropped where it shows.
    assert _read_image(jpeg("odd.jpg", _smooth_picture(2561, 1440)), 640)[1:] == (0, (2561, 1440))
    # Halved twice where the sides allow, once where only once; turned over (orientation 3) or a
    # quarter the other way (8), as it stands upright.
    wide = _smooth_picture(5200, 1200)
    img, times, size = _read_image(jpeg("wide.jpg", wide), 640)
    assert (img.shape, times, size) == ((300, 1300, 3), 2, (5200, 1200))
    assert np.abs(img.astype(int) - halve(halve(wide)).astype(int)).mean() < 1.0
    img, times, size = _read_image(jpeg("over.jpg", cv2.rotate(wide, cv2.ROTATE_180), 3), 640)
    assert (img.shape, times, size) == ((300, 1300, 3), 2, (5200, 1200))
    assert np.abs(img.astype(int) - halve(halve(wide)).astype(int)).mean() < 1.0
    img, times, size = _read_image(jpeg("wide2.jpg", _smooth_picture(5200, 1202), 8), 640)
    assert (img.shape, times, size) == ((2600, 601, 3), 1, (1202, 5200))
    # An eighth at most: the recogniser halves the rest.
    assert _read_image(jpeg("strip.jpg", np.full((64, 10240, 3), 90, np.uint8)), 640)[0].shape == (8, 1280, 3)
    assert _read_image(jpeg("strip2.jpg", np.full((64, 20480, 3), 90, np.uint8)), 640)[0].shape == (8, 2560, 3)


def test_cardtable_recognise_reads_a_large_jpeg_decoded_halved_with_boxes_in_its_own_pixels(
        table_png, tmp_path, capsys, monkeypatch):
    upright = cv2.imread(str(table_png))
    large = cv2.resize(upright, (2560, 1440), interpolation=cv2.INTER_CUBIC)
    photo, sideways, odd = tmp_path / "large.jpg", tmp_path / "sideways.jpg", tmp_path / "odd.jpg"
    photo.write_bytes(cv2.imencode(".jpg", large, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes())
    stored = cv2.imencode(".jpg", cv2.rotate(large, cv2.ROTATE_90_COUNTERCLOCKWISE), [cv2.IMWRITE_JPEG_QUALITY, 95])
    sideways.write_bytes(_with_orientation(stored[1].tobytes(), 6))
    odd.write_bytes(cv2.imencode(".jpg", cv2.resize(upright, (2561, 1441)), [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes())
    # What the recogniser reads in each picture decoded whole (and halved by itself).
    rec = Recogniser()
    wholes = [cv2.imdecode(np.fromfile(str(p), np.uint8), cv2.IMREAD_COLOR) for p in (photo, sideways, odd)]
    flags, imdecode = [], cv2.imdecode
    monkeypatch.setattr(cv2, "imdecode", lambda data, flag: flags.append(flag) or imdecode(data, flag))
    for how, read in ((["--overhead"], rec.recognise), ([], rec.recognise_level)):
        flags.clear()
        assert main([str(photo), str(sideways), str(odd), "--json", *how]) == 0
        assert flags == [cv2.IMREAD_REDUCED_COLOR_2] * 2 + [cv2.IMREAD_COLOR]
        for entry, whole in zip(json.loads(capsys.readouterr().out)["images"], wholes):
            boxes = {c.card: c.box for c in read(whole).cards}
            assert sorted(boxes) == sorted(c["card"] for c in entry["cards"]) == ["10H", "AS"]
            assert entry["unknown"] == []
            for c in entry["cards"]:              # in the large picture's pixels
                assert np.abs(np.subtract(c["box"], boxes[c["card"]])).max() <= 12   # (of 2560: 0.5%)
    # A drawing is of the whole picture: decoded whole.
    flags.clear()
    assert main([str(photo), "--json", "--overhead", "--draw", str(tmp_path / "drawn")]) == 0
    assert flags == [cv2.IMREAD_COLOR] and sorted(c["card"] for c in json.loads(capsys.readouterr().out)
                                                  ["images"][0]["cards"]) == ["10H", "AS"]
    assert cv2.imread(str(tmp_path / "drawn" / "large.jpg")).shape == (1440, 2560, 3)
