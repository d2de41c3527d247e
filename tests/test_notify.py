"""sd_notify and the frame-fed watchdog against a fake systemd notify socket."""

from __future__ import annotations

import os
import socket
import threading

import pytest

from cardtable import notify
from cardtable.notify import Watchdog, watchdog_interval


class FakeSystemd:
    """A bound SOCK_DGRAM unix socket standing in for systemd's notify socket."""

    def __init__(self, address: str):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(address)
        self.sock.settimeout(5)   # a missing datagram fails the test instead of hanging it

    def receive(self) -> str:
        return self.sock.recv(4096).decode()

    def pending(self) -> list[str]:
        """Every datagram already queued, without waiting."""
        out = []
        self.sock.setblocking(False)
        try:
            while True:
                out.append(self.sock.recv(4096).decode())
        except BlockingIOError:
            return out
        finally:
            self.sock.settimeout(5)

    def close(self):
        self.sock.close()


@pytest.fixture
def systemd(tmp_path, monkeypatch):
    path = tmp_path / "notify"
    fake = FakeSystemd(str(path))
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    yield fake
    fake.close()


def test_not_under_systemd_everything_is_a_no_op(monkeypatch):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert notify.ready("up") is False
    assert notify.stopping() is False
    assert notify.status("x") is False
    assert notify.watchdog_ping() is False


def test_readiness_status_and_stopping_datagrams(systemd):
    assert notify.ready("serving on http://cardtable.local/")
    assert systemd.receive() == "READY=1\nSTATUS=serving on http://cardtable.local/"
    assert notify.status("hand 3,\nAnn to play")
    assert systemd.receive() == "STATUS=hand 3, Ann to play"       # one line, always
    assert notify.extend_timeout(20)
    assert systemd.receive() == "EXTEND_TIMEOUT_USEC=20000000"
    assert notify.watchdog_ping()
    assert systemd.receive() == "WATCHDOG=1"
    assert notify.stopping("SIGTERM")
    assert systemd.receive() == "STOPPING=1\nSTATUS=SIGTERM"
    assert systemd.pending() == []


def test_abstract_notify_socket(monkeypatch):
    name = f"cardtable-test-{os.getpid()}-{threading.get_ident()}"
    fake = FakeSystemd("\0" + name)
    try:
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        assert notify.ready()
        assert fake.receive() == "READY=1"
    finally:
        fake.close()


def test_a_gone_socket_is_logged_not_raised(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "nobody-listens"))
    assert notify.ready() is False
    assert "sd_notify" in caplog.text
    monkeypatch.setenv("NOTIFY_SOCKET", "relative/path")
    assert notify.ready() is False


def test_watchdog_interval_from_the_environment():
    assert watchdog_interval({"WATCHDOG_USEC": "30000000"}) == 15.0
    assert watchdog_interval({"WATCHDOG_USEC": "1000000", "WATCHDOG_PID": str(os.getpid())}) == 0.5
    assert watchdog_interval({"WATCHDOG_USEC": "1000000", "WATCHDOG_PID": str(os.getpid() + 1)}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "0"}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "soon"}) is None
    assert watchdog_interval({}) is None


def test_watchdog_pets_only_while_frames_flow(systemd, monkeypatch):
    monkeypatch.setenv("WATCHDOG_USEC", "30000000")
    wd = Watchdog()
    assert wd.enabled and wd.interval == 15.0
    assert wd.maybe_pet() is False                 # started, but no frame yet
    wd.frame_seen()
    wd.frame_seen()
    assert wd.maybe_pet() is True
    assert systemd.receive() == "WATCHDOG=1"
    assert wd.maybe_pet() is False                 # the camera stalled: no pet, systemd will restart us
    assert wd.maybe_pet() is False
    assert systemd.pending() == []
    wd.frame_seen()                                # frames again
    assert wd.maybe_pet() is True
    assert systemd.receive() == "WATCHDOG=1"
    assert wd.pets == 2 and wd.frames == 3


def test_watchdog_disabled_without_watchdog_usec(systemd, monkeypatch):
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    wd = Watchdog()
    wd.frame_seen()
    assert not wd.enabled and wd.maybe_pet() is False
    wd.start().stop()
    assert systemd.pending() == []


class CountingWatchdog(Watchdog):
    """Counts the background thread's ticks, so the test waits for ticks, not for time."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.ticks = threading.Semaphore(0)

    def maybe_pet(self):
        petted = super().maybe_pet()
        self.ticks.release()
        return petted


def test_watchdog_thread_pets_only_after_frames(systemd):
    wd = CountingWatchdog(interval=0.005)
    with wd:
        def tick():
            assert wd.ticks.acquire(timeout=10), "the watchdog thread stopped ticking"
        for _ in range(3):
            tick()
        assert systemd.pending() == []             # three intervals, no frame: no pet
        wd.frame_seen()
        for _ in range(3):                         # the next tick after the frame pets
            tick()
        for _ in range(3):                         # stalled again: no more pets
            tick()
    assert wd.pets == 1
    assert systemd.pending() == ["WATCHDOG=1"]


def test_watchdog_rejects_a_nonpositive_interval():
    with pytest.raises(ValueError):
        Watchdog(interval=0)


