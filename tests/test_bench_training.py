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
    assert "--steps and --scenes must be at least 1" in capsys.readouterr().err
