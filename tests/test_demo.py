"""``cardtable demo --once --speed 20``: the bundled footage through the real
pipeline (the shipped recogniser, the live table, the referee, the store, the
simulated LEDs) gives exactly the game it shows."""

from __future__ import annotations

import json
import subprocess
import sys

from cardtable.demo import DEMO_DIR, load_script
from cardtable.store import Store


def test_demo_once_finishes_with_the_expected_final_scores(tmp_path):
    db = str(tmp_path / "demo.sqlite")
    out = subprocess.run([sys.executable, "-m", "cardtable", "demo", "--once", "--speed", "20", "--db", db],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    script = load_script(DEMO_DIR)
    names = script["new_game"]["players"]
    expected = ", ".join(f"{n} {s}" for n, s in zip(names, script["final_scores"]))
    assert f"final scores: {expected}" in out.stdout
    assert "winners: " + ", ".join(names[s] for s in script["winners"]) in out.stdout
    store = Store(db)
    stored = store.events(store.last_game()["id"])
    # every event the camera produced is the one the footage shows, in order
    assert [{k: e.get(k) for k in x} for e, x in zip(stored, script["expected_log"])] == script["expected_log"]
    assert len(stored) == len(script["expected_log"])


def test_demo_rejects_a_bad_speed():
    out = subprocess.run([sys.executable, "-m", "cardtable", "demo", "--once", "--speed", "0"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--speed" in out.stderr


def test_the_footage_script_is_consistent():
    script = load_script(DEMO_DIR)
    assert script["new_game"]["game"] == "trumf"
    assert json.dumps(script["expected_log"][0]) == json.dumps(script["new_game"])
