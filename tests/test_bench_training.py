"""bench/bench_training.py: a training step of each network timed, in each precision the CPU has."""

from __future__ import annotations

import dataclasses
import re

import pytest
from bench_modules import load_bench

from vision.training.train import CONFIGS, fast_math


def test_training_benchmark_times_each_network_in_each_precision(capsys):
    bench = load_bench("bench_training", ["letele"])
    assert bench.main(["--steps", "2", "--scenes", "4", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "2 steps of each network" in out
    native = fast_math(dataclasses.replace(CONFIGS["full"], bf16=True))
    steps = bench.full_steps(CONFIGS["full"])
    rows = re.findall(r"^(detector|refiner|classifier) +([\d.]+) ms +(?:([\d.]+) ms +([\d.]+)x|- +-) +(\d+):", out, re.M)
    assert [r[0] for r in rows] == ["detector", "refiner", "classifier"]
    for name, f32, b16, ratio, n in rows:
        assert float(f32) > 0 and int(n) == steps[name]
        if native:
            assert float(b16) > 0 and abs(float(ratio) - float(f32) / float(b16)) < 0.02
        else:
            assert b16 == ""
    assert ("does not compute bfloat16 natively" in out) == (not native)
    # The total counts every classifier the recipe trains (3 in `full`), each as long as the first.
    minutes = [re.findall(r"([\d.]+) min", line) for line in out.splitlines() if line.startswith(("detector",
                                                                                                   "refiner",
                                                                                                   "classifier"))]
    total = re.search(r"^in all +\(the classifier 3 times\) +: +([\d.]+) min", out, re.M)
    assert CONFIGS["full"].cls_members == 3 and total
    expected = float(minutes[0][0]) + float(minutes[1][0]) + 3 * float(minutes[2][0])
    assert abs(float(total.group(1)) - expected) <= 0.25
    # The three classifiers timed side by side, as the command trains them (one thread each here):
    # the total takes the detector and refiner from the table, in the precision the command uses,
    # and the slowest of the three for every classifier step.
    side = re.search(r"^3 classifiers side by side, 1 thread each \((bfloat16|float32)\): a step of each took "
                     r"([\d.]+), ([\d.]+), ([\d.]+) ms, ([\d.]+) ms a step in all against ([\d.]+) one at a time "
                     r"\(([\d.]+) times as many steps\)$", out, re.M)
    assert side and side.group(1) == ("bfloat16" if native else "float32")
    each = [float(side.group(k)) for k in (2, 3, 4)]
    assert min(each) > 0 and abs(float(side.group(5)) - max(each) / 3) <= 0.06
    column = 1 if native else 0
    assert float(side.group(6)) == float(rows[2][2 if native else 1])
    assert abs(float(side.group(7)) - 3 * float(side.group(6)) / max(each)) <= 0.01
    together = re.search(r"^in all +\(classifiers side by side, as the command trains them\): +([\d.]+) min", out, re.M)
    expected = (float(minutes[0][column]) + float(minutes[1][column])
                + max(each) / 1000 * steps["classifier"] / 60)
    assert together and abs(float(together.group(1)) - expected) <= 0.25
    # Each network's work a step, and the rate of its float32 step: the work over the float32
    # time in the first table, and that rate's share of the matrix product's.
    peak = re.search(r"matrix product, 1 thread: ([\d.]+) GFLOP/s\)$", out, re.M)
    rates = re.findall(r"^(detector|refiner|classifier) +([\d.]+) GFLOP +([\d.]+) GFLOP/s +(\d+)% of the matrix "
                       r"product's$", out, re.M)
    assert peak and float(peak.group(1)) > 0 and [r[0] for r in rates] == ["detector", "refiner", "classifier"]
    work = bench.step_gflop(CONFIGS["full"])
    for (name, gflop, rate, share), (_, f32, *_rest) in zip(rates, rows):
        assert abs(float(gflop) - work[name]) < 0.01
        assert abs(float(rate) - work[name] / (float(f32) / 1000)) <= 0.01 * float(rate) + 0.1
        assert abs(int(share) - 100 * float(rate) / float(peak.group(1))) <= 1


def test_a_steps_work_is_counted_from_the_layers():
    """The classifier's count checked by hand from its layers (``full``: width 1.5, so 24, 48
    and 96 channels, on 48 x 32 crops): forward, each convolution's and matrix product's
    multiply-adds twice; backward, as much again for the weights' gradients and again for the
    inputs', but for the first convolution's input, whose gradient nothing needs."""
    from vision.index_geometry import NOT_INDEX

    bench = load_bench("bench_training", [])
    cfg = CONFIGS["full"]
    assert cfg.cls_width == 1.5 and cfg.cls_batch == 128
    first = 48 * 32 * 24 * 3 * 9
    macs = (first + 24 * 16 * 48 * 24 * 9 + 24 * 16 * 48 * 48 * 9 + 12 * 8 * 96 * 48 * 9 + 12 * 8 * 96 * 96 * 9
            + 96 * 6 * 4 * 128 + 128 * (NOT_INDEX + 1 + 4))
    expected = 2 * cfg.cls_batch * (3 * macs - first) / 1e9
    work = bench.step_gflop(cfg)
    assert abs(work["classifier"] - expected) < 1e-6
    # A wider network does more: the detector's and refiner's counts grow with their widths too.
    wide = bench.step_gflop(dataclasses.replace(cfg, det_width=2.0, refine_width=2.0, cls_width=3.0))
    assert all(wide[name] > 3 * work[name] for name in work)


def test_full_config_step_counts():
    """6000 detector steps; the refiner's 8 and the classifier's 14 epochs over 95% of their crops."""
    bench = load_bench("bench_training", [])
    steps = bench.full_steps(CONFIGS["full"])
    assert steps == {"detector": 6000, "refiner": 8 * 659, "classifier": 14 * 1036}


def test_bad_arguments_are_refused(capsys):
    bench = load_bench("bench_training", [])
    with pytest.raises(SystemExit) as exit_:
        bench.main(["--steps", "0"])
    assert exit_.value.code == 2
    assert "--steps, --scenes and --threads must be at least 1, --jobs at least 0" in capsys.readouterr().err
