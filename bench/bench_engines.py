"""Time the recogniser's three networks with each inference engine, on one core.

    .venv/bin/python bench/bench_engines.py
    .venv/bin/python bench/bench_engines.py --repeat 200 --model DIR

For each network of the model (``vision/models`` by default) and each engine
installed (onnxruntime, OpenCV's dnn: ``vision/inference.py``), prints the
mean time of one call at the batch sizes the recogniser uses: the detector
on one 640x368 image, the refiner and the classifier on 1 to 35 crops.  Then
the classifier on the batch sizes of one real image in turn (7, 12, 5, 20,
8, 1, 16, 35 crops): ``cv2.dnn`` rebuilds its buffers whenever the batch size
changes, which costs it more than the sum of the steady figures; onnxruntime
does not.  Random inputs: the time does not depend on what the crops show.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision.index_geometry import PATCH_H, PATCH_W, REFINE_PATCH_H, REFINE_PATCH_W  # noqa: E402
from vision.inference import ENGINES, OnnxNet, onnxruntime_available  # noqa: E402
from vision.recogniser import MODEL_DIR  # noqa: E402

#: The classifier's batch sizes on one image of the benchmark, one call after another.
IMAGE_BATCHES = (7, 12, 5, 20, 8, 1, 16, 35)


def mean_ms(call, x: np.ndarray, repeat: int) -> float:
    call(x)  # the first call sets the network up
    t = time.perf_counter()
    for _ in range(repeat):
        call(x)
    return 1000 * (time.perf_counter() - t) / repeat


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=MODEL_DIR)
    ap.add_argument("--repeat", type=int, default=50, help="calls per figure (default 50)")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    meta = json.loads((args.model / "model.json").read_text())
    engines = [e for e in ENGINES if e != "onnxruntime" or onnxruntime_available()]
    rng = np.random.default_rng(0)
    inputs = {
        "detector": [(1, 3, 368, 640)],
        "refiner": [(n, 3, REFINE_PATCH_H, REFINE_PATCH_W) for n in (1, 7, 12)],
        "classifier": [(n, 3, PATCH_H, PATCH_W) for n in (1, 7, 35)],
    }
    print(f"model {args.model}; engines: {', '.join(engines)}; one thread; mean of {args.repeat} calls\n")
    print(f"{'network':12s} {'input':>18s}" + "".join(f"{e:>14s}" for e in engines))
    nets = {}
    for name, shapes in inputs.items():
        if name not in meta or not meta[name]:
            continue
        # (An ensemble's classifiers are alike: the first one stands for them all.)
        file = meta[name] if isinstance(meta[name], str) else meta[name][0]
        nets[name] = {e: OnnxNet(args.model / file, e, threads=1) for e in engines}
        for shape in shapes:
            x = rng.random(shape, dtype=np.float32)
            row = "".join(f"{mean_ms(nets[name][e], x, args.repeat):11.2f} ms" for e in engines)
            print(f"{name:12s} {'x'.join(map(str, shape)):>18s}{row}")

    print(f"\nclassifier on one image's batches in turn ({', '.join(map(str, IMAGE_BATCHES))} crops):")
    batches = [rng.random((n, 3, PATCH_H, PATCH_W), dtype=np.float32) for n in IMAGE_BATCHES]
    for e in engines:
        net = nets["classifier"][e]
        steady = sum(mean_ms(net, x, max(1, args.repeat // 5)) for x in batches)
        for x in batches:
            net(x)
        rounds = max(1, args.repeat // 5)
        t = time.perf_counter()
        for _ in range(rounds):
            for x in batches:
                net(x)
        in_turn = 1000 * (time.perf_counter() - t) / rounds
        print(f"  {e:12s} {in_turn:6.1f} ms in turn; {steady:6.1f} ms if each batch size were run alone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
