"""``cardtable run``: the whole product in one process.

Frame source -> recognition -> referee -> SQLite store -> LEDs and buzzer ->
dashboard, wired from one configuration file plus command-line overrides::

    cardtable run --config /etc/cardtable/config.toml
    cardtable run --source usb:0 --port 8000          # a laptop with a webcam

:class:`Table` owns every part and their order of start and stop; ``main``
adds the systemd protocol: ``READY=1`` once the dashboard listens and the
camera loop runs, ``WATCHDOG=1`` only while frames keep flowing (a hung
camera gets the service restarted), and on SIGTERM a clean stop in which
nothing is lost (every event was committed before it was acknowledged).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from typing import Any, Callable

from cardtable import notify
from cardtable.config import Config, ConfigError, ensure_pin, load_config
from cardtable.session import Session
from cardtable.store import Store

log = logging.getLogger("cardtable")

# With no [gpio] table (a laptop) the LEDs are simulated on gpiozero's mock
# pins, one per seat for the largest table the games allow, and a buzzer.
SIMULATED_GPIO = {"seat_leds": [5, 6, 13, 19, 26, 21, 20, 16], "buzzer": 18,
                  "buttons": {"pass": 23, "undo": 24, "confirm": 25}, "pin_factory": "mock"}


def uncalibrated_geometry(size: tuple[int, int], seats: int = 4) -> Any:
    """Until the table is calibrated, the whole picture is taken as the table
    (a 900 x 600 mm one): good enough to try things, and the dashboard says so."""
    from vision.table_geometry import TableGeometry

    w, h = size
    return TableGeometry([[0, 0], [w, 0], [w, h], [0, h]], (900.0, 600.0), seats, image_size=size)


class Paced:
    """A recorded source (video file, image folder) played in real time, or
    ``speed`` times faster, as a camera would deliver it.  Frames keep their
    own synthetic times, so the pipeline's stillness rules see the footage's
    time whatever the speed.  ``on_frame(i)`` runs before frame ``i`` is read
    (the demo's scripted button presses hang on it)."""

    live = False

    def __init__(self, source: Any, speed: float = 1.0, on_frame: Callable[[int], None] | None = None):
        if speed <= 0:
            raise ValueError("speed must be above 0")
        self.source = source
        self.name = source.name
        self.speed = speed
        self.on_frame = on_frame
        self._start = 0.0
        self._i = 0

    def open(self) -> None:
        self.source.open()
        self._start = time.monotonic()
        self._i = 0

    def read(self) -> Any:
        if self.on_frame is not None:
            self.on_frame(self._i)
        self._i += 1
        frame = self.source.read()
        delay = self._start + frame.t / self.speed - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        return frame

    def close(self) -> None:
        self.source.close()


class Table:
    """Every part of a running table, started and stopped in the right order.

    ``source`` is a frame source spec (``picamera``, ``usb:0``, ``video:PATH``,
    ``images:GLOB``) or an already built source; ``reader`` the card reader
    (default: the shipped recogniser).  ``serve=False`` leaves the dashboard
    out (tests, the demo's ``--once``).
    """

    def __init__(self, config: Config, *, source: Any = None, reader: Any = None, serve: bool = True,
                 frame_seen: Callable[[Any], None] | None = None, session: Session | None = None,
                 signals: Any = None, image_size: tuple[int, int] = (1280, 720), idle_s: float = 0.02):
        from vision.card_reader import RecogniserReader
        from vision.live import LiveTable, observer_config
        from vision.sources import CameraFeed, make_source
        from vision.table_geometry import TableGeometry

        self.config = config
        os.makedirs(os.path.dirname(os.path.abspath(config.db)), exist_ok=True)
        self.store = session.store if session is not None else Store(config.db)
        self.session = session or Session.resume(self.store)
        self.signals = signals if signals is not None else self._make_signals(config)
        self._unlisten = self.session.listen(self._signal)
        self.signals.sync(self.session.state())
        if config.geometry.get("corners_px"):
            geometry = TableGeometry.from_config(config.geometry)
            self.calibrated = True
        else:
            geometry = uncalibrated_geometry(image_size)
            self.calibrated = False
        if source is None or isinstance(source, str):
            source = make_source(source or config.source, size=image_size)
            if not source.live:
                source = Paced(source)          # recorded footage plays like a camera: in real time
        # A calibrated table expects the calibration's frame size; an uncalibrated one takes
        # whatever size the camera gives (a webcam may not do 1280x720) and fits itself to it.
        self.feed = CameraFeed(source, size=geometry.image_size if self.calibrated else None)
        hook = frame_seen if self.calibrated else self._fit_uncalibrated(frame_seen)
        # A calibrated table says how the camera looks at it: a slanted view is read turned to
        # straight down (vision/rectify.py).  The uncalibrated stand-in's map says nothing of the
        # view (the whole picture stretched onto a 900 x 600 table), so it turns nothing.
        if reader is None:
            reader = RecogniserReader(table=geometry if self.calibrated else None)
        self.live = LiveTable(self.feed, geometry, reader, self.session,
                              config=observer_config(config.recognition), frame_seen=hook, idle_s=idle_s)
        self.signals.on_pass = self._button_pass
        self.signals.on_undo = lambda: self.live.submit({"event": "undo"}, timeout=0)
        self.signals.on_confirm = self._button_confirm
        self.app = None
        self.server = None
        if serve:
            from web.app import create_app
            from web.cli import secret_key_for
            from web.server import Server

            pin, generated = ensure_pin(config)
            if generated:
                print(f"table PIN (generated, kept beside the database): {pin}", flush=True)
            self.app = create_app(self.session, pin=pin, camera=self, signals=self.signals,
                                  secret_key=secret_key_for(config.db))
            self.server = Server(self.app, config.host, config.port)

    def _fit_uncalibrated(self, then: Callable[[Any], None] | None) -> Callable[[Any], None]:
        def seen(frame: Any) -> None:
            h, w = frame.image.shape[:2]
            geometry = self.live.observer.geometry
            if tuple(geometry.image_size) != (w, h):
                self.live.observer.geometry = uncalibrated_geometry((w, h), geometry.seats)
            if then is not None:
                then(frame)
        return seen

    # -- parts ------------------------------------------------------------------------
    @staticmethod
    def _make_signals(config: Config) -> Any:
        from hardware import Signals

        return Signals.from_config(config.gpio or SIMULATED_GPIO)

    def _signal(self, verdict: dict, state: dict) -> None:
        """Session listener: LEDs and buzzer follow every verdict; never breaks the table."""
        try:
            if verdict.get("event") == "new_game" and verdict.get("ok"):
                self.signals.check_players(state.get("players") or [])
            self.signals.update(verdict, state)
        except Exception as exc:          # e.g. more players than seat LEDs: say so, keep refereeing
            log.warning("signals: %s", exc)

    def _button_pass(self) -> None:
        from vision.live import TO_ACT

        # one pass button for the table: the seat to act once any settling play is in
        self.live.submit({"event": "pass", "seat": TO_ACT}, timeout=0)

    def _button_confirm(self) -> None:
        """The confirm button says what a silent player means at that moment: in twenty-two's
        exchange round "I keep my hand" (an exchange of 0 for the next seat to exchange); in
        big-two "last card" (an announce for the seat holding one card).  Otherwise nothing."""
        state = self.session.state()
        if state.get("game") == "twenty-two" and state.get("phase") == "exchange":
            waiting = (state.get("exchange") or {}).get("waiting") or []
            if waiting:
                self.live.submit({"event": "exchange", "seat": waiting[0], "count": 0}, timeout=0)
        elif state.get("game") == "big-two":
            for seat in state.get("last_card") or []:
                self.live.submit({"event": "announce", "seat": seat}, timeout=0)
        else:
            log.info("confirm pressed: nothing to confirm in %s", state.get("game") or "no game")

    # -- the camera protocol the dashboard reads ----------------------------------------
    def status(self) -> dict:
        status = dict(self.live.status())
        if not self.calibrated:
            status["calibration"] = "not calibrated: the whole picture is taken as the table"
        return status

    def latest_jpeg(self) -> bytes | None:
        return self.live.latest_jpeg()

    # -- running ---------------------------------------------------------------------------
    def start(self) -> None:
        if self.server is not None:
            self.server.start()
        self._camera_thread = self.live.start()

    def wait_camera(self, stop: threading.Event, poll: float = 0.2) -> None:
        """Block until the camera loop ends (a file source played to its end) or ``stop`` is set."""
        while self._camera_thread.is_alive() and not stop.is_set():
            self._camera_thread.join(poll)

    @property
    def url(self) -> str | None:
        return self.server.url if self.server is not None else None

    def stop(self) -> None:
        """Stop the camera loop, the dashboard, the signals, then the store (each once)."""
        self.live.stop()             # also closes the camera
        if self.server is not None:
            self.server.close()
            self.app.extensions["cardtable"].close()
        self._unlisten()
        self.signals.close()
        self.store.close()


def build_parser(prog: str = "cardtable run") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Camera, recognition, referee, storage, LEDs and "
                                "dashboard in one process.")
    p.add_argument("--config", help="TOML configuration file (see systemd/config.example.toml)")
    p.add_argument("--source", help="picamera | usb:N | video:PATH | images:GLOB (overrides [camera] source)")
    p.add_argument("--db", help="SQLite file for the game logs (overrides [table] db)")
    p.add_argument("--host", help="address to serve the dashboard on (overrides [table] host)")
    p.add_argument("--port", type=int, help="port of the dashboard (overrides [table] port)")
    p.add_argument("--pin", help="table PIN for changes on the dashboard (overrides [table] pin)")
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        config = load_config(args.config).override(source=args.source, db=args.db, host=args.host,
                                                   port=args.port, pin=args.pin)
    except ConfigError as exc:
        print(f"cardtable run: {exc}", file=sys.stderr)
        return 2
    watchdog = notify.Watchdog()
    try:
        table = Table(config, frame_seen=lambda frame: watchdog.frame_seen())
    except Exception as exc:        # a bad pin map, an unreadable database, a port in use: a message, exit 2
        print(f"cardtable run: cannot start: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    table.start()
    watchdog.start()
    notify.ready(f"dashboard on {table.url}/")
    print(f"cardtable: dashboard on {table.url}/ (camera: {config.source or 'picamera'}; database {config.db})",
          flush=True)
    try:
        while not stop.wait(1.0):
            notify.status(_status_line(table))
    finally:
        notify.stopping("stopping")
        watchdog.stop()
        table.stop()
    return 0


def _status_line(table: Table) -> str:
    state = table.session.state()
    camera = table.live.status().get("camera", {})
    return f"camera {camera.get('state', '?')}; {state.get('game') or 'no game'} hand {state.get('hand_number')}"
