"""bench/bench_view.py runs: one line per condition, the same scenes under each, and its refusals."""

from __future__ import annotations

import numpy as np
import pytest

from bench_modules import load_bench
from vision.recogniser import CardReading, Recognition, UnknownCard
from vision.synth.scene import random_scene_spec


@pytest.fixture(scope="module")
def bench():
    return load_bench("bench_view", ["younestouati", "gnome-tango", "gnome-neoclassical", "gnome-plastic"])


def test_view_benchmark_prints_a_line_per_condition(bench, capsys):
    assert bench.main(["--n", "2", "--seed", "3", "--conditions", "overhead,lean-45"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split() for line in lines if line.split()[:1] in (["overhead"], ["lean-45"])}
    assert set(rows) == {"overhead", "lean-45"}
    for row in rows.values():
        assert row[1:3] == ["images", "2"]
        assert row[row.index("cards") + 1] == "3"  # 1 and 2 cards, all readable seen either way
    assert rows["overhead"][rows["overhead"].index("recall") + 1] == "100.00%"
    assert all(row[row.index("ms") - 1].isdigit() for row in rows.values())   # the median time an image
    assert all(row[row.index("tenth") + 2].rstrip(")").isdigit() for row in rows.values())   # and the slowest tenth


def test_view_benchmark_turns_only_the_slanted_views_with_turn(bench, capsys):
    assert bench.main(["--n", "2", "--seed", "3", "--conditions", "overhead,lean-45,barrel-0.1", "--turn"]) == 0
    out = capsys.readouterr().out
    assert "(overhead, 0 turned)" in out and "(lean-45, 2 turned)" in out and "(barrel-0.1, 0 turned)" in out
    spec = random_scene_spec(np.random.default_rng(3), ["younestouati"], 1280, 720, n_cards=2)
    assert bench.calibrated_view(spec) is None
    view = bench.calibrated_view(bench.viewed(spec, bench.CONDITIONS["lean-45"], 100.0))
    assert view.squeeze == pytest.approx(np.cos(np.radians(45)), abs=0.02)


def test_view_benchmark_reads_as_a_level_camera_and_fixes_the_direction(bench, capsys, monkeypatch):
    read_level = []
    original = bench.Recogniser.recognise_level
    monkeypatch.setattr(bench.Recogniser, "recognise_level",
                        lambda self, image, *a, **kw: read_level.append(image.shape) or original(self, image, *a, **kw))
    directions = []
    original_viewed = bench.viewed
    monkeypatch.setattr(bench, "viewed", lambda spec, c, d: directions.append(d) or original_viewed(spec, c, d))
    assert bench.main(["--n", "2", "--seed", "3", "--conditions", "lean-30", "--level", "--direction", "0"]) == 0
    out = capsys.readouterr().out
    assert "leaning 0 degrees; read as a level camera's of unknown lean" in out
    assert read_level == [(720, 1280, 3)] * 2 and directions == [0.0, 0.0]


def test_a_condition_changes_the_view_and_keeps_the_cards(bench):
    spec = random_scene_spec(np.random.default_rng(3), ["younestouati"], 1280, 720, n_cards=4)
    same = bench.viewed(spec, bench.CONDITIONS["overhead"], 30.0)
    assert same.cards == spec.cards and same.hands == spec.hands and same is not spec
    assert (same.camera.lean, same.camera.barrel, same.lighting) == (0.0, 0.0, spec.lighting)
    leaned = bench.viewed(spec, bench.CONDITIONS["lean-30"], 30.0)
    assert (leaned.camera.lean, leaned.camera.lean_direction) == (30.0, 30.0)
    assert [c.card for c in leaned.cards] == [c.card for c in spec.cards]
    # Drawn smaller about the centre by the view's zoom, so that the cards keep about their size.
    shrink = [a.height / b.height for a, b in zip(leaned.cards, spec.cards)]
    assert 0.5 < shrink[0] < 0.9 and np.allclose(shrink, shrink[0])
    dim = bench.viewed(spec, bench.CONDITIONS["dim"], 0.0)
    assert dim.lighting.brightness == pytest.approx(spec.lighting.brightness * 0.35)
    assert dim.camera.noise == pytest.approx(spec.camera.noise + 12)
    assert spec.camera.lean == 0.0  # the scene itself is left as it was


def test_view_benchmark_lists_its_conditions_and_refuses_unknown_ones(bench, capsys):
    assert bench.main(["--list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == list(bench.CONDITIONS)
    for bad, why in ((["--conditions", "overhead,sideways"], "unknown condition sideways"),
                     (["--conditions", ","], "unknown condition (none given)"), (["--n", "0"], "at least 1"),
                     (["--threshold", "1.5"], "(0, 1]"), (["--level", "--turn"], "choose one"),
                     (["--direction", "nan"], "number of degrees")):
        with pytest.raises(SystemExit) as stop:
            bench.main(bad)
        assert stop.value.code == 2
        assert why in capsys.readouterr().err


def test_a_pixels_condition_shrinks_the_picture_and_scores_its_boxes_in_the_renderings_pixels(bench, capsys,
                                                                                               monkeypatch):
    read = []
    original = bench.Recogniser.recognise
    monkeypatch.setattr(bench.Recogniser, "recognise",
                        lambda self, image, *a, **kw: read.append(image.shape) or original(self, image, *a, **kw))
    assert bench.main(["--n", "2", "--seed", "3", "--conditions", "overhead,pixels-480"]) == 0
    assert read == [(720, 1280, 3), (270, 480, 3)] * 2
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()
            if line.split()[:1] in (["overhead"], ["pixels-480"])}
    # The same cards read, their boxes put back where the annotation has them: all right, none wrong.
    assert "recall 100.00%" in rows["pixels-480"] and "wrong   0" in rows["pixels-480"]
    size = lambda row: float(row.split("index ")[1].split()[0])  # noqa: E731
    assert size(rows["pixels-480"]) == pytest.approx(size(rows["overhead"]) * 480 / 1280, abs=1)

    image = np.zeros((720, 1280, 3), np.uint8)
    image[100:300, 200:600] = 255
    small, f = bench.in_pixels(image, bench.CONDITIONS["pixels-640"])
    assert (small.shape, f) == ((360, 640, 3), 0.5) and small[50:150, 100:300].min() == 255
    assert bench.in_pixels(image, bench.CONDITIONS["overhead"])[0] is image
    large, f = bench.in_pixels(image, bench.CONDITIONS["pixels-3840"])   # a phone's: the rendering enlarged
    assert (large.shape, f) == ((2160, 3840, 3), 3.0) and large[310:890, 610:1790].min() == 255
    assert large[:290].max() == 0 and large[:, :590].max() == 0
    found = Recognition([CardReading("AS", 0.9, (10, 20, 30, 41))], [UnknownCard((1, 2, 3, 4))])
    back = bench.boxes_scaled(found, 2.0)
    assert back.cards[0].box == (20, 40, 60, 82) and back.unknown[0].box == (2, 4, 6, 8)
    assert back.cards[0].card == "AS" and back.cards[0].confidence == 0.9
