"""Frame sources: choosing one, files, a fake Pi camera, and the feed's status, retries and frame checks."""

from __future__ import annotations

import sys
import types

import cv2
import numpy as np
import pytest

from vision.sources import (CameraFeed, Frame, ImageFolderSource, ListSource, OpenCVSource, PiCameraSource,
                            SourceError, check_image, make_source)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def frames(n, w=64, h=48, value=80):
    return [np.full((h, w, 3), value + i, np.uint8) for i in range(n)]


def test_make_source_by_name():
    assert isinstance(make_source("picamera"), PiCameraSource)
    assert isinstance(make_source(None), PiCameraSource)
    usb = make_source("usb:1")
    assert isinstance(usb, OpenCVSource) and usb.live and usb.target == 1
    assert make_source("usb:/dev/video2").target == "/dev/video2"
    video = make_source("video:/tmp/x.avi")
    assert not video.live and video.target == "/tmp/x.avi"
    images = make_source("images:/tmp/shots/*.png")
    assert isinstance(images, ImageFolderSource) and images.fps == 10.0
    assert make_source("images:/tmp/a@b/*.png@4").fps == 4.0
    for bad in ("webcam", "usb:", "video:", "picamera:2"):
        with pytest.raises(ValueError, match="unknown camera source"):
            make_source(bad)


def test_image_folder_in_order_with_a_corrupt_file_skipped(tmp_path):
    for i, image in enumerate(frames(3)):
        cv2.imwrite(str(tmp_path / f"f{i:02d}.png"), image)
    (tmp_path / "f01b.png").write_bytes(b"not a png")
    feed = CameraFeed(make_source(f"images:{tmp_path}/*.png"), clock=FakeClock())
    got = []
    while not feed.ended:
        frame = feed.next_frame()
        if frame is not None:
            got.append((frame.index, int(frame.image[0, 0, 0]), frame.t))
        elif feed.status()["state"] == "bad_frame":
            assert "no image" in feed.status()["message"]
    assert got == [(0, 80, 0.0), (1, 81, 0.1), (3, 82, 0.3)]
    status = feed.status()
    assert status["state"] == "ended" and status["skipped"] == 1 and status["frames"] == 3
    assert feed.next_frame() is None


def test_video_file_plays_then_ends(tmp_path):
    path = str(tmp_path / "clip.avi")
    writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    for image in frames(6):
        writer.write(image)
    writer.release()
    feed = CameraFeed(make_source(f"video:{path}"))
    got = []
    for _ in range(20):
        frame = feed.next_frame()
        if frame is not None:
            got.append(frame)
    assert len(got) == 6 and got[0].image.shape == (48, 64, 3)
    assert [round(f.t, 3) for f in got] == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    assert feed.status()["state"] == "ended"


def test_missing_video_file_is_missing_not_a_crash(tmp_path):
    clock = FakeClock()
    feed = CameraFeed(make_source(f"video:{tmp_path}/none.mp4"), clock=clock)
    assert feed.next_frame() is None
    status = feed.status()
    assert status["state"] == "missing" and "no such video file" in status["message"]


def test_usb_camera_absent_is_missing_and_retried():
    clock = FakeClock()
    feed = CameraFeed(make_source("usb:57"), clock=clock)
    assert feed.next_frame() is None
    assert feed.status()["state"] == "missing"
    assert feed.status()["retry_in"] == 1.0


class FlakyCamera:
    """A live camera that is absent for the first ``absent`` opens, then gives
    frames, and dies (reads raise) between frames ``die_at`` and ``die_at + dead_for``."""

    live = True
    name = "fake:0"

    def __init__(self, absent=0, die_at=None, dead_for=0):
        self.absent, self.die_at, self.dead_for = absent, die_at, dead_for
        self.opens = self.reads = self.closes = 0
        self.n = 0

    def open(self):
        self.opens += 1
        if self.opens <= self.absent:
            raise SourceError("no camera connected")

    def read(self):
        self.reads += 1
        if self.die_at is not None and self.die_at <= self.reads < self.die_at + self.dead_for:
            raise OSError("device disconnected")
        self.n += 1
        return Frame(np.full((48, 64, 3), 90, np.uint8), float(self.n), self.n)

    def close(self):
        self.closes += 1


def test_missing_camera_retried_with_back_off_then_ok():
    clock = FakeClock()
    cam = FlakyCamera(absent=3)
    feed = CameraFeed(cam, clock=clock, backoff=(1.0, 4.0))
    seen_retry = []
    for _ in range(3):                       # three failed opens: waits of 1, 2, 4 s
        assert feed.next_frame() is None
        s = feed.status()
        assert s["state"] == "missing" and "no camera connected" in s["message"]
        seen_retry.append(s["retry_in"])
        assert feed.next_frame() is None     # no new try before the wait is over
        clock.now += s["retry_in"]
    assert seen_retry == [1.0, 2.0, 4.0]
    assert cam.opens == 3
    frame = feed.next_frame()
    assert frame is not None and feed.status()["state"] == "ok" and cam.opens == 4


