"""bench/bench_engines.py: every network timed with both engines."""

from __future__ import annotations

import re

from bench_modules import load_bench


def test_engine_benchmark_times_every_network_with_both_engines(capsys):
    bench = load_bench("bench_engines", [])
    assert bench.main(["--repeat", "2"]) == 0
    out = capsys.readouterr().out
    assert "engines: onnxruntime, opencv" in out
    rows = re.findall(r"^(detector|refiner|classifier) +(\S+) +([\d.]+) ms +([\d.]+) ms$", out, re.M)
    assert [r[0] for r in rows] == ["detector"] + ["refiner"] * 3 + ["classifier"] * 3
    assert all(float(r[2]) > 0 and float(r[3]) > 0 for r in rows)
    in_turn = re.findall(r"^  (onnxruntime|opencv) +([\d.]+) ms in turn; +([\d.]+) ms if", out, re.M)
    assert [e for e, _, _ in in_turn] == ["onnxruntime", "opencv"]
