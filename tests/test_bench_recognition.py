"""bench/bench_recognition.py: its scene cache gives back the very scenes it rendered."""

from __future__ import annotations

import re

import numpy as np
import pytest

from bench_modules import load_bench

DECKS = ["younestouati", "gnome-plastic"]


@pytest.fixture(scope="module")
def bench():
    return load_bench("bench_recognition", DECKS)


def test_cached_scenes_are_the_rendered_scenes_bit_for_bit(bench, tmp_path):
    rendered = list(bench.render_scenes(5, 3, DECKS))
    assert [len(ann.cards) for _, ann in rendered] == [1, 2, 3]   # 1 to 8 cards, in turn
    first = list(bench.cached_scenes(5, 3, DECKS, tmp_path))      # rendered and stored
    (stored,) = tmp_path.iterdir()
    assert stored == bench.cache_path(5, 3, DECKS, tmp_path)
    stamp = stored.stat().st_mtime_ns
    again = list(bench.cached_scenes(5, 3, DECKS, tmp_path))      # read back, not rendered
    assert stored.stat().st_mtime_ns == stamp and len(list(tmp_path.iterdir())) == 1
    for (img, ann), (img1, ann1), (img2, ann2) in zip(rendered, first, again):
        assert img.dtype == img2.dtype == np.uint8 and np.array_equal(img, img1) and np.array_equal(img, img2)
        assert [c.card for c in ann.cards] == [c.card for c in ann1.cards] == [c.card for c in ann2.cards]
        assert [c.box for c in ann.cards] == [c.box for c in ann2.cards]


def test_a_damaged_cache_is_named_not_misread(bench, tmp_path):
    list(bench.cached_scenes(5, 3, DECKS, tmp_path))
    path = bench.cache_path(5, 3, DECKS, tmp_path)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])   # cut short
    scenes = bench.cached_scenes(5, 3, DECKS, tmp_path)
    with pytest.raises(RuntimeError, match="unreadable at scene .*delete it"):
        list(scenes)


def test_a_cache_left_half_written_is_not_used(bench, tmp_path):
    scenes = bench.cached_scenes(5, 3, DECKS, tmp_path)
    next(scenes)
    scenes.close()                                          # stopped after one scene
    assert not bench.cache_path(5, 3, DECKS, tmp_path).exists()
    assert len(list(bench.cached_scenes(5, 3, DECKS, tmp_path))) == 3
    assert bench.cache_path(5, 3, DECKS, tmp_path).exists()


def test_the_cache_key_follows_seed_count_and_designs(bench, tmp_path):
    key = bench.cache_path(5, 3, DECKS, tmp_path)
    others = {bench.cache_path(6, 3, DECKS, tmp_path), bench.cache_path(5, 4, DECKS, tmp_path),
              bench.cache_path(5, 3, DECKS[:1], tmp_path)}
    assert key not in others and len(others) == 3
    assert key == bench.cache_path(5, 3, list(DECKS), tmp_path)


def test_a_generated_design_enters_the_key_by_its_parameters(bench, tmp_path, monkeypatch):
    """The generator's source draws no registry design: it is not in the key.  A generated
    design's parameters are: changed, its scenes are drawn anew."""
    assert all(source.name != "procedural.py" for source in bench.RENDERER_SOURCES)
    assert {source.name for source in bench.RENDERER_SOURCES} >= {"scene.py", "textures.py", "decks.py"}
    registry, generated = bench.cache_path(5, 3, DECKS, tmp_path), bench.cache_path(5, 3, ["gen-128"], tmp_path)
    real = bench.design_params
    monkeypatch.setattr(bench, "design_params", lambda number: {**real(number), "pip_scale": 0.3})
    assert bench.cache_path(5, 3, DECKS, tmp_path) == registry
    assert bench.cache_path(5, 3, ["gen-128"], tmp_path) != generated


def test_unseen_generated_designs_are_read_design_by_design(bench, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench, "CACHE_DIR", tmp_path)
    assert bench.main(["--n", "4", "--cache", "--generated", "160-161", "--show-errors", "0"]) == 0
    out = capsys.readouterr().out
    assert "unseen generated designs: gen-160 to gen-161;" in out
    designs = [line.split()[0] for line in out.splitlines() if line.startswith("gen-")]
    assert designs and set(designs) <= {"gen-160", "gen-161"}
    assert not any(line.startswith(d) for line in out.splitlines() for d in DECKS)


@pytest.mark.parametrize("text, message", [("128", "FIRST-LAST"), ("a-b", "FIRST-LAST"), ("-1-5", "FIRST-LAST"),
                                           ("159-128", "before the last")])
def test_a_bad_design_range_is_refused_by_name(bench, text, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        bench.main(["--generated", text])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_designs_the_model_trained_on_are_refused(bench, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench, "CACHE_DIR", tmp_path)
    assert bench.main(["--n", "2", "--cache", "--generated", "120-130"]) == 2
    assert "trained on 8 of these designs (gen-120 to gen-127)" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())   # refused before a scene was drawn


