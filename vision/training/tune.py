"""Tune a trained model's index classifiers to read indices seen from a leaning camera.

    python -m vision.training.tune                     # the committed model, in place
    python -m vision.training.tune --model DIR --out DIR2 --epochs 3 --share 0.4 --least 0.5

A camera that is not straight overhead sees each index squeezed along its line of
sight: by the cosine of the angle it looks at the table with, 0.7 in the middle of a
photograph leaning 45 degrees, less on the far side.  The classifiers were trained on
tables seen from above, and read a squeezed club as a spade, surely (docs/vision.md,
"A level camera of unknown lean").  Training the whole recipe on leaning scenes cost
the overhead scenes, which the product is mounted for (session 49 in
docs/vision-experiments.md); this instead trains each of a model's classifiers a few
epochs more, from its own weights, on a new draw of the same recipe's scenes with
:data:`SHARE` of the index crops squeezed (:func:`squeeze_indices`), the classifiers'
other augmentations as in training.  The detector and the refiner are kept as they are.

A model stored in 8 bits is read back from its 8-bit weights
(``train.load_onnx_weights``) and quantised again once tuned, as it was (the same
calibration scenes).  ``model.json`` keeps its training record (``config_values`` is
still the recipe it was trained with) and gains a ``tuned`` entry per tuning.

The training command tunes its model itself where its config says (``tune_scenes``: 4000
in ``full``, within its time budget); this command tunes a model already trained.

Needs torch (the ``test`` or ``train`` extra); a few minutes on 2 cores (session 54:
about 4 minutes of training, 3 classifiers side by side, after 5 minutes of scenes).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
from dataclasses import fields
from pathlib import Path
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from vision.index_geometry import NOT_INDEX, PATCH_H, PATCH_W
from vision.recogniser import MODEL_DIR
from vision.synth.decks import DATA_DIR, available_decks, build_face_cache
from vision.synth.procedural import build_generated_decks
from vision.training import train as T
from vision.training.data import generate_scenes, load_scenes
from vision.training.models import IndexClassifier

#: The recipe tuned and measured in session 54 (docs/vision-experiments.md): member k of
#: the ensemble is tuned on SCENES scenes of seed SEED + k, EPOCHS epochs at most LR,
#: SHARE of its index crops squeezed by LEAST to 1.
SCENES = T.CONFIGS["full"].tune_scenes   # (what the training command tunes ``full`` with)
EPOCHS = 3
LR = 4e-4
SHARE = 0.4
LEAST = 0.5
SEED = 601


def squeeze_indices(x: torch.Tensor, g: torch.Generator, least: float) -> torch.Tensor:
    """The crops ``x`` (N x 3 x PATCH_H x PATCH_W) as a leaning camera would show their
    indices: each squeezed by a factor drawn from ``least`` to 1 along a direction drawn
    at random, then scaled and turned so that its up vector (the crop's vertical, through
    its centre) is as long and as upright as before, as the refiner cuts an index (it
    finds its up vector, not its width).  So a squeeze along the index narrows it, one
    across it widens it, and one at a slant slants it.

    >>> g = torch.Generator().manual_seed(0)
    >>> x = torch.rand(2, 3, PATCH_H, PATCH_W)
    >>> bool(torch.allclose(squeeze_indices(x, g, 1.0), x, atol=1e-5))   # no squeeze: as it was
    True
    """
    n = x.shape[0]
    s = least + (1 - least) * torch.rand(n, generator=g)
    a = torch.rand(n, generator=g) * math.pi
    c, si, k = torch.cos(a), torch.sin(a), 1 - s
    # A = I - (1 - s) u u^T with u = (cos a, sin a), in pixels (x right, y down).
    squeeze = torch.stack([torch.stack([1 - k * c * c, -k * c * si], -1),
                           torch.stack([-k * c * si, 1 - k * si * si], -1)], -2)
    up = squeeze[:, :, 1]                       # where the vertical goes
    turn = torch.atan2(up[:, 0], up[:, 1])
    ct, st = torch.cos(turn), torch.sin(turn)
    back = torch.stack([torch.stack([ct, -st], -1), torch.stack([st, ct], -1)], -2)
    m = back @ squeeze / up.norm(dim=1).view(-1, 1, 1)   # the vertical kept; the rest follows
    # affine_grid maps each output pixel to where it is read from, in coordinates of -1..1
    # along each side: the inverse map, in the crop's own units.
    half = torch.tensor([PATCH_W / 2, PATCH_H / 2])
    theta = torch.zeros(n, 2, 3)
    theta[:, :, :2] = torch.linalg.inv(m) * half.view(1, 1, 2) / half.view(1, 2, 1)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)


def _frozen_statistics(net: torch.nn.Module) -> None:
    """Batch normalisation in eval mode: a network read back from ONNX has its statistics
    folded into its convolutions (train.load_onnx_weights), and a batch's own would undo that."""
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.eval()


