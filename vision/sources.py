"""Frame sources: the Pi camera, a USB webcam, a video file or a folder of images.

Every source gives BGR ``uint8`` frames (OpenCV order) behind one small
interface, :class:`FrameSource`, and is chosen by one string, from the
configuration (``[camera] source``) or ``--source``:

=================  =====================================================
``picamera``       the Pi camera through picamera2 (imported only here;
                   on the Pi it comes from apt, see docs/live-table.md)
``usb:0``          a USB webcam by number (or ``usb:/dev/video2``)
``video:PATH``     a video file (played at its own frame rate, in
                   *synthetic* time: frame ``i`` is at ``i / fps``)
``images:GLOB``    a folder of images in sorted order (synthetic time,
                   ``fps`` 10 unless given as ``images:GLOB@FPS``)
=================  =====================================================

A raw source may raise and may return rubbish.  :class:`CameraFeed` wraps one
so that the program never crashes because of the camera:

* a camera that cannot be opened is ``missing``; one that stops giving frames
  is ``lost``; both are retried with exponential back-off (1 s, 2 s, 4 s ...
  at most 30 s) while :meth:`CameraFeed.next_frame` keeps returning ``None``;
* a file source that has played to its end is ``ended`` (not retried);
* a corrupt frame (``None``, wrong dtype, wrong shape, another size than the
  first good frame) is skipped and counted, and the status says why.

:meth:`CameraFeed.status` is what the dashboard shows::

    {"state": "ok" | "starting" | "missing" | "lost" | "ended" | "bad_frame",
     "message": "...", "source": "usb:0", "frames": 123, "skipped": 0,
     "retry_in": null | seconds}

>>> feed = CameraFeed(ListSource([None, "junk"]), clock=lambda: 0.0)
>>> feed.next_frame() is None, feed.status()["state"]
(True, 'bad_frame')
"""

from __future__ import annotations

import glob as globlib
import itertools
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Protocol

import numpy as np

log = logging.getLogger(__name__)


class SourceError(RuntimeError):
    """The source cannot give frames now (not there, unplugged, failed)."""


class SourceEnded(Exception):
    """A file source has no more frames."""


@dataclass(frozen=True)
class Frame:
    """One frame: ``image`` HxWx3 uint8 BGR, ``t`` seconds (monotonic, or
    synthetic for files so that replays are deterministic), ``index`` 0, 1, ..."""

    image: np.ndarray
    t: float
    index: int


class FrameSource(Protocol):
    """What every backend implements.  ``read`` returns the next frame, raises
    :class:`SourceEnded` at the end of a file and :class:`SourceError` (or any
    exception) when the device fails; ``open`` raises :class:`SourceError` when
    there is no device."""

    name: str
    live: bool          # a camera (retried when lost) rather than a file (ends)

    def open(self) -> None: ...
    def read(self) -> Frame: ...
    def close(self) -> None: ...


# ---------------------------------------------------------------------------
# Backends


class PiCameraSource:
    """The Raspberry Pi camera through picamera2 (Camera Module 2/3, HQ).

    picamera2 is imported in :meth:`open` only: the module imports on any
    machine, and the Pi-only library is needed only when this source is used.
    ``RGB888`` in picamera2 is B, G, R in memory: OpenCV order already.
    ``controls`` are passed to ``set_controls`` (e.g. locked exposure/AWB).
    """

    live = True

    def __init__(self, size: tuple[int, int] = (1280, 720), controls: dict | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.name = "picamera"
        self.size = tuple(size)
        self.controls = dict(controls or {})
        self._clock = clock
        self._cam: Any = None
        self._n = itertools.count()

    def open(self) -> None:
        try:
            from picamera2 import Picamera2  # noqa: PLC0415 - Pi only, from apt
        except ImportError as exc:
            raise SourceError("picamera2 is not installed: on the Pi run "
                              "'sudo apt install python3-picamera2' and use a venv made with "
                              f"--system-site-packages ({exc})") from None
        try:
            cam = Picamera2()
            cam.configure(cam.create_video_configuration(main={"size": self.size, "format": "RGB888"}))
            if self.controls:
                cam.set_controls(self.controls)
            cam.start()
        except Exception as exc:  # no camera connected, camera busy, ...
            raise SourceError(f"the Pi camera cannot be opened: {exc}") from None
        self._cam = cam

    def read(self) -> Frame:
        if self._cam is None:
            raise SourceError("the Pi camera is not open")
        image = self._cam.capture_array("main")
        return Frame(image, self._clock(), next(self._n))

    def close(self) -> None:
        cam, self._cam = self._cam, None
        if cam is not None:
            for step in (cam.stop, cam.close):
                try:
                    step()
                except Exception:  # closing a dead camera must not raise
                    pass


class OpenCVSource:
    """A USB webcam (``usb:N``) or a video file (``video:PATH``) through
    ``cv2.VideoCapture``.  File frames carry synthetic times ``i / fps``."""

    def __init__(self, target: int | str, live: bool, name: str | None = None,
                 size: tuple[int, int] | None = None, clock: Callable[[], float] = time.monotonic):
        self.target = target
        self.live = live
        self.name = name or (f"usb:{target}" if live else f"video:{target}")
        self.size = size
        self._clock = clock
        self._cap: Any = None
        self._n = itertools.count()
        self._fps = 30.0

    def open(self) -> None:
        import cv2

        if not self.live and not os.path.exists(str(self.target)):
            raise SourceError(f"no such video file: {self.target}")
        cap = cv2.VideoCapture(self.target)
        if not cap.isOpened():
            cap.release()
            raise SourceError(f"{self.name}: no camera or video there (cv2.VideoCapture could not open it)")
        if self.live and self.size:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.size[0])
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])
        fps = cap.get(cv2.CAP_PROP_FPS)
        self._fps = float(fps) if fps and 1 <= fps <= 240 else 30.0
        self._cap = cap
        self._n = itertools.count()

    def read(self) -> Frame:
        if self._cap is None:
            raise SourceError(f"{self.name} is not open")
        ok, image = self._cap.read()
        if not ok:
            if self.live:
                raise SourceError(f"{self.name} stopped giving frames")
            raise SourceEnded(self.name)
        i = next(self._n)
        return Frame(image, self._clock() if self.live else i / self._fps, i)

    def close(self) -> None:
        cap, self._cap = self._cap, None
        if cap is not None:
            cap.release()


