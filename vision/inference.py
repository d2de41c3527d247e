"""Run one ONNX network on the CPU: through onnxruntime where it is installed, else OpenCV's dnn.

    from vision.inference import OnnxNet
    net = OnnxNet("vision/models/index_classifier.onnx", threads=1)
    logits = net(blob)            # blob: float32 N x C x H x W; returns the network's first output
    net.engine                    # "onnxruntime" or "opencv"

Why two engines.  The recogniser's networks are small and run many times
per image with a batch that changes from call to call (one crop per index,
and the number of indices varies).  onnxruntime runs them in a little over
half the time ``cv2.dnn`` takes on the same core, and ``cv2.dnn`` also
rebuilds its buffers whenever the batch size changes (about a millisecond
each time; ``bench/bench_engines.py`` measures both).  onnxruntime has
wheels for 64-bit x86 and ARM (Raspberry Pi OS 64-bit); where there is none
(32-bit Raspberry Pi OS), OpenCV, which the project needs anyway, runs the
same files.  The two agree to about 1e-5 on every output of a float network,
and on the committed 8-bit networks (vision.training.quantise) compute the
same integer sums; only where an activation is requantised to 8 bits may one
round it to the neighbouring step (for a classifier, none measured before
session 32; on a Zen 5 CPU, 0.03 on logits spread over 9 for random input,
and the same readings of real crops to 1e-4; for the 8-bit detector of
session 63, indices up to a few tenths of a pixel apart now and then).
OpenCV computes the 8-bit networks more slowly than float ones (the
classifiers 1.4 to 2.1 times, the detector about twice, measured).
"""

from __future__ import annotations

import threading
from pathlib import Path

import cv2
import numpy as np

#: The engines, in the order ``engine="auto"`` tries them.
ENGINES = ("onnxruntime", "opencv")


class EngineError(RuntimeError):
    """The engine asked for is not installed, or cannot load the network."""


def onnxruntime_available() -> bool:
    """Whether onnxruntime can be imported here."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def resolve_engine(engine: str) -> str:
    """The engine that ``engine`` names here: ``"auto"`` becomes onnxruntime when it
    can be imported, else ``"opencv"``.  Raises ValueError for an unknown name, and
    EngineError when onnxruntime is asked for and not installed."""
    if engine not in ("auto", *ENGINES):
        raise ValueError(f"unknown inference engine {engine!r}: use auto, {' or '.join(ENGINES)}")
    if engine == "auto":
        return "onnxruntime" if onnxruntime_available() else "opencv"
    if engine == "onnxruntime" and not onnxruntime_available():
        raise EngineError("the onnxruntime engine was asked for, but onnxruntime is not installed here "
                          "(pip install 'cardtable[fast]'); use engine='auto' or 'opencv'")
    return engine


class OnnxNet:
    """One ONNX network with one input, ready to run on batches.

    ``engine`` is ``"onnxruntime"``, ``"opencv"`` or ``"auto"`` (onnxruntime
    when it can be imported, else OpenCV).  ``threads`` is how many CPU
    threads onnxruntime may use for one call (``None``: one per core); the
    OpenCV engine follows ``cv2.setNumThreads`` instead, which is global.
    Safe to call from several threads (OpenCV's calls take turns).
    """

    def __init__(self, path: Path | str, engine: str = "auto", threads: int | None = None):
        self.path = Path(path)
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise ValueError(f"threads must be a whole number from 1, or None for every core; got {threads!r}")
        self.engine = engine = resolve_engine(engine)
        if engine == "onnxruntime":
            self._run = self._onnxruntime(threads)
        else:
            self._run = self._opencv()

    def __call__(self, blob: np.ndarray) -> np.ndarray:
        """The network's (first) output for ``blob`` (float32, N x C x H x W)."""
        return self._run(np.ascontiguousarray(blob, dtype=np.float32))

    def _onnxruntime(self, threads: int | None):
        import onnxruntime as ort  # resolve_engine has made sure it is there

        options = ort.SessionOptions()
        options.log_severity_level = 3  # errors only: its warnings about unused initialisers are noise here
        if threads is not None:
            options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # Threads that spin between calls would take the CPU from the camera
        # and the web server, which run beside the recogniser on the Pi.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types for bad files
            raise EngineError(f"onnxruntime cannot load {self.path}: {exc}") from exc
        name = session.get_inputs()[0].name
        return lambda blob: session.run(None, {name: blob})[0]

    def _opencv(self):
        try:
            net = cv2.dnn.readNetFromONNX(str(self.path))
        except cv2.error as exc:
            raise EngineError(f"OpenCV cannot load {self.path}: {exc}") from exc

        lock = threading.Lock()  # setInput and forward are two calls on one shared state

        def run(blob: np.ndarray) -> np.ndarray:
            with lock:
                net.setInput(blob)
                return net.forward()
        return run
