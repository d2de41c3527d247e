"""`cardtable recognise IMAGE... [--json]`: output format and error cases."""

from __future__ import annotations

import json
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
