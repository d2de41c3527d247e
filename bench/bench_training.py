"""Time a training step of each of the recogniser's networks, in float32 and in bfloat16.

    .venv/bin/python bench/bench_training.py               # 100 steps of each, 2 threads
    .venv/bin/python bench/bench_training.py --steps 300 --threads 2

Renders a few training scenes (registry training designs, as ``full``
renders them, into a temporary folder), cuts the refiner's and the
classifier's crops from them, and runs the training functions of
``vision.training.train`` themselves for ``--steps`` steps of each network
with the ``full`` config's sizes and batches: data preparation, augmentation
and the optimiser included, as in a real run.  Prints the time of a step in
each precision, the speed-up, and what that makes of the ``full`` config's
steps (the step counts of its 8000 scenes: 6000 detector steps, and the
refiner's and classifier's epochs over the crops counted in its training
log).  bfloat16 is timed only where the CPU computes it natively
(``vision.training.train.fast_math``); elsewhere the command trains in
float32 anyway.  The 2-hour budget of the one training command is about
these figures (docs/vision.md, "Training").

It also prints each network's work in a step (GFLOP, as torch's
``FlopCounterMode`` counts it) and the rate its float32 step runs at, beside
the rate of a plain float32 matrix product on as many threads: how much a
faster kernel could still give before the step must do less work
(docs/vision-experiments.md, session 58).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# The side-by-side workers are spawned processes that import this module by its name.
sys.path.insert(1, str(Path(__file__).resolve().parent))

from vision.synth.decks import HELD_OUT, available_decks  # noqa: E402

#: Crops cut from the ``full`` config's 8000 scenes (its training log, seed 1): the
#: refiner's (with the detector's detections) and the classifier's.
FULL_REFINER_CROPS = 88694
FULL_CLASSIFIER_CROPS = 139565


def full_steps(cfg) -> dict[str, int]:
    """Training steps of each network in config ``cfg`` on the ``full`` scenes (95% of the crops train)."""
    from vision.training.train import epoch_steps

    return {"detector": cfg.det_steps,
            "refiner": cfg.refine_epochs * epoch_steps(FULL_REFINER_CROPS, cfg.cls_batch),
            "classifier": cfg.cls_epochs * epoch_steps(FULL_CLASSIFIER_CROPS, cfg.cls_batch)}


def _repeat_to(n: int, *arrays: np.ndarray) -> list[np.ndarray]:
    """The arrays' rows repeated to ``n`` rows (the time does not depend on which crops)."""
    take = np.arange(n) % len(arrays[0])
    return [a[take] for a in arrays]


def crops_for_steps(steps: int, batch: int) -> int:
    """Crops that make one epoch of ``steps`` batches (``train.epoch_steps``: the crops
    held for validation are read once at its end, not trained on)."""
    from vision.training.train import epoch_steps

    n = steps * batch
    while epoch_steps(n, batch) < steps:
        n += batch
    return n


def step_gflop(cfg) -> dict[str, float]:
    """The work of one training step of each network at ``cfg``'s sizes and batches, forward
    and backward, in GFLOP (a multiply and an add counted as two), as torch's
    ``FlopCounterMode`` counts it: the convolutions and matrix products, which are nearly all
    of it (normalisations, activations, pooling and the optimiser are not counted).

    >>> from vision.training.train import CONFIGS
    >>> round(step_gflop(CONFIGS["full"])["classifier"], 1)
    19.1
    """
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from vision.index_geometry import PATCH_H, PATCH_W, REFINE_PATCH_H, REFINE_PATCH_W
    from vision.training.models import IndexClassifier, IndexDetector, IndexRefiner

    nets = {"detector": (IndexDetector(cfg.det_width, cfg.det_channels), (cfg.det_batch, 3, cfg.det_crop, cfg.det_crop)),
            "refiner": (IndexRefiner(cfg.refine_width), (cfg.cls_batch, 3, REFINE_PATCH_H, REFINE_PATCH_W)),
            "classifier": (IndexClassifier(cfg.cls_width, standardised=cfg.standardise), (cfg.cls_batch, 3, PATCH_H, PATCH_W))}
    work = {}
    for name, (net, shape) in nets.items():
        with FlopCounterMode(display=False) as counter:
            net(torch.rand(shape)).float().square().mean().backward()
        work[name] = counter.get_total_flops() / 1e9
    return work


