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
