"""Every example in the project's docstrings runs and says what it shows.

The examples (``>>>``) are the first thing a newcomer reads and copies; one
that no longer holds is worse than none.  Each module of the five packages
that has any is run here, from the repository's root (a few examples name
files in it), and so is each script of ``bench/`` that has any.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

from bench_modules import BENCH_DIR, load_bench

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("referee", "vision", "hardware", "web", "cardtable")


def modules_with_examples() -> list[str]:
    names = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if ">>>" in path.read_text(encoding="utf-8"):
                names.append(".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"))
    return names


def benchmarks_with_examples() -> list[str]:
    return [path.stem for path in sorted(BENCH_DIR.glob("*.py")) if ">>>" in path.read_text(encoding="utf-8")]


def test_the_packages_and_benchmarks_have_examples_to_run():
    # (A change that stops finding them would pass every case below by running none.)
    assert {"referee.cards", "vision.recogniser", "hardware.signals", "cardtable.store"} <= set(modules_with_examples())
    assert {"bench_recognition", "diagnose_recognition"} <= set(benchmarks_with_examples())


@pytest.mark.parametrize("name", modules_with_examples())
def test_the_docstring_examples_hold(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("name", benchmarks_with_examples())
def test_the_benchmarks_docstring_examples_hold(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = doctest.testmod(load_bench(name, []), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
