"""``cardtable run``: the whole product wired in one process, and the systemd
service protocol (readiness, a watchdog fed only while frames flow, a clean
stop on SIGTERM that loses no event)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import cv2
import numpy as np
import pytest

from cardtable.config import Config
from cardtable.run import Table
from cardtable.store import Store
from vision.card_reader import LookupReader
from vision.sources import ListSource

PIN = "4321"


def post(url: str, event: dict) -> dict:
    req = urllib.request.Request(url + "/api/events", data=json.dumps(event).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "X-Table-Pin": PIN})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.load(resp)


def get(url: str, path: str) -> dict:
    with urllib.request.urlopen(url + path, timeout=10) as resp:
        return json.load(resp)


def test_table_wires_referee_store_signals_and_dashboard(tmp_path):
    config = Config(db=str(tmp_path / "t.sqlite"), port=0, pin=PIN)
    frames = [np.full((360, 640, 3), 40, np.uint8)] * 5
    table = Table(config, source=ListSource(frames), reader=LookupReader(), image_size=(640, 360))
    table.start()
    try:
        url = table.url
        v = post(url, {"event": "new_game", "game": "big-two", "players": ["Ann", "Bo", "Cy"], "dealer": 1})
        assert v["ok"], v
        assert post(url, {"event": "play", "seat": 0, "cards": ["5D"]})["ok"]
        assert post(url, {"event": "play", "seat": 1, "cards": ["4C"]})["code"] == "does_not_beat"
        state = get(url, "/api/state")
        assert state["to_act"] == 1 and state["players"] == ["Ann", "Bo", "Cy"]
        leds = table.signals.describe()
        assert leds["simulated"] is True
        assert get(url, "/api/camera")["state"] in ("ok", "ended", "starting", "running")
        assert "not calibrated" in table.status()["calibration"]
    finally:
        table.stop()
    # everything was stored: a new process resumes the same game
    store = Store(config.db)
    assert [e["event"] for e in store.events(store.last_game()["id"])] == ["new_game", "play", "play"]


def test_buttons_become_events(tmp_path):
    config = Config(db=str(tmp_path / "t.sqlite"), port=0, pin=PIN)
    table = Table(config, source=ListSource([np.zeros((360, 640, 3), np.uint8)] * 3), reader=LookupReader(),
                  serve=False, image_size=(640, 360))
    table.start()
    try:
        table.session.submit({"event": "new_game", "game": "big-two", "players": ["A", "B", "C"], "dealer": 0})
        table.session.submit({"event": "play", "seat": 0, "cards": ["5D"]})
        table.signals.press("pass")              # seat 1 is to act: the button passes for it
        deadline = time.monotonic() + 10
        while table.session.state()["to_act"] != 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert table.session.state()["to_act"] == 2
        table.signals.press("undo")
        deadline = time.monotonic() + 10
        while table.session.state()["to_act"] != 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert table.session.state()["to_act"] == 1
    finally:
        table.stop()


def test_service_ready_watchdog_and_sigterm_lose_nothing(tmp_path):
    frames = tmp_path / "frames"
    frames.mkdir()
    for i in range(30):
        cv2.imwrite(str(frames / f"f{i:03d}.png"), np.full((720, 1280, 3), 60, np.uint8))
    sock_path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(sock_path)
    sock.settimeout(0.2)
    db = str(tmp_path / "table.sqlite")
    env = {**os.environ, "NOTIFY_SOCKET": sock_path, "WATCHDOG_USEC": "200000", "PYTHONUNBUFFERED": "1"}
    env.pop("WATCHDOG_PID", None)
    proc = subprocess.Popen([sys.executable, "-m", "cardtable", "run", "--db", db, "--port", "0", "--pin", PIN,
                             "--source", f"images:{frames}/*.png@15"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    messages: list[str] = []

    def collect(until: float) -> None:
        while time.monotonic() < until:
            try:
                messages.append(sock.recv(4096).decode())
            except socket.timeout:
                pass

    try:
        line, seen = "", []
        deadline = time.monotonic() + 60
        while "dashboard on" not in line and time.monotonic() < deadline:
            line = proc.stdout.readline()
            seen.append(line)
            assert line or proc.poll() is None, "cardtable run exited early: " + "".join(seen)
        url = re.search(r"(http://[0-9.]+:\d+)", line).group(1)
        collect(time.monotonic() + 4)             # 30 frames at 15 fps: 2 s of frames, then none
        assert any(m.startswith("READY=1") for m in messages), messages
        pets = [i for i, m in enumerate(messages) if m == "WATCHDOG=1"]
        assert len(pets) >= 3, messages               # fed while frames flowed
        before = len(messages)
        collect(time.monotonic() + 1.5)
        assert "WATCHDOG=1" not in messages[before:], "the watchdog was fed with no frames flowing"
        acked = [post(url, {"event": "new_game", "game": "big-two", "players": ["A", "B", "C"], "dealer": 0})]
        for seat, card in ((0, "5D"), (1, "6D"), (2, "7D"), (0, "8D")):
            acked.append(post(url, {"event": "play", "seat": seat, "cards": [card]}))
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        collect(time.monotonic() + 0.5)
        assert any(m.startswith("STOPPING=1") for m in messages), messages
    finally:
        if proc.poll() is None:
            proc.kill()
        sock.close()
    store = Store(db)
    stored = store.events(store.last_game()["id"])
    assert len(stored) == len(acked) == 5
    assert [e.get("cards") for e in stored[1:]] == [["5D"], ["6D"], ["7D"], ["8D"]]


def test_bad_configuration_exits_2(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text("[gpio]\nseat_leds = [17, 17]\n")
    out = subprocess.run([sys.executable, "-m", "cardtable", "run", "--config", str(bad), "--db",
                          str(tmp_path / "t.sqlite"), "--source", "images:/nonexistent/*.png"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "17" in out.stderr
    out = subprocess.run([sys.executable, "-m", "cardtable", "run", "--config", str(tmp_path / "none.toml")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "no such configuration file" in out.stderr
    out = subprocess.run([sys.executable, "-m", "cardtable", "run", "--pin", "12", "--db", str(tmp_path / "t.sqlite")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "pin must be 4-8 digits" in out.stderr     # overrides are checked too


def test_an_uncalibrated_table_fits_itself_to_the_camera_frame_size(tmp_path):
    """A webcam that gives 640x480 when 1280x720 was asked for still works uncalibrated."""
    config = Config(db=str(tmp_path / "t.sqlite"), port=0, pin=PIN)
    frames = [np.full((480, 640, 3), 40, np.uint8)] * 4
    table = Table(config, source=ListSource(frames), reader=LookupReader(), serve=False)
    table.start()
    try:
        table.wait_camera(threading.Event())
        assert table.live.geometry.image_size == (640, 480)
        assert table.feed.skipped == 0 and table.feed.frames == 4
    finally:
        table.stop()


def test_confirm_button_keeps_a_hand_in_twenty_two_and_announces_in_big_two(tmp_path):
    config = Config(db=str(tmp_path / "t.sqlite"), port=0, pin=PIN)
    table = Table(config, source=ListSource([np.zeros((360, 640, 3), np.uint8)]), reader=LookupReader(),
                  serve=False, image_size=(640, 360))
    table.start()
    try:
        table.wait_camera(threading.Event())
        table.session.submit({"event": "new_game", "game": "twenty-two", "players": ["A", "B", "C"], "dealer": 0})
        table.signals.press("confirm")
        last = table.session.referee.raw[-1]
        assert last == {"event": "exchange", "seat": 1, "count": 0}
        assert table.session.referee.verdicts[-1]["ok"]
        table.session.submit({"event": "new_game", "game": "big-two", "players": ["A", "B"], "dealer": 0,
                              "options": {"hand_size": 2, "no_announce_penalty": 3}})
        table.session.submit({"event": "play", "seat": 0, "cards": ["3C"]})
        table.signals.press("confirm")
        assert table.session.referee.raw[-1] == {"event": "announce", "seat": 0}
        assert table.session.referee.verdicts[-1]["ok"]
    finally:
        table.stop()
