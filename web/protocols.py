"""What the dashboard expects from the camera pipeline and the signals.

Both are optional: ``cardtable serve`` runs with neither, ``cardtable run``
passes the live pipeline and the GPIO signals.  Only these methods are used,
so any object that has them will do (tests pass small fakes).

Camera
    ``status() -> dict``
        JSON-ready; every key is optional.  The camera page shows all of
        them; these it also understands:

        * ``state``: a word such as ``"running"``, ``"starting"``, ``"error"``;
        * ``message``: a sentence for people (``"no frames for 5 s"``);
        * ``fps``: float; ``frame_size``: ``[width, height]`` of the JPEG;
        * ``zones``: ``[{"seat": 0, "polygon": [[x, y], ...]}]`` seat zones;
        * ``detections``: ``[{"card": "QS", "box": [x, y, w, h], "seat": 1,
          "confidence": 0.93}]`` (``"polygon"`` instead of ``"box"`` also works);

        coordinates are pixels of the latest JPEG.  The page draws zones and
        detections over the frame, so the pipeline need not draw them.
    ``latest_jpeg() -> bytes | None``
        the latest frame as JPEG bytes, or None before the first frame.

Signals (e.g. :class:`hardware.Signals`)
    ``describe() -> dict``
        the LEDs, buzzer and buttons as JSON (shown as simulated LEDs).
    ``when_changed`` (optional attribute)
        if present and unset, the dashboard sets it to push a fresh
        ``describe()`` to every phone when an LED changes.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Camera(Protocol):
    def status(self) -> dict[str, Any]: ...

    def latest_jpeg(self) -> bytes | None: ...


@runtime_checkable
class SignalsView(Protocol):
    def describe(self) -> dict[str, Any]: ...


def camera_status(camera: Any) -> dict[str, Any]:
    """The camera's status for the page and the API; never raises."""
    if camera is None:
        return {"available": False, "state": "none", "message": "no camera"}
    try:
        status = dict(camera.status())
    except Exception as exc:    # a failing pipeline must not take the dashboard with it
        return {"available": True, "state": "error", "message": f"the camera did not answer: {exc}"}
    status.setdefault("state", "running")
    status["available"] = True
    return status