def matmul_gflops(threads: int, n: int = 1024, repeats: int = 20) -> float:
    """GFLOP/s of a float32 product of two ``n`` x ``n`` matrices on ``threads`` torch threads
    (the best of three timings of ``repeats`` products): about the most this CPU does in
    float32 through torch, for scale beside the networks' steps."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        a, b = torch.rand(n, n), torch.rand(n, n)
        a @ b
        best = math.inf
        for _ in range(3):
            t = time.perf_counter()
            for _ in range(repeats):
                a @ b
            best = min(best, time.perf_counter() - t)
    finally:
        torch.set_num_threads(before)
    return 2.0 * n ** 3 * repeats / best / 1e9


def step_seconds(steps: int, bf16: bool, scenes, Xr, Yr, Xc, Rc, Sc) -> dict[str, float]:
    """Seconds per training step of each network, run by the training code itself."""
    from vision.training import train as T

    cfg = dataclasses.replace(T.CONFIGS["full"], bf16=bf16, refine_epochs=1, cls_epochs=1)
    # A first short run of each sets up its kernels (the first steps are slow), untimed.
    warm = dataclasses.replace(cfg, det_steps=2)
    T.train_detector(scenes, warm, 1)
    T.train_refiner(*_repeat_to(3 * cfg.cls_batch, Xr, Yr), warm, 1)
    T.train_classifier(*_repeat_to(3 * cfg.cls_batch, Xc, Rc, Sc), warm, 1)
    cfg = dataclasses.replace(cfg, det_steps=steps)
    n = crops_for_steps(steps, cfg.cls_batch)
    timed = {}
    t = time.perf_counter()
    T.train_detector(scenes, cfg, 1)
    timed["detector"] = (time.perf_counter() - t) / steps
    t = time.perf_counter()
    T.train_refiner(*_repeat_to(n, Xr, Yr), cfg, 1)
    timed["refiner"] = (time.perf_counter() - t) / steps
    t = time.perf_counter()
    T.train_classifier(*_repeat_to(n, Xc, Rc, Sc), cfg, 1)
    timed["classifier"] = (time.perf_counter() - t) / steps
    return timed


_START = None


def _set_start(barrier) -> None:
    global _START
    _START = barrier


def _side_by_side_step(job) -> float:
    """Worker: seconds per step of ``train_classifier`` with ``threads`` threads, timed
    after a warm-up and once every worker is ready (the workers run at the same time)."""
    import torch

    from vision.training import train as T

    crops, bf16, steps, threads = job
    torch.set_num_threads(threads)
    cv2.setNumThreads(1)
    T._log = lambda msg: None
    cfg = dataclasses.replace(T.CONFIGS["full"], bf16=bf16, cls_epochs=1)
    with np.load(crops) as z:
        X, R, S = z["X"], z["R"], z["S"]
    T.train_classifier(*_repeat_to(3 * cfg.cls_batch, X, R, S), cfg, 1)
    _START.wait()
    t = time.perf_counter()
    T.train_classifier(X, R, S, cfg, 1)
    return (time.perf_counter() - t) / steps


def side_by_side_seconds(jobs: int, threads: int, steps: int, bf16: bool, Xc, Rc, Sc) -> list[float]:
    """Seconds per step of each of ``jobs`` classifiers trained at once, ``threads // jobs``
    torch threads each, as ``train.train_classifiers`` trains the ``full`` config's."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from vision.training import train as T

    n = crops_for_steps(steps, T.CONFIGS["full"].cls_batch)
    # The workers' functions as the spawned processes will find them: this module
    # imported by its name (run as a script, or loaded from its path, it is another object).
    import bench_training as here

    ctx = get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        crops = Path(tmp) / "crops.npz"
        X, R, S = _repeat_to(n, Xc, Rc, Sc)
        np.savez(crops, X=X, R=R, S=S)
        with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=here._set_start,
                                 initargs=(ctx.Barrier(jobs),)) as pool:
            return list(pool.map(here._side_by_side_step, [(str(crops), bf16, steps, max(1, threads // jobs))] * jobs))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=100, help="training steps timed per network and precision")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (the training command's default)")
    ap.add_argument("--scenes", type=int, default=24, help="training scenes rendered for the crops")
    ap.add_argument("--jobs", type=int, default=0,
                    help="classifiers timed side by side, as the training command trains them "
                         "(default 0: as many as `full` has; 1: not timed)")
    args = ap.parse_args(argv)
    if args.steps < 1 or args.scenes < 1 or args.threads < 1 or args.jobs < 0:
        ap.error("--steps, --scenes and --threads must be at least 1, --jobs at least 0")

    import torch

    from vision.training import train as T
    from vision.training.data import classifier_crops, generate_scenes, load_scenes, refiner_samples

    torch.set_num_threads(args.threads)
    cv2.setNumThreads(1)
    decks = [d for d in available_decks() if d not in HELD_OUT]
    if not decks:
        print("no training deck designs installed: run scripts/fetch-art.sh", file=sys.stderr)
        return 2
    cfg = T.CONFIGS["full"]
    with tempfile.TemporaryDirectory() as tmp:
        generate_scenes(Path(tmp), args.scenes, 1, decks, workers=1, log=lambda msg: None)
        scenes = load_scenes(Path(tmp))
    Xr, Yr = refiner_samples(scenes, [[] for _ in scenes.images], 4, jitter_copies=cfg.refine_copies)
    Xc, Rc, Sc = classifier_crops(scenes, 2, jitter_copies=cfg.jitter_copies)

    precisions = [False] + ([True] if T.fast_math(dataclasses.replace(cfg, bf16=True)) else [])
    print(f"torch {torch.__version__}, {args.threads} threads, {args.steps} steps of each network "
          f"({args.scenes} scenes rendered; batches as in `full`)")
    if len(precisions) == 1:
        print("this CPU does not compute bfloat16 natively: training runs in float32 here (timed alone)")
    log, T._log = T._log, lambda msg: None   # the training's progress lines would drown the figures
    try:
        timed = {bf16: step_seconds(args.steps, bf16, scenes, Xr, Yr, Xc, Rc, Sc) for bf16 in precisions}
    finally:
        T._log = log
    steps = full_steps(cfg)
    print(f"\n{'network':12}{'float32':>12}{'bfloat16':>12}{'speed-up':>10}   in `full` ({'steps':>6}): "
          f"{'float32':>9}{'bfloat16':>10}")
    total = {bf16: 0.0 for bf16 in precisions}
    for name in ("detector", "refiner", "classifier"):
        f32 = timed[False][name]
        b16 = timed[True][name] if True in timed else None
        for bf16 in precisions:   # (``full`` trains ``cls_members`` classifiers, each as long)
            total[bf16] += timed[bf16][name] * steps[name] / 60 * (cfg.cls_members if name == "classifier" else 1)
        print(f"{name:12}{1000 * f32:9.1f} ms" + (f"{1000 * b16:9.1f} ms{f32 / b16:9.2f}x" if b16 else f"{'-':>12}{'-':>10}")
              + f"   {'':>10}{steps[name]:>6}:  {f32 * steps[name] / 60:6.1f} min"
              + (f"{b16 * steps[name] / 60:7.1f} min" if b16 else ""))
    print(f"{'in all':12}{f'(the classifier {cfg.cls_members} times)':>34}   {'':>10}{'':>6}:  {total[False]:6.1f} min"
          + (f"{total[True]:7.1f} min" if True in total else ""))
    # How near the float32 steps run to what this CPU multiplies at: where they are near it,
    # no faster kernel makes float32 training much shorter; only less work does.
    work, peak = step_gflop(cfg), matmul_gflops(args.threads)
    print(f"\n{'network':12}{'work a step':>14}{'float32 rate':>15}   (a float32 1024 x 1024 matrix product, "
          f"{args.threads} thread{'s' * (args.threads > 1)}: {peak:.1f} GFLOP/s)")
    for name in ("detector", "refiner", "classifier"):
        rate = work[name] / timed[False][name]
        print(f"{name:12}{work[name]:8.2f} GFLOP{rate:9.1f} GFLOP/s   {100 * rate / peak:3.0f}% of the matrix product's")
    jobs = min(args.jobs or cfg.cls_members, cfg.cls_members)
    if jobs > 1:
        # What the command does by default (train.train_classifiers): all classifiers at once.
        bf16 = precisions[-1]
        each = side_by_side_seconds(jobs, args.threads, args.steps, bf16, Xc, Rc, Sc)
        per = max(1, args.threads // jobs)
        rounds = math.ceil(cfg.cls_members / jobs)   # classifiers trained in turns of ``jobs``
        alone = timed[bf16]["classifier"]
        together = timed[bf16]["detector"] * steps["detector"] + timed[bf16]["refiner"] * steps["refiner"] \
            + rounds * max(each) * steps["classifier"]
        print(f"\n{jobs} classifiers side by side, {per} thread{'s' * (per > 1)} each "
              f"({'bfloat16' if bf16 else 'float32'}): a step of each took "
              f"{', '.join(f'{1000 * e:.1f}' for e in each)} ms, {1000 * max(each) / jobs:.1f} ms a step in all "
              f"against {1000 * alone:.1f} one at a time ({alone * jobs / max(each):.2f} times as many steps)")
        print(f"{'in all':12}{'(classifiers side by side, as the command trains them)':>56}:  {together / 60:6.1f} min")
    print("(the rest of the command, rendering designs and scenes and cutting crops, is not timed here)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