def test_the_benchmark_reads_its_scenes_from_the_cache(bench, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench, "CACHE_DIR", tmp_path)
    assert bench.main(["--n", "2", "--cache", "--show-errors", "0"]) == 0
    first = capsys.readouterr().out
    assert len(list(tmp_path.iterdir())) == 1
    assert bench.main(["--n", "2", "--cache", "--show-errors", "0"]) == 0
    second = capsys.readouterr().out

    def figures(out):  # the score lines, without the timings
        return [line for line in out.splitlines() if " images " in line]
    assert figures(first) == figures(second) and len(figures(first)) >= 4


def test_the_stage_times_add_up_to_the_time_per_image(bench, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench, "CACHE_DIR", tmp_path)
    assert bench.main(["--n", "3", "--cache", "--stages", "--show-errors", "0"]) == 0
    out = capsys.readouterr().out
    mean = float(re.search(r"one core: mean ([\d.]+) ms", out).group(1))
    stages = dict((name, float(ms)) for name, ms in
                  re.findall(r"(\w+) ([\d.]+) ms", out.split("of which, mean per image:")[1].splitlines()[0]))
    assert list(stages) == ["detect", "refine", "read", "look_turned", "look_weak", "assemble"]
    assert stages["detect"] > 0 and stages["read"] > 0   # (a second look may find nothing to do: 0.0)
    assert sum(stages.values()) == pytest.approx(mean, abs=0.1 * len(stages))  # each rounded to 0.1 ms


def test_versus_reads_the_same_scenes_with_a_second_model_in_turn(bench, tmp_path, monkeypatch, capsys):
    """--versus DIR times a second model image by image beside the first; the same model
    read twice must score the same, and each gets its own time line."""
    from vision.recogniser import MODEL_DIR

    monkeypatch.setattr(bench, "CACHE_DIR", tmp_path)
    assert bench.main(["--n", "3", "--cache", "--show-errors", "0", "--versus", str(MODEL_DIR)]) == 0
    out = capsys.readouterr().out
    mine, theirs = out.split("\nversus ")
    assert theirs.startswith(str(MODEL_DIR))
    all_line = [line for line in mine.splitlines() if line.startswith("all ")]
    assert len(all_line) == 1 and all_line[0] in theirs.splitlines()
    assert re.search(r"one core: mean [\d.]+ ms", theirs) and re.search(r"one core: mean [\d.]+ ms", mine)


def test_the_intervals_say_which_targets_one_sample_does_not_settle(bench):
    from vision.evaluation import Summary

    # About the committed model's seed-7 counts: every target met, precision and exact-set inside their intervals.
    seed7 = Summary(images=560, readable=1764, tp=1743, fp=7, tp_readable=1743, exact=537)
    line = bench.interval_line(seed7)
    assert line.startswith("95% intervals on this sample: precision 99.18-99.81%, recall 98.19-99.22%, "
                           "exact-set 93.91-97.25%")
    assert line.endswith("; not settled by it: precision, exact-set")
    # Fifteen times the sample at the same rates: the intervals narrow past every target.
    pooled = Summary(images=8400, readable=26460, tp=26145, fp=105, tp_readable=26145, exact=8055)
    assert bench.interval_line(pooled).endswith("; every target settled by it")
    # A clear miss is settled too: it is not named.
    short = Summary(images=560, readable=1764, tp=1600, fp=40, tp_readable=1600, exact=450)
    assert bench.interval_line(short).endswith("; every target settled by it")


def test_several_seeds_are_read_as_one_sample_with_a_line_each(bench, tmp_path, monkeypatch, capsys):
    """--seeds reads each seed's scenes as --seed does, and pools them: the pooled counts
    are the sums of the seeds' own runs."""
    monkeypatch.setattr(bench, "CACHE_DIR", tmp_path)

    def all_line(out):
        (line,) = [line for line in out.splitlines() if line.startswith("all ")]
        return line

    def counts(line):   # images, cards, wrong, unknown
        return [int(x) for x in re.findall(r"(?:images|cards|wrong|unknown)\s+(\d+)", line)]

    singles = {}
    for seed in (5, 6):
        assert bench.main(["--n", "3", "--cache", "--seed", str(seed), "--show-errors", "0"]) == 0
        singles[seed] = all_line(capsys.readouterr().out)
    assert bench.main(["--n", "3", "--cache", "--seeds", "5,6", "--show-errors", "0"]) == 0
    out = capsys.readouterr().out
    assert "6 scenes of 1280x720, 1-8 cards, seeds 5, 6, 3 of each" in out
    for seed, line in singles.items():   # each seed's line: its own run's figures
        (mine,) = [x for x in out.splitlines() if x.startswith(f"seed {seed} ")]
        assert mine.split(None, 2)[2] == line.split(None, 1)[1]
    assert counts(all_line(out)) == [a + b for a, b in zip(counts(singles[5]), counts(singles[6]))]
    assert "95% intervals on this sample" in out


@pytest.mark.parametrize("text, message", [("7,x", "whole numbers"), ("7,,99", "whole numbers"), ("7,-1", "from 0 up"),
                                           ("7,99,7", "given twice")])
def test_a_bad_seed_list_is_refused_by_name(bench, text, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        bench.main(["--seeds", text])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("text, message", [("-1", "from 0 up"), ("x", "whole numbers"), ("7,99", "one seed")])
def test_a_bad_seed_is_refused_by_name(bench, text, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        bench.main(["--seed", text])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_seed_and_seeds_do_not_go_together(bench, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--seed", "7", "--seeds", "7,99"])
    assert "not allowed with argument" in capsys.readouterr().err
