"""Load a script of ``bench/`` as a module, for the tests of the benchmarks."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from vision.synth.decks import available_decks

BENCH_DIR = Path(__file__).resolve().parents[1] / "bench"


def load_bench(name: str, needs_decks: list[str]) -> ModuleType:
    """``bench/<name>.py`` as a module; fails (does not skip) when the card art it needs is missing."""
    missing = set(needs_decks) - set(available_decks())
    if missing:
        pytest.fail(f"card art not rendered ({', '.join(sorted(missing))}): run scripts/fetch-art.sh")
    spec = importlib.util.spec_from_file_location(name, BENCH_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs, as an import would: a dataclass in the script looks its
    # module up by name.
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
