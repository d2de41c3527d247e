"""``cardtable serve``: arguments, configuration errors, and a real start, resume and stop."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request

import pytest

from cardtable.session import Session
from cardtable.store import Store
from web.cli import build_parser, main, secret_key_for

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("argv, message", [
    (["--port", "x"], "must be a whole number 0-65535"),
    (["--port", "70000"], "must be a whole number 0-65535"),
    (["--pin", "12"], "must be 4-8 digits"),
    (["--pin", "abcd"], "must be 4-8 digits"),
    (["--bogus"], "unrecognized arguments"),
])
def test_bad_arguments(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_bad_config_is_a_message(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[table]\nport = 'eighty'\n")
    assert main(["--config", str(cfg)]) == 2
    assert "[table] port must be a whole number" in capsys.readouterr().err
    assert main(["--config", str(tmp_path / "missing.toml")]) == 2
    assert "no such configuration file" in capsys.readouterr().err


def test_unusable_database_is_a_message(tmp_path, capsys):
    bad = tmp_path / "not-a-db.sqlite"
    bad.write_bytes(b"this is not sqlite" * 100)
    assert main(["--db", str(bad), "--pin", "1234", "--port", "0"]) == 2
    assert f"cannot open {bad}" in capsys.readouterr().err


def test_secret_key_is_kept_beside_the_database(tmp_path):
    db = str(tmp_path / "t.sqlite")
    key = secret_key_for(db)
    assert len(key) == 64 and secret_key_for(db) == key
    assert oct(os.stat(tmp_path / "web-secret").st_mode & 0o777) == "0o600"


def start(tmp_path, *args):
    proc = subprocess.Popen([sys.executable, "-m", "cardtable", "serve", "--db", str(tmp_path / "t.sqlite"),
                             "--port", "0", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    lines = []
    while True:
        line = proc.stdout.readline()
        assert line, f"serve exited early: {proc.stderr.read()}"
        lines.append(line)
        if line.startswith("serving the dashboard on "):
            url = line.split()[4].rstrip("/")
            return proc, url, lines


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0
    proc.stdout.close()
    proc.stderr.close()


def test_serve_resumes_the_last_game_and_prints_a_generated_pin(tmp_path):
    store = Store(str(tmp_path / "t.sqlite"))
    session = Session(store)
    session.submit({"event": "new_game", "game": "big-two", "players": ["Ann", "Bo"], "dealer": 0})
    session.submit({"event": "play", "seat": 1, "cards": ["3c"]})
    store.close()
    proc, url, lines = start(tmp_path)
    try:
        pin_line = next(line for line in lines if line.startswith("table PIN"))
        pin = pin_line.split()[-1]
        assert pin.isdigit() and len(pin) == 4
        assert (tmp_path / "table-pin").read_text().strip() == pin
        state = json.load(urllib.request.urlopen(url + "/api/state", timeout=10))
        assert state["players"] == ["Ann", "Bo"] and state["to_act"] == 0 and state["log_length"] == 2
        req = urllib.request.Request(url + "/api/events", data=json.dumps({"event": "pass", "seat": 0}).encode(),
                                     headers={"Content-Type": "application/json", "X-Table-Pin": pin})
        verdict = json.load(urllib.request.urlopen(req, timeout=10))
        assert verdict["ok"] and verdict["trick_winner"] == 1
    finally:
        stop(proc)
    # a second start keeps the same PIN and says nothing about it
    proc, url, lines = start(tmp_path)
    try:
        assert not any(line.startswith("table PIN") for line in lines)
        state = json.load(urllib.request.urlopen(url + "/api/state", timeout=10))
        assert state["log_length"] == 3
    finally:
        stop(proc)


def test_serve_stops_cleanly_with_open_streams(tmp_path):
    proc, url, _ = start(tmp_path, "--pin", "5555")
    streams = [urllib.request.urlopen(url + "/api/stream", timeout=10) for _ in range(3)]
    for s in streams:
        assert s.readline().startswith(b"retry:")
    stop(proc)
    for s in streams:
        s.close()