class ImageFolderSource:
    """Images matching a glob, in sorted name order, at ``fps`` synthetic frames per second.
    An unreadable image gives ``None`` (skipped by :class:`CameraFeed` as corrupt)."""

    live = False

    def __init__(self, pattern: str, fps: float = 10.0):
        self.pattern = pattern
        self.fps = float(fps)
        self.name = f"images:{pattern}"
        self._paths: list[str] = []
        self._i = 0

    def open(self) -> None:
        self._paths = sorted(globlib.glob(os.path.expanduser(self.pattern)))
        if not self._paths:
            raise SourceError(f"no images match {self.pattern!r}")
        self._i = 0

    def read(self) -> Frame:
        import cv2

        if self._i >= len(self._paths):
            raise SourceEnded(self.name)
        i, self._i = self._i, self._i + 1
        return Frame(cv2.imread(self._paths[i], cv2.IMREAD_COLOR), i / self.fps, i)

    def close(self) -> None:
        pass


class ListSource:
    """Frames from memory (an iterable of images, or of :class:`Frame`), for
    tests, the benchmark and the demo.  Images get synthetic times ``i / fps``."""

    live = False

    def __init__(self, frames: Iterable[Any], fps: float = 10.0, name: str = "frames"):
        self._frames = frames
        self.fps = float(fps)
        self.name = name
        self._it: Any = None
        self._i = 0

    def open(self) -> None:
        self._it = iter(self._frames)
        self._i = 0

    def read(self) -> Frame:
        if self._it is None:
            raise SourceError("not open")
        try:
            item = next(self._it)
        except StopIteration:
            raise SourceEnded(self.name) from None
        i, self._i = self._i, self._i + 1
        if isinstance(item, Frame):
            return item
        return Frame(item, i / self.fps, i)  # type: ignore[arg-type]

    def close(self) -> None:
        self._it = None


def make_source(spec: str | None, size: tuple[int, int] = (1280, 720)) -> FrameSource:
    """The backend for a source string (see the module docstring).

    >>> make_source("usb:0").name, make_source("video:a.mp4").live, make_source("images:x/*.png@5").fps
    ('usb:0', False, 5.0)
    >>> make_source("webcam")
    Traceback (most recent call last):
    ...
    ValueError: unknown camera source 'webcam': use picamera, usb:N, video:PATH or images:GLOB
    """
    spec = (spec or "picamera").strip()
    kind, _, arg = spec.partition(":")
    if kind == "picamera" and not arg:
        return PiCameraSource(size=size)
    if kind == "usb" and arg:
        return OpenCVSource(int(arg) if arg.isdigit() else arg, live=True, name=spec, size=size)
    if kind == "video" and arg:
        return OpenCVSource(arg, live=False, name=spec)
    if kind == "images" and arg:
        pattern, at, fps = arg.rpartition("@")
        if at and _is_number(fps):
            return ImageFolderSource(pattern, float(fps))
        return ImageFolderSource(arg)
    raise ValueError(f"unknown camera source {spec!r}: use picamera, usb:N, video:PATH or images:GLOB")


def _is_number(text: str) -> bool:
    try:
        return float(text) > 0
    except ValueError:
        return False


# ---------------------------------------------------------------------------
# The feed: status, retries, frame checks


