"""Procedural training designs (vision/synth/procedural.py): typefaces and pips drawn by us."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vision.index_geometry import MAX_INDEX_SHARE
from vision.synth.decks import CARDS, FACE_HEIGHT, HELD_OUT, load_deck
from vision.synth.procedural import (PIP_FONTS, RANK_FONTS, build_generated_decks, design_params, generated_deck_names,
                                     render_design, sheet_svg)


@pytest.fixture(scope="module")
def design(tmp_path_factory):
    return render_design(5, tmp_path_factory.mktemp("design"))


def test_designs_are_reproducible_and_differ():
    assert design_params(3) == design_params(3)
    fonts = {(design_params(i)["font"], design_params(i)["weight"]) for i in range(40)}
    assert len(fonts) >= 20, "forty designs should use many typefaces"
    assert sheet_svg(7) == sheet_svg(7) and sheet_svg(7) != sheet_svg(8)
    names = generated_deck_names(3)
    assert names == ["gen-000", "gen-001", "gen-002"]
    assert not set(names) & set(HELD_OUT)


def test_every_design_keeps_its_index_inside_the_card():
    for i in range(200):
        p = design_params(i)
        index_h = p["rank_h"] * (1 + p["pip_gap"] + p["pip_scale"])
        assert index_h <= MAX_INDEX_SHARE + 1e-9, (i, index_h)
        half_10 = (0.66 if p["squeeze_10"] else 0.78) * p["rank_h"] / p["aspect"]
        assert p["index_x"] - half_10 >= 0.029, (i, "the widest rank would cross the card's edge")


def test_training_designs_include_small_index_pips():
    # Jumbo-index decks pair a tall rank with a small pip, in any typeface; training should
    # see such pips (docs/vision-experiments.md, sessions 40 and 41).
    scales = [design_params(i)["pip_scale"] for i in range(128)]
    assert min(scales) >= 0.4 - 1e-9
    small = [s for s in scales if s < 0.55]
    assert len(small) >= 15, f"only {len(small)} of 128 training designs have pips under 0.55 of the rank"
    params = [design_params(i) for i in range(128)]
    small_glyphs = {p["pip_font"] for p in params if p["pip_source"] == "glyph" and p["pip_scale"] < 0.6}
    assert small_glyphs == set(PIP_FONTS), "every pip typeface should be seen small in training"


def test_rendered_design_has_52_faces_and_ink_in_both_indices(design):
    faces, (x0, y0, x1, y1) = design
    assert sorted(faces) == sorted(CARDS)
    assert 0 < x0 < x1 < 0.45 and 0 < y0 < y1 < 0.45
    for card, face in faces.items():
        assert face.shape[0] == FACE_HEIGHT and face.shape[2] == 4
        h, w = face.shape[:2]
        grey = face[:, :, :3].astype(np.int16)
        paper = np.median(grey[h // 2 - 3:h // 2 + 3, 2:6].reshape(-1, 3), axis=0)
        ink = np.abs(grey - paper).max(axis=2) > 60
        top = ink[int(y0 * h):int(y1 * h), int(x0 * w):int(x1 * w)]
        # The bottom-right index is the top-left one turned 180 degrees.
        bottom = ink[h - int(y1 * h):h - int(y0 * h), w - int(x1 * w):w - int(x0 * w)]
        assert top.mean() > 0.05, (card, "no index ink in the top-left box")
        if card[:-1] in ("J", "Q", "K"):
            continue  # court art may reach into the index box's margin
        assert abs(top.mean() - bottom[::-1, ::-1].mean()) < 0.03, (card, "the turned index does not match")


def test_red_and_black_suits_are_coloured_as_expected(design):
    faces, (x0, y0, x1, y1) = design
    p = design_params(5)
    if p["four_colour"]:
        pytest.fail("design 5 was picked as a two-colour design; pick another number")

    def index_redness(card):
        f = faces[card]
        h, w = f.shape[:2]
        box = f[int(y0 * h):int(y1 * h), int(x0 * w):int(x1 * w), :3].astype(np.int16)
        red = box[:, :, 2] - box[:, :, :2].max(axis=2) > 80  # BGR: red ink only
        return red.mean()

    # (A frame line may cross the box on every card alike; the index decides the difference.)
    for red, black in (("8H", "8S"), ("7D", "7C")):
        assert index_redness(red) > 3 * index_redness(black) + 0.02, (red, black)


def test_build_generated_decks_writes_loadable_designs_once(tmp_path):
    logged = []
    assert build_generated_decks(2, face_dir=tmp_path, log=logged.append) == ["gen-000", "gen-001"]
    deck = load_deck("gen-001", face_dir=tmp_path)
    assert sorted(deck.faces) == sorted(CARDS)
    stamp = (tmp_path / "gen-001" / "deck.json").stat().st_mtime_ns
    assert build_generated_decks(2, face_dir=tmp_path, log=logged.append) == ["gen-000", "gen-001"]
    assert (tmp_path / "gen-001" / "deck.json").stat().st_mtime_ns == stamp, "rendered again"


def test_a_design_whose_parameters_changed_is_rendered_again(tmp_path):
    # The cache is keyed by the design's parameters, not only its name: a new
    # typeface list changes what gen-000 looks like, and stale faces would
    # silently train on the old design.
    build_generated_decks(1, face_dir=tmp_path, log=lambda m: None)
    meta_path = tmp_path / "gen-000" / "deck.json"
    meta = json.loads(meta_path.read_text())
    assert len(meta["params"]) == 16
    meta["params"] = "0" * 16  # as if rendered from other parameters
    meta_path.write_text(json.dumps(meta))
    build_generated_decks(1, face_dir=tmp_path, log=lambda m: None)
    assert json.loads(meta_path.read_text())["params"] != "0" * 16


def test_every_typeface_in_the_list_is_installed():
    # fontconfig silently substitutes a missing family (DejaVu), which would
    # only narrow the variety; the apt list must bring every family named.
    import shutil
    import subprocess
    if shutil.which("fc-list") is None:
        pytest.fail("fc-list missing: fontconfig is part of the rendering set-up (scripts/apt-packages.txt)")
    families = set()
    for line in subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True, check=True).stdout.splitlines():
        families.update(f.strip() for f in line.split(","))
    missing = sorted({font for font, _ in RANK_FONTS} - families)
    assert not missing, f"typefaces not installed (add their Debian package to scripts/apt-packages.txt): {missing}"


def test_designs_rendered_by_several_workers_are_the_same_files(tmp_path):
    # The training command renders its 128 designs with --workers processes; each
    # design is a pure function of its number, so the face cache must not depend on it.
    one, two = tmp_path / "one", tmp_path / "two"
    logged = []
    assert build_generated_decks(3, face_dir=one, log=lambda m: None) == ["gen-000", "gen-001", "gen-002"]
    assert build_generated_decks(3, face_dir=two, log=logged.append, workers=2) == ["gen-000", "gen-001", "gen-002"]
    assert logged == ["procedural decks ready: 3 (3 rendered now)"]
    files = sorted(p.relative_to(one) for p in one.rglob("*") if p.is_file())
    assert len(files) == 3 * 53 and files == sorted(p.relative_to(two) for p in two.rglob("*") if p.is_file())
    for f in files:
        assert (one / f).read_bytes() == (two / f).read_bytes(), f
    # Half rendered (gen-001 lost its record, as when a run is stopped mid-design): only it is redone.
    (two / "gen-001" / "deck.json").unlink()
    stamp = (two / "gen-000" / "deck.json").stat().st_mtime_ns
    assert build_generated_decks(3, face_dir=two, log=logged.append, workers=2) == ["gen-000", "gen-001", "gen-002"]
    assert logged[-1] == "procedural decks ready: 3 (1 rendered now)"
    assert (two / "gen-001" / "deck.json").read_bytes() == (one / "gen-001" / "deck.json").read_bytes()
    assert (two / "gen-000" / "deck.json").stat().st_mtime_ns == stamp