def tune_classifier(net: IndexClassifier, X: np.ndarray, R: np.ndarray, S: np.ndarray, cfg: T.Config,
                    epochs: int, lr: float, share: float, least: float, seed: int,
                    name: str = "classifier", log: Callable[[str], None] = T._log) -> IndexClassifier:
    """Train ``net`` further on crops X with ranks R and suits S (as train.train_classifier
    takes them), ``share`` of its index crops squeezed (:func:`squeeze_indices`), the
    learning rate rising to ``lr`` and falling over ``epochs`` (one cycle)."""
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    precision = T._train_mode(net, cfg)
    _frozen_statistics(net)
    prep = T._standardise if cfg.standardise else (lambda t: t)
    perm = np.random.default_rng(seed).permutation(len(X))
    n_val = T.validation_size(len(X))
    val, tr = perm[:n_val], perm[n_val:]
    Xt = torch.from_numpy(X).permute(0, 3, 1, 2).contiguous()
    Rt, St = torch.from_numpy(R), torch.from_numpy(S)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, pct_start=0.1,
                                                total_steps=max(1, epochs * T.epoch_steps(len(X), cfg.cls_batch)))
    for epoch in range(epochs):
        order = tr[torch.randperm(len(tr), generator=g).numpy()]
        total, started = 0.0, time.time()
        for b in range(0, len(order), cfg.cls_batch):
            idx = torch.from_numpy(order[b:b + cfg.cls_batch])
            x = Xt[idx].float() / 255.0
            pick = (torch.rand(len(idx), generator=g) < share) & (Rt[idx] != NOT_INDEX)
            if pick.any():
                x[pick] = squeeze_indices(x[pick], g, least)
            x = prep(T._augment(x, g, cfg.reshape_glyphs))
            with precision():
                out = net(T._channels_last(x)).float()
            loss = T.rank_loss(out[:, :NOT_INDEX + 1], Rt[idx]) + T.suit_loss(out[:, NOT_INDEX + 1:], St[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        net.eval()
        ok = T.held_out_read(net, Xt, Rt, St, val, prep, precision)
        net.train()
        _frozen_statistics(net)
        log(f"{name} tuned {epoch + 1}/{epochs}: loss {total / max(1, len(tr)):.3f}, held-out crops read "
            f"{ok:.4f} (n={len(val)}), {time.time() - started:.0f} s")
    return T._trained(net)


def _tune_member(job: tuple) -> dict:
    """Worker process of :func:`tune_model`: one classifier tuned from its file, its crops saved."""
    path, crops, cfg, epochs, lr, share, least, seed, threads, name = job
    torch.set_num_threads(threads)
    import cv2
    cv2.setNumThreads(1)
    net = IndexClassifier(cfg.cls_width, standardised=cfg.standardise)
    T.load_onnx_weights(net, Path(path))
    with np.load(crops) as z:
        X, R, S = z["X"], z["R"], z["S"]
    return tune_classifier(net, X, R, S, cfg, epochs, lr, share, least, seed, name).state_dict()


def _tuples(value):
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def config_of(meta: dict) -> T.Config:
    """The training config a model's ``model.json`` records (``config_values``)."""
    known = {f.name for f in fields(T.Config)}
    values = meta.get("config_values")
    if not isinstance(values, dict):
        raise ValueError("its model.json records no config_values (not written by the training command)")
    return T.Config(**{k: _tuples(v) for k, v in values.items() if k in known})


class TuneError(RuntimeError):
    """The model cannot be tuned (what and why in the message)."""


def tune_model(model_dir: Path, out: Path, scenes: int = SCENES, epochs: int = EPOCHS, lr: float = LR,
               share: float = SHARE, least: float = LEAST, seed: int = SEED, workers: int = 2, threads: int = 2,
               calibration_scenes: int | None = None, data_dir: Path | None = None,
               log: Callable[[str], None] = T._log) -> dict:
    """Tune the classifiers of the model in ``model_dir`` and write the tuned model to ``out``
    (which may be ``model_dir``: it is replaced only once all is written); returns the
    ``tuned`` record added to its model.json.  ``calibration_scenes``: for a model in 8
    bits, the scenes its ranges are measured on again (default: as many as before)."""
    model_dir, out = Path(model_dir), Path(out)
    meta_path = model_dir / "model.json"
    try:
        meta = json.loads(meta_path.read_text())
        if not isinstance(meta, dict):
            raise ValueError("not a model's record (a JSON object)")
        cfg = config_of(meta)
        files = meta.get("classifier")
        files = files if isinstance(files, list) else [files]
        if not files or not all(isinstance(name, str) and name for name in files):
            raise ValueError("its model.json names no classifier")
        quantised = meta.get("quantised")
        if quantised and not (isinstance(quantised, dict) and isinstance(quantised.get("calibration"), dict)
                              and {"scenes", "seed"} <= set(quantised["calibration"])):
            raise ValueError("its model.json says it is in 8 bits but not how it was calibrated")
    except (OSError, ValueError, TypeError) as e:
        raise TuneError(f"{meta_path}: {e}") from None
    if out.exists() and not out.is_dir():
        raise TuneError(f"{out}: not a folder")
    for name in files:   # every file loads before any scene is rendered
        T.load_onnx_weights(IndexClassifier(cfg.cls_width, standardised=cfg.standardise), model_dir / name)
    started = time.time()
    build_face_cache(log=log)
    trained_on = set(meta.get("trained_on", []))
    real = [d for d in available_decks() if d in trained_on]
    if not real:
        raise TuneError("none of the model's training designs is installed: run scripts/fetch-art.sh")
    generated = build_generated_decks(meta.get("generated_designs", 0), log=log, workers=workers)
    decks = T.scene_designs(real, generated, cfg.real_share)
    data_dir = data_dir or DATA_DIR / "tune"
    crops, seeds = [], [seed + k for k in range(len(files))]
    try:
        for member_seed in seeds:
            scene_dir = data_dir / f"{meta.get('config', 'model')}-{member_seed}-{scenes}"
            log(f"rendering {scenes} scenes into {scene_dir}")
            # The recipe's scenes (its leaning and dim shares too); the crops its classifiers
            # were cut from, less detector_crops (off in ``full``), which would need the detector run.
            generate_scenes(scene_dir, scenes, member_seed, decks, workers=workers, log=log,
                            views=cfg.lean_share, dim=cfg.dim_share)
            X, R, S = T.scene_crops(load_scenes(scene_dir), cfg, member_seed)
            crops.append(scene_dir / "tune-crops.npz")
            np.savez(crops[-1], X=X, R=R, S=S)
            log(f"{len(X)} crops")
            del X, R, S
        jobs = [(str(model_dir / name), str(path), cfg, epochs, lr, share, least, member_seed,
                 max(1, threads // len(files)), f"classifier {k + 1}/{len(files)}")
                for k, (name, path, member_seed) in enumerate(zip(files, crops, seeds))]
        if len(jobs) == 1:
            states = [_tune_member(jobs[0][:8] + (threads,) + jobs[0][9:])]
        else:
            with T._worker_pool(len(jobs)) as pool:
                states = list(pool.map(_tune_member, jobs))
    finally:   # (about 350 MB each; cut again in a minute or two)
        for path in crops:
            path.unlink(missing_ok=True)
    record = {"scenes": scenes, "epochs": epochs, "lr": lr, "squeeze_share": share, "squeeze_least": least,
              "seeds": seeds, "torch": torch.__version__,
              "precision": "bfloat16" if T.fast_math(cfg) else "float32"}
    # (The record of "quantised" stays: quantise_model, below, stores the tuned classifiers
    # in 8 bits again and keeps what the record says of the detector and the refiner.)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for f in model_dir.iterdir():
            if f.suffix == ".onnx" and f.name not in files:
                shutil.copyfile(f, tmp / f.name)   # the detector and the refiner, as they are
        for name, state in zip(files, states):
            net = IndexClassifier(cfg.cls_width, standardised=cfg.standardise)
            net.load_state_dict(state)
            T.export_onnx(net, torch.zeros(1, 3, PATCH_H, PATCH_W), tmp / name, dynamic_hw=False,
                          half_weights=cfg.cls_half_weights)
        (tmp / "model.json").write_text(json.dumps(meta, indent=1) + "\n")
        if quantised:
            from vision.training.quantise import QuantiseError, quantise_model
            calibration = quantised["calibration"]
            try:
                quantise_model(tmp, calibration_scenes or calibration["scenes"], seed=calibration["seed"],
                               log=log, kinds=("classifier",))
            except QuantiseError as e:
                raise TuneError(f"storing the tuned classifiers in 8 bits: {e}") from None
        record["seconds"] = round(time.time() - started)   # (scenes, training and quantising)
        meta = json.loads((tmp / "model.json").read_text())
        meta["tuned"] = [*meta.get("tuned", []), record]
        (tmp / "model.json").write_text(json.dumps(meta, indent=1) + "\n")
        # Into place: the networks first, each under a passing name and then renamed, and the
        # record last, so that an interrupted copy leaves the old record naming what it did.
        out.mkdir(parents=True, exist_ok=True)
        for f in sorted(tmp.iterdir(), key=lambda f: f.name == "model.json"):
            passing = out / f".{f.name}.tuning"
            shutil.copyfile(f, passing)
            os.replace(passing, out / f.name)
    log(f"tuned {len(files)} classifier{'s' * (len(files) > 1)} of {model_dir} into {out} "
        f"in {time.time() - started:.0f} s")
    return record


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision.training.tune", description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=MODEL_DIR, help="the trained model (default: the committed one)")
    ap.add_argument("--out", type=Path, default=None, help="where the tuned model goes (default: in place)")
    ap.add_argument("--scenes", type=int, default=SCENES, help="scenes rendered for each classifier")
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    ap.add_argument("--lr", type=float, default=LR, help="the learning rate's peak")
    ap.add_argument("--share", type=float, default=SHARE, help="share of the index crops squeezed")
    ap.add_argument("--least", type=float, default=LEAST, help="the strongest squeeze (a factor, 0 to 1)")
    ap.add_argument("--seed", type=int, default=SEED, help="the first classifier's scenes (the next, seed + 1, ...)")
    ap.add_argument("--data", type=Path, default=None,
                    help="where the scenes are rendered (default data/tune; reused when asked again)")
    ap.add_argument("--workers", type=int, default=2, help="processes rendering scenes")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--calibration-scenes", type=int, default=None,
                    help="for a model in 8 bits: scenes to measure its ranges on again (default: as before)")
    args = ap.parse_args(argv)
    if args.scenes < 1 or args.epochs < 1 or args.workers < 1 or args.threads < 1:
        ap.error("--scenes, --epochs, --workers and --threads must be at least 1")
    if not (0 <= args.share <= 1) or not (0 < args.least <= 1) or not (math.isfinite(args.lr) and args.lr >= 0):
        ap.error("--share must be from 0 to 1, --least over 0 and at most 1, --lr a number of at least 0")
    if args.calibration_scenes is not None and args.calibration_scenes < 1:
        ap.error("--calibration-scenes must be at least 1")
    torch.set_num_threads(args.threads)
    try:
        tune_model(args.model, args.out or args.model, args.scenes, args.epochs, args.lr, args.share, args.least,
                   args.seed, args.workers, args.threads, args.calibration_scenes, args.data)
    except (TuneError, OSError, ValueError) as e:
        print(f"tune: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