def test_lost_camera_reported_closed_and_reopened():
    clock = FakeClock()
    cam = FlakyCamera(die_at=3, dead_for=5)
    feed = CameraFeed(cam, clock=clock, lost_after=3, backoff=(2.0, 30.0))
    assert feed.next_frame() is not None and feed.next_frame() is not None
    assert feed.next_frame() is None and feed.status()["state"] == "bad_frame"
    assert feed.next_frame() is None
    assert feed.next_frame() is None                          # third failure in a row: lost
    s = feed.status()
    assert s["state"] == "lost" and "device disconnected" in s["message"] and s["retry_in"] == 2.0
    assert cam.closes == 1
    assert feed.next_frame() is None and cam.opens == 1     # waiting out the back-off
    clock.now += 2.0
    # reopened; two more dead reads, then frames again
    results = [feed.next_frame() for _ in range(3)]
    assert cam.opens == 2 and results[-1] is not None
    assert feed.status()["state"] == "ok" and feed.reopened == 1


@pytest.mark.parametrize("image, why", [
    (None, "no image"),
    ("junk", "a str, not an image"),
    (np.zeros((48, 64, 3), np.float32), "float32 pixels"),
    (np.zeros((48, 64), np.uint8), "shape (48, 64)"),
    (np.zeros((48, 64, 4), np.uint8), "shape (48, 64, 4)"),
    (np.zeros((480, 640, 3), np.uint8), "640x480 frame; the table is calibrated for 64x48"),
])
def test_corrupt_frames_are_skipped_with_a_status(image, why):
    good = np.full((48, 64, 3), 50, np.uint8)
    feed = CameraFeed(ListSource([good, image, good]), size=(64, 48))
    assert feed.next_frame() is not None
    assert feed.next_frame() is None
    status = feed.status()
    assert status["state"] == "bad_frame" and why in status["message"] and status["skipped"] == 1
    assert feed.next_frame() is not None and feed.status()["state"] == "ok"


def test_first_good_frame_fixes_the_size():
    a, b = np.zeros((48, 64, 3), np.uint8), np.zeros((40, 64, 3), np.uint8)
    feed = CameraFeed(ListSource([a, b]))
    assert feed.next_frame() is not None and feed.size == (64, 48)
    assert feed.next_frame() is None and "64x40" in feed.status()["message"]
    assert check_image(a, (64, 48)) is None


def test_a_source_that_returns_no_frame_object():
    class Weird(ListSource):
        def read(self):
            return "frame"
    feed = CameraFeed(Weird([]))
    assert feed.next_frame() is None and feed.status()["state"] == "ended"


class FakePicamera2:
    instances: list = []
    fail = False

    def __init__(self):
        if FakePicamera2.fail:
            raise RuntimeError("No camera number 0 found")
        self.calls = []
        FakePicamera2.instances.append(self)

    def create_video_configuration(self, main):
        self.calls.append(("config", main))
        return {"main": main}

    def configure(self, config):
        self.calls.append(("configure", config))

    def set_controls(self, controls):
        self.calls.append(("controls", controls))

    def start(self):
        self.calls.append(("start",))

    def capture_array(self, stream):
        self.calls.append(("capture", stream))
        return np.full((720, 1280, 3), 7, np.uint8)

    def stop(self):
        self.calls.append(("stop",))

    def close(self):
        self.calls.append(("close",))


def test_pi_camera_through_a_fake_picamera2(monkeypatch):
    FakePicamera2.instances, FakePicamera2.fail = [], False
    monkeypatch.setitem(sys.modules, "picamera2", types.SimpleNamespace(Picamera2=FakePicamera2))
    src = PiCameraSource(size=(1280, 720), controls={"AeEnable": False}, clock=lambda: 5.0)
    feed = CameraFeed(src)
    frame = feed.next_frame()
    assert frame is not None and frame.image.shape == (720, 1280, 3) and frame.t == 5.0
    feed.close()
    cam = FakePicamera2.instances[0]
    assert cam.calls[0] == ("config", {"size": (1280, 720), "format": "RGB888"})
    assert [c[0] for c in cam.calls] == ["config", "configure", "controls", "start", "capture", "stop", "close"]


def test_pi_camera_absent_or_library_missing_is_a_status(monkeypatch):
    FakePicamera2.fail = True
    monkeypatch.setitem(sys.modules, "picamera2", types.SimpleNamespace(Picamera2=FakePicamera2))
    feed = CameraFeed(PiCameraSource(), clock=FakeClock())
    assert feed.next_frame() is None
    assert feed.status()["state"] == "missing" and "No camera number 0" in feed.status()["message"]
    FakePicamera2.fail = False
    monkeypatch.setitem(sys.modules, "picamera2", None)      # import picamera2 -> ImportError
    feed = CameraFeed(PiCameraSource(), clock=FakeClock())
    assert feed.next_frame() is None
    assert "python3-picamera2" in feed.status()["message"]