def check_image(image: Any, size: tuple[int, int] | None) -> str | None:
    """Why ``image`` is no usable BGR frame (or of another size than ``size`` = (w, h)); None if fine."""
    if image is None:
        return "the camera gave no image"
    if not isinstance(image, np.ndarray):
        return f"the camera gave a {type(image).__name__}, not an image"
    if image.dtype != np.uint8:
        return f"the camera gave {image.dtype} pixels, not 8-bit"
    if image.ndim != 3 or image.shape[2] != 3 or image.shape[0] < 16 or image.shape[1] < 16:
        return f"the camera gave an image of shape {image.shape}, not height x width x 3"
    if size is not None and (image.shape[1], image.shape[0]) != tuple(size):
        return (f"the camera gave a {image.shape[1]}x{image.shape[0]} frame; the table is calibrated "
                f"for {size[0]}x{size[1]}")
    return None


class CameraFeed:
    """A source that never raises: status, back-off retries, corrupt frames skipped.

    ``next_frame()`` returns a checked :class:`Frame` or ``None`` (nothing now:
    see :meth:`status`).  ``size`` (w, h) is the frame size expected; if not
    given, the first good frame fixes it.  ``clock`` is injectable so that
    back-off can be tested without sleeping.  ``lost_after`` consecutive failed
    reads of a live camera make it ``lost`` (closed, reopened after back-off).
    """

    def __init__(self, source: FrameSource, size: tuple[int, int] | None = None,
                 clock: Callable[[], float] = time.monotonic, backoff: tuple[float, float] = (1.0, 30.0),
                 lost_after: int = 5):
        self.source = source
        self.size = tuple(size) if size else None
        self._clock = clock
        self._backoff = backoff
        self._lost_after = lost_after
        self._lock = threading.Lock()
        self._open = False
        self._state = "starting"
        self._message = f"opening {source.name}"
        self._retry_at: float | None = None
        self._delay = backoff[0]
        self._failures = 0
        self.frames = 0
        self.skipped = 0
        self.reopened = 0

    # -- public ------------------------------------------------------------------
    def next_frame(self) -> Frame | None:
        """The next good frame, or None (no camera now, a skipped frame, or the end)."""
        if self._state == "ended":
            return None
        if not self._open and not self._try_open():
            return None
        try:
            frame = self.source.read()
        except SourceEnded:
            self._close()
            self._set("ended", f"{self.source.name} has played to its end")
            return None
        except Exception as exc:  # a camera failing in any way: never crash
            return self._read_failed(exc)
        if not isinstance(frame, Frame):
            return self._read_failed(SourceError(f"the source gave a {type(frame).__name__}, not a frame"))
        self._failures = 0
        problem = check_image(frame.image, self.size)
        if problem is not None:
            self.skipped += 1
            self._set("bad_frame", f"skipped frame {frame.index}: {problem}")
            return None
        if self.size is None:
            self.size = (frame.image.shape[1], frame.image.shape[0])
        self.frames += 1
        if self._state != "ok":
            self._set("ok", f"{self.source.name}: {self.size[0]}x{self.size[1]}")
        self._delay = self._backoff[0]
        return frame

    def status(self) -> dict:
        with self._lock:
            retry_in = None
            if self._retry_at is not None and self._state in ("missing", "lost"):
                retry_in = round(max(0.0, self._retry_at - self._clock()), 1)
            return {"state": self._state, "message": self._message, "source": self.source.name,
                    "frames": self.frames, "skipped": self.skipped, "retry_in": retry_in}

    @property
    def ended(self) -> bool:
        return self._state == "ended"

    def close(self) -> None:
        self._close()

    # -- inside ------------------------------------------------------------------
    def _set(self, state: str, message: str) -> None:
        with self._lock:
            if (state, message) != (self._state, self._message) and state != "ok":
                log.warning("camera %s: %s", state, message)
            self._state, self._message = state, message

    def _try_open(self) -> bool:
        now = self._clock()
        if self._retry_at is not None and now < self._retry_at:
            return False
        try:
            self.source.open()
        except Exception as exc:
            self._schedule_retry(now)
            was_lost = self._state == "lost"
            self._set("lost" if was_lost else "missing",
                      f"{'lost' if was_lost else 'no camera'}: {exc}; retrying in {self._delay_used:.0f} s")
            return False
        self._open = True
        self._retry_at = None
        self._failures = 0
        if self._state in ("lost", "missing"):
            self.reopened += 1
        return True

    def _schedule_retry(self, now: float) -> None:
        self._delay_used = self._delay
        self._retry_at = now + self._delay
        self._delay = min(self._delay * 2, self._backoff[1])

    def _read_failed(self, exc: Exception) -> None:
        self._failures += 1
        if not self.source.live:
            # a file that cannot be read further: treat as its end
            self._close()
            self._set("ended", f"{self.source.name} cannot be read further: {exc}")
            return None
        if self._failures >= self._lost_after:
            self._close()
            self._schedule_retry(self._clock())
            self._set("lost", f"camera lost: {exc}; retrying in {self._delay_used:.0f} s")
        else:
            self._set("bad_frame", f"a frame could not be read: {exc}")
        return None

    def _close(self) -> None:
        if self._open:
            self._open = False
            try:
                self.source.close()
            except Exception:
                pass

    _delay_used = 0.0
