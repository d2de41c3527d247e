"""systemd's service notifications (``sd_notify``) and a frame-fed watchdog, without a dependency.

Under systemd with ``Type=notify`` the service says when it is ready, pets the
watchdog and says when it stops, by sending datagrams to the socket named in
``$NOTIFY_SOCKET`` (a path, or ``@name`` for an abstract socket).  Outside
systemd (a laptop, the tests) ``NOTIFY_SOCKET`` is unset and every call here is
a no-op that returns False.

>>> ready("serving on port 80", env={})     # env: os.environ by default
False

The watchdog is fed only while frames keep flowing: a hung camera stops the
pets, systemd kills the service after ``WatchdogSec`` and ``Restart=on-failure``
starts it again.

>>> sent = []
>>> wd = Watchdog(interval=15.0, send=sent.append)
>>> wd.maybe_pet()          # no frame yet: no pet
False
>>> wd.frame_seen(); wd.maybe_pet(), wd.maybe_pet()
(True, False)
>>> sent
['WATCHDOG=1']
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from typing import Callable, Mapping

__all__ = [
    "notify",
    "ready",
    "status",
    "stopping",
    "watchdog_ping",
    "extend_timeout",
    "watchdog_interval",
    "Watchdog",
]

log = logging.getLogger(__name__)


def _socket_address(value: str) -> str:
    return "\0" + value[1:] if value.startswith("@") else value


def notify(*assignments: str, env: Mapping[str, str] | None = None) -> bool:
    """Send ``assignments`` (e.g. ``"READY=1"``, ``"STATUS=..."``) as one datagram to ``$NOTIFY_SOCKET``.

    Returns True when sent, False when not under systemd or the send failed
    (logged: a notification must never take the service down).

    >>> notify("READY=1", env={})
    False
    """
    env = os.environ if env is None else env
    address = env.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address[0] not in "/@":
        log.warning("NOTIFY_SOCKET=%r is neither a path nor an abstract socket: not notifying", address)
        return False
    message = "\n".join(assignments).encode("utf-8")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(_socket_address(address))
            sock.sendall(message)
    except OSError as exc:
        log.warning("sd_notify to %s failed: %s", address, exc)
        return False
    return True


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def ready(status_text: str | None = None, *, env: Mapping[str, str] | None = None) -> bool:
    """Tell systemd the service is up (``READY=1``): send it once the socket is bound and the camera is open."""
    extra = [f"STATUS={_one_line(status_text)}"] if status_text else []
    return notify("READY=1", *extra, env=env)


def status(text: str, *, env: Mapping[str, str] | None = None) -> bool:
    """Set the one-line status ``systemctl status cardtable`` shows."""
    return notify(f"STATUS={_one_line(text)}", env=env)


def stopping(status_text: str | None = None, *, env: Mapping[str, str] | None = None) -> bool:
    """Tell systemd a clean stop has begun (``STOPPING=1``)."""
    extra = [f"STATUS={_one_line(status_text)}"] if status_text else []
    return notify("STOPPING=1", *extra, env=env)


def watchdog_ping(*, env: Mapping[str, str] | None = None) -> bool:
    """Pet the watchdog once (``WATCHDOG=1``).  Prefer :class:`Watchdog`, which checks frames flow."""
    return notify("WATCHDOG=1", env=env)


def extend_timeout(seconds: float, *, env: Mapping[str, str] | None = None) -> bool:
    """Ask for more time to start or stop (``EXTEND_TIMEOUT_USEC``), e.g. while a slow camera opens."""
    return notify(f"EXTEND_TIMEOUT_USEC={int(seconds * 1_000_000)}", env=env)


def watchdog_interval(env: Mapping[str, str] | None = None, pid: int | None = None) -> float | None:
    """Seconds between pets: half of ``$WATCHDOG_USEC``, or None when systemd wants no watchdog.

    ``$WATCHDOG_PID``, when set, must be this process (a child must not pet for its parent).

    >>> watchdog_interval({"WATCHDOG_USEC": "30000000"})
    15.0
    >>> watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}, pid=42) is None
    True
    >>> watchdog_interval({}) is None
    True
    """
    env = os.environ if env is None else env
    usec = env.get("WATCHDOG_USEC", "").strip()
    if not usec:
        return None
    want_pid = env.get("WATCHDOG_PID", "").strip()
    if want_pid:
        try:
            if int(want_pid) != (os.getpid() if pid is None else pid):
                return None
        except ValueError:
            return None
    try:
        value = int(usec)
    except ValueError:
        log.warning("WATCHDOG_USEC=%r is not a number: no watchdog", usec)
        return None
    return value / 1e6 / 2 if value > 0 else None


class Watchdog:
    """Pets systemd's watchdog only while frames keep arriving.

    The vision loop calls :meth:`frame_seen` for every frame.  A pet
    (``WATCHDOG=1``) goes out at most once per :attr:`interval` and only if a
    frame was seen since the previous pet, so a stuck camera or a hung loop
    lets the watchdog expire.  Pet from the frame loop with :meth:`maybe_pet`,
    or call :meth:`start` for a background thread that does it every interval.

    :param interval: seconds between pets; by default from ``$WATCHDOG_USEC``
        (:func:`watchdog_interval`).  With no interval (not under systemd, or
        no ``WatchdogSec=``) the watchdog is disabled and every call is a no-op.
    :param send: how to send a pet; by default ``notify("WATCHDOG=1")``.

    >>> with Watchdog(interval=None) as wd:     # not under systemd
    ...     wd.enabled, wd.frame_seen(), wd.maybe_pet()
    (False, None, False)
    """

    def __init__(self, interval: float | None = ..., *, send: Callable[[str], object] | None = None,
                 env: Mapping[str, str] | None = None):
        if interval is ...:
            interval = watchdog_interval(env)
        if interval is not None and interval <= 0:
            raise ValueError("the watchdog interval must be positive")
        self.interval = interval
        self._env = env
        self._send = send
        self._lock = threading.Lock()
        self._frames = 0
        self._frames_at_last_pet = 0
        self.pets = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def enabled(self) -> bool:
        """True when systemd expects pets."""
        return self.interval is not None

    @property
    def frames(self) -> int:
        """Frames seen so far."""
        return self._frames

    def frame_seen(self) -> None:
        """Record that a frame arrived (cheap: call it for every frame)."""
        with self._lock:
            self._frames += 1

    def maybe_pet(self) -> bool:
        """Pet the watchdog if a frame arrived since the last pet; True if a pet was sent."""
        if not self.enabled:
            return False
        with self._lock:
            if self._frames == self._frames_at_last_pet:
                return False
            self._frames_at_last_pet = self._frames
        if self._send is not None:
            self._send("WATCHDOG=1")
        else:
            notify("WATCHDOG=1", env=self._env)
        self.pets += 1
        return True

    def start(self) -> "Watchdog":
        """Pet from a daemon thread every :attr:`interval` seconds (while frames flow)."""
        if not self.enabled or self._thread is not None:
            return self
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="cardtable-watchdog", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.maybe_pet()

    def stop(self) -> None:
        """Stop the background thread (no more pets)."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def __enter__(self) -> "Watchdog":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
