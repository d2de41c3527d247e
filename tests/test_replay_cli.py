"""``cardtable replay``: the JSON document of the contract, the readable account,
and exit 2 with file and line for a log that cannot be read."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import new_game, pass_, play
from referee.simulate import random_game
import random


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cardtable", *args], capture_output=True, text=True, timeout=60)


def write_log(path, events):
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return str(path)


def test_json_output_follows_the_contract(tmp_path):
    log = write_log(tmp_path / "g.jsonl", [new_game("big-two", 3), play(0, "5D"), play(1, "4C"), play(1, "9C"),
                                           pass_(2), pass_(0)])
    out = run("replay", log, "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert set(doc) == {"verdicts", "state"}
    assert [v["index"] for v in doc["verdicts"]] == list(range(6))
    assert doc["verdicts"][2] | {"message": ""} == {"index": 2, "event": "play", "ok": False,
                                                     "code": "does_not_beat", "message": ""}
    assert doc["verdicts"][5]["trick_winner"] == 1
    for key in ("game", "players", "hand_number", "dealer", "to_act", "scores", "eliminated", "game_over", "winners"):
        assert key in doc["state"]
    assert doc["state"]["to_act"] == 1


def test_readable_account_shows_tricks_and_scores(tmp_path):
    events = random_game("big-two", 3, random.Random(4), max_events=2000)
    log = write_log(tmp_path / "g.jsonl", events)
    out = run("replay", log)
    assert out.returncode == 0, out.stderr
    assert "trick to P" in out.stdout and "hand over:" in out.stdout and "scores:" in out.stdout


@pytest.mark.parametrize("content,line,reason", [
    ('{"event": "new_game", "game": "big-two", "players": ["A","B"], "dealer": 0}\n{"event": "play", \n', 2,
     "not JSON"),
    ('[1, 2]\n', 1, "not a JSON object"),
    ('{"event": "undo"}\n{"seat": 1}\n', 2, "no 'event' field"),
    ('{"event": "undo"}\n\n{"event": "undo"}\n', 2, "empty line"),
])
def test_unreadable_logs_exit_2_with_file_line_and_reason(tmp_path, content, line, reason):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    out = run("replay", str(path), "--json")
    assert out.returncode == 2
    assert f"{path}:{line}:" in out.stderr and reason in out.stderr
    assert out.stdout == ""


def test_missing_file_exits_2(tmp_path):
    out = run("replay", str(tmp_path / "nope.jsonl"))
    assert out.returncode == 2 and "cannot read" in out.stderr


def test_unknown_command_exits_2():
    out = run("juggle")
    assert out.returncode == 2 and "unknown command" in out.stderr
