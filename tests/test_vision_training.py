"""Training on a tiny configuration: the whole pipeline runs, exports ONNX that
cv2.dnn loads, and the target maps and crops it learns from are right."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from vision.index_geometry import DET_CHANNELS, DET_STRIDE, NOT_INDEX, PATCH_H, PATCH_W, RANKS, SUITS
from vision.synth.decks import HELD_OUT, available_decks
from vision.synth.scene import CardPlacement, SceneSpec, render_scene

from vision.training.data import (RANK_HIDDEN, RECORD_FIELDS, SUIT_HIDDEN, SUIT_HIDDEN_BLACK, SUIT_HIDDEN_RED,
                                  SceneSet, _index_records, classifier_crops, covered_crops, detector_targets)


@pytest.fixture(scope="module")
def art():
    if "letele" not in available_decks():
        pytest.fail("card art not rendered: run scripts/fetch-art.sh")


def _scene(art_unused=None):
    spec = SceneSpec(320, 240, [CardPlacement("9D", (160, 120), angle=30, height=150, deck="letele")],
                     table="felt")
    img, ann = render_scene(spec, np.random.default_rng(0))
    return img, _index_records(ann)


def test_detector_targets_peak_on_each_index(art):
    img, recs = _scene()
    heat, hw, reg, rw = detector_targets(recs, 240, 320)
    assert heat.shape == (240 // DET_STRIDE, 320 // DET_STRIDE)
    assert reg.shape[0] == len(DET_CHANNELS) - 1
    assert int((heat == 1.0).sum()) == 2  # two readable indices, one positive cell each
    for r in recs:
        j, i = int(round(r["cx"] / DET_STRIDE - 0.5)), int(round(r["cy"] / DET_STRIDE - 0.5))
        assert heat[i, j] == 1.0
        cos, sin = reg[0, i, j], reg[1, i, j]
        assert np.degrees(np.arctan2(sin, cos)) == pytest.approx(r["angle"], abs=0.5)
        assert rw[i, j] > 0.9
    # Cropping and scaling move the targets with the image.
    heat2, *_ = detector_targets(recs, 120, 160, x0=40, y0=20, scale=0.5)
    assert int((heat2 == 1.0).sum()) == 2


def test_classifier_crops_have_positives_and_refusals(art):
    img, recs = _scene()
    X, R, S = classifier_crops(SceneSet(img[None], [recs]), seed=0, jitter_copies=2, negatives_per_image=6)
    assert X.shape[1:] == (PATCH_H, PATCH_W, 3) and X.dtype == np.uint8
    pos = R != NOT_INDEX
    assert pos.sum() == 4  # 2 indices x 2 jittered copies
    assert set(R[pos]) == {RANKS.index("9")} and set(S[pos]) == {SUITS.index("D")}
    assert (R == NOT_INDEX).sum() >= 3 and set(S[~pos]) == {-1}


def test_covered_crops_add_copies_of_covered_indices_only(art):
    img, recs = _scene()
    # The same index as it would lie under other cards: whole, partly covered, covered
    # more (still legible), hidden, and partly covered but too small to read.
    shown = [1.0, 0.9, 0.75, 0.5]
    scene = [dict(recs[0], visible=v) for v in shown] + [dict(recs[0], visible=0.9, h=10.0)]
    X, R, S = covered_crops(SceneSet(img[None], [scene]), seed=0, partly_covered_copies=3,
                            more_covered_copies=2)
    assert X.shape == (5, PATCH_H, PATCH_W, 3) and X.dtype == np.uint8
    assert set(R) == {RANKS.index("9")} and set(S) == {SUITS.index("D")}
    # Without copies of the more covered ones, only the partly covered index's three.
    assert len(covered_crops(SceneSet(img[None], [scene]), seed=0, partly_covered_copies=3)[0]) == 3
    # "Covered more" may start lower (the config's more_covered_from): the index half shown too.
    assert len(covered_crops(SceneSet(img[None], [scene]), seed=0, partly_covered_copies=3,
                             more_covered_copies=2, more_covered_from=0.4)[0]) == 7
    from dataclasses import replace

    from vision.training.train import CONFIGS, scene_crops
    cfg = replace(CONFIGS["tiny"], partly_covered_copies=3, more_covered_copies=2)
    positives = [int((scene_crops(SceneSet(img[None], [scene]), replace(cfg, more_covered_from=start), 0)[1]
                      != NOT_INDEX).sum()) for start in (0.7, 0.4)]
    assert positives[1] == positives[0] + 2, positives
    # Nothing covered: nothing added, in the shapes that concatenate with the other crops.
    X0, R0, S0 = covered_crops(SceneSet(img[None], [recs]), seed=0, partly_covered_copies=3,
                               more_covered_copies=2)
    assert X0.shape == (0, PATCH_H, PATCH_W, 3) and R0.shape == S0.shape == (0,)


def test_an_index_whose_pip_is_covered_is_labelled_with_its_rank_and_no_known_suit(art):
    img, recs = _scene()
    assert all(r["pip_visible"] == 1.0 for r in recs)  # the renderer says how much of the pip shows
    # One index readable with its pip half hidden, the other whole; then both partly covered.
    scene = [dict(recs[0], pip_visible=0.3), recs[1]]
    X, R, S = classifier_crops(SceneSet(img[None], [scene]), seed=0, jitter_copies=2, negatives_per_image=0,
                               hidden_pip_below=0.5)
    pos = R != NOT_INDEX
    assert set(R[pos]) == {RANKS.index("9")}
    assert sorted(S[pos]) == [SUIT_HIDDEN] * 2 + [SUITS.index("D")] * 2
    # Off (the default), the same crops keep their suit, pixel for pixel.
    X0, R0, S0 = classifier_crops(SceneSet(img[None], [scene]), seed=0, jitter_copies=2, negatives_per_image=0)
    assert np.array_equal(X0, X) and np.array_equal(R0, R) and set(S0[R0 != NOT_INDEX]) == {SUITS.index("D")}
    covered = [dict(recs[0], visible=0.8, pip_visible=0.49), dict(recs[1], visible=0.9, pip_visible=0.5)]
    _, Rc, Sc = covered_crops(SceneSet(img[None], [covered]), seed=0, partly_covered_copies=1,
                              more_covered_copies=1, hidden_pip_below=0.5)
    assert list(Rc) == [RANKS.index("9")] * 2 and list(Sc) == [SUIT_HIDDEN, SUITS.index("D")]
    # Records rendered before pip_visible existed count as showing their pip.
    old = [{k: v for k, v in r.items() if k != "pip_visible"} for r in recs]
    _, R1, S1 = classifier_crops(SceneSet(img[None], [old]), seed=0, negatives_per_image=0, hidden_pip_below=0.5)
    assert set(S1[R1 != NOT_INDEX]) == {SUITS.index("D")}


def test_a_hidden_pip_can_keep_its_colour(art):
    img, recs = _scene()   # two indices of the nine of diamonds
    scene = [dict(recs[0], pip_visible=0.3), dict(recs[1], card="9S", pip_visible=0.1)]
    _, R, S = classifier_crops(SceneSet(img[None], [scene]), seed=0, jitter_copies=1, negatives_per_image=0,
                               hidden_pip_below=0.5, keep_colour=True)
    assert list(S[R != NOT_INDEX]) == [SUIT_HIDDEN_RED, SUIT_HIDDEN_BLACK]
    covered = [dict(r, visible=0.9) for r in scene]
    _, _, Sc = covered_crops(SceneSet(img[None], [covered]), seed=0, partly_covered_copies=1,
                             hidden_pip_below=0.5, keep_colour=True)
    assert list(Sc) == [SUIT_HIDDEN_RED, SUIT_HIDDEN_BLACK]
    # A pip that shows keeps its suit whatever the option says.
    _, R1, S1 = classifier_crops(SceneSet(img[None], [recs]), seed=0, jitter_copies=1, negatives_per_image=0,
                                 hidden_pip_below=0.5, keep_colour=True)
    assert set(S1[R1 != NOT_INDEX]) == {SUITS.index("D")}
    import doctest

    from vision.training import data
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(data._suit_label, "_suit_label", globs={"_suit_label": data._suit_label}):
        runner.run(test)
    assert runner.failures == 0 and runner.tries >= 2


def test_an_index_whose_rank_is_covered_is_labelled_as_an_index_of_no_known_rank(art):
    img, recs = _scene()   # two indices of the nine of diamonds
    assert all(r["rank_visible"] == 1.0 for r in recs)  # the renderer says how much of the rank shows
    scene = [dict(recs[0], rank_visible=0.3), recs[1]]
    X, R, S = classifier_crops(SceneSet(img[None], [scene]), seed=0, jitter_copies=2, negatives_per_image=0,
                               hidden_rank_below=0.5)
    pos = R != NOT_INDEX
    assert sorted(R[pos]) == [RANK_HIDDEN] * 2 + [RANKS.index("9")] * 2
    assert set(S[pos]) == {SUITS.index("D")}   # the suit, which shows, is still taught
    # Off (the default), the same crops keep their rank, pixel for pixel.
    X0, R0, _ = classifier_crops(SceneSet(img[None], [scene]), seed=0, jitter_copies=2, negatives_per_image=0)
    assert np.array_equal(X0, X) and set(R0[R0 != NOT_INDEX]) == {RANKS.index("9")}
    # Both parts hidden: an index of no known rank or suit.
    both = [dict(recs[0], visible=0.8, rank_visible=0.2, pip_visible=0.4), dict(recs[1], visible=0.9)]
    _, Rc, Sc = covered_crops(SceneSet(img[None], [both]), seed=0, partly_covered_copies=1, more_covered_copies=1,
                              hidden_pip_below=0.5, hidden_rank_below=0.5)
    assert list(Rc) == [RANK_HIDDEN, RANKS.index("9")] and list(Sc) == [SUIT_HIDDEN, SUITS.index("D")]
    # Records rendered before rank_visible existed count as showing their rank.
    old = [{k: v for k, v in r.items() if k != "rank_visible"} for r in recs]
    _, R1, _ = classifier_crops(SceneSet(img[None], [old]), seed=0, negatives_per_image=0, hidden_rank_below=0.5)
    assert set(R1[R1 != NOT_INDEX]) == {RANKS.index("9")}
    import doctest

    from vision.training import data
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(data._rank_label, "_rank_label", globs={"_rank_label": data._rank_label}):
        runner.run(test)
    assert runner.failures == 0 and runner.tries >= 2


def test_the_rank_loss_teaches_a_hidden_rank_as_an_index_of_no_known_rank():
    import doctest

    import torch
    import torch.nn.functional as F

    from vision.training import train
    from vision.training.train import rank_loss

    g = torch.Generator().manual_seed(0)
    logits = torch.randn(5, NOT_INDEX + 1, generator=g, requires_grad=True)
    r = torch.tensor([0, 12, NOT_INDEX, 5, 9])
    # No hidden rank: exactly the loss trained before.
    assert torch.equal(rank_loss(logits, r), F.cross_entropy(logits, r, label_smoothing=0.02))
    # A hidden rank is pulled away from its most likely rank and from NOT_INDEX (it is an
    # index), towards its least likely rank.
    r_hidden = torch.tensor([RANK_HIDDEN, 12, NOT_INDEX, 5, 9])
    rank_loss(logits, r_hidden).backward()
    row = logits.detach()[0]
    ranks_only = row[:NOT_INDEX]
    assert logits.grad[0][ranks_only.argmax()] > 0 > logits.grad[0][ranks_only.argmin()]
    assert logits.grad[0][NOT_INDEX] > 0
    # Least when the thirteen ranks are equally likely and NOT_INDEX is not.
    flat = torch.tensor([[0.0] * NOT_INDEX + [-30.0]])
    least = rank_loss(flat, torch.tensor([RANK_HIDDEN])).item()
    assert least == pytest.approx(np.log(NOT_INDEX), abs=0.05)
    for worse in ([[0.0] * (NOT_INDEX + 1)], [[3.0] + [0.0] * (NOT_INDEX - 1) + [-30.0]]):
        assert rank_loss(torch.tensor(worse), torch.tensor([RANK_HIDDEN])).item() > least
    runner = doctest.DocTestRunner()
    globs = {"torch": torch, "rank_loss": rank_loss}
    for test in doctest.DocTestFinder().find(train.rank_loss, "rank_loss", globs=globs):
        runner.run(test)
    assert runner.failures == 0 and runner.tries >= 3


def test_the_suit_loss_of_a_hidden_pip_that_keeps_its_colour():
    import torch

    from vision.training.train import suit_loss

    # Least when the two suits of the colour are equally likely and the others are not:
    # log 2, up to the label smoothing's share on the other colour.
    both_black = torch.tensor([[20.0, -20.0, -20.0, 20.0]])
    least = suit_loss(both_black, torch.tensor([SUIT_HIDDEN_BLACK])).item()
    assert least == pytest.approx(np.log(2), abs=0.5)
    for worse in ([[20.0, -20.0, -20.0, 0.0]], [[0.0, 0.0, 0.0, 0.0]], [[-20.0, 20.0, 20.0, -20.0]]):
        assert suit_loss(torch.tensor(worse), torch.tensor([SUIT_HIDDEN_BLACK])).item() > least
    # Red is the mirror image: diamonds and hearts.
    assert suit_loss(torch.tensor([[-20.0, 20.0, 20.0, -20.0]]), torch.tensor([SUIT_HIDDEN_RED])).item() == \
        pytest.approx(least)
    # Its gradient, sure of a club, points towards the spade and away from the red suits' share.
    logits = torch.tensor([[3.0, 0.0, 0.0, 0.0]], requires_grad=True)
    suit_loss(logits, torch.tensor([SUIT_HIDDEN_BLACK])).backward()
    assert logits.grad[0, 0] > 0 > logits.grad[0, 3]


def test_the_suit_loss_teaches_a_hidden_pip_as_no_known_suit():
    import doctest

    import torch
    import torch.nn.functional as F

    from vision.training import train
    from vision.training.train import suit_loss

    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 4, generator=g, requires_grad=True)
    s = torch.tensor([0, 3, -1, 2, -1, 1])
    # No hidden pip: exactly the loss trained before (crops without a suit add nothing).
    keep = s >= 0
    assert torch.equal(suit_loss(logits, s), F.cross_entropy(logits[keep], s[keep], label_smoothing=0.02))
    assert suit_loss(logits, torch.full((6,), -1)).item() == 0.0
    # A hidden pip is pulled towards the uniform distribution: its gradient points
    # away from its most likely suit and towards its least likely.
    s_hidden = torch.tensor([SUIT_HIDDEN, 3, -1, 2, -1, 1])
    suit_loss(logits, s_hidden).backward()
    row = logits.detach()[0]
    assert logits.grad[0][row.argmax()] > 0 > logits.grad[0][row.argmin()]
    assert torch.all(logits.grad[[2, 4]] == 0)
    # Its loss is least when the four suits are equally likely (log 4).
    flat = torch.zeros(1, 4)
    assert suit_loss(flat, torch.tensor([SUIT_HIDDEN])).item() == pytest.approx(np.log(4))
    assert suit_loss(torch.tensor([[2.0, 0, 0, 0]]), torch.tensor([SUIT_HIDDEN])).item() > np.log(4)
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(train.suit_loss, "suit_loss", globs={"torch": torch, "suit_loss": suit_loss}):
        runner.run(test)
    assert runner.failures == 0 and runner.tries >= 3


def test_tiny_training_run_exports_models_the_recogniser_loads(art, tmp_path, capsys, monkeypatch):
    from vision.recogniser import Recogniser
    from vision.training import train as T
    from vision.training.train import CONFIGS, fast_math
    from vision.training.train import main as train_main

    # How the classifiers are trained: both at once (the default), each in its own process.
    trained_together = []
    train_classifiers = T.train_classifiers
    monkeypatch.setattr(T, "train_classifiers", lambda files, cfg, seeds, jobs, threads, until: trained_together.append(
        (len(files), jobs, threads, until)) or train_classifiers(files, cfg, seeds, jobs, threads, until))
    out, data = tmp_path / "model", tmp_path / "data"
    assert train_main(["--config", "tiny", "--out", str(out), "--data", str(data), "--workers", "1"]) == 0
    assert trained_together == [(2, 2, 2, None)]   # (no time budget: no end to train by)
    printed = capsys.readouterr().out
    assert "training 2 classifiers, 2 at a time with 1 thread each" in printed
    meta = json.loads((out / "model.json").read_text())
    assert meta["config"] == "tiny"
    assert meta["train_precision"] == ("bfloat16" if fast_math(CONFIGS["tiny"]) else "float32")
    # tiny asks for bfloat16: where the CPU cannot give it, the command says so at the start.
    said_float32 = "does not compute bfloat16 natively" in printed
    assert said_float32 == (meta["train_precision"] == "float32")
    assert not set(meta["trained_on"]) & set(HELD_OUT), "held-out designs must never be trained on"
    # tiny trains two classifiers, the second on its own draw of scenes: an ensemble.
    assert meta["classifier"] == ["index_classifier.onnx", "index_classifier_2.onnx"]
    for name in (meta["detector"], *meta["classifier"], meta["refiner"]):
        size = (out / name).stat().st_size
        assert 10_000 < size < 5_000_000
    # tiny stores its networks in 8 bits, their float files kept beside the scenes: the
    # detector's weights in float32, the others' in float16.
    import onnx

    def weight_types(path):
        return {t.data_type for t in onnx.load(str(path)).graph.initializer}
    TP = onnx.TensorProto
    assert TP.FLOAT16 not in weight_types(data / "float-networks" / meta["detector"])
    assert TP.FLOAT16 in weight_types(data / "float-networks" / meta["refiner"])
    # The detector leaves its input's centring to the recogniser (no elementwise pass over the
    # image), and its first convolution, over the picture's colours, stays in float.
    assert meta["det_input"] == "centred"
    graph = onnx.load(str(out / meta["detector"])).graph
    assert [n.op_type for n in graph.node if graph.input[0].name in n.input] == ["Conv"]
    for name in (*meta["classifier"], meta["refiner"], meta["detector"]):
        # 8-bit weights (int8 from -64 to 64: quantise.narrow_weights), uint8 activations, no float16.
        assert {TP.INT8, TP.UINT8} <= weight_types(out / name) and TP.FLOAT16 not in weight_types(out / name)
        model = onnx.load(str(out / name))
        inits = {w.name: onnx.numpy_helper.to_array(w) for w in model.graph.initializer}
        layers = [n for n in model.graph.node if n.op_type in ("QLinearConv", "QGemm")]
        assert layers and all(inits[n.input[3]].dtype == np.int8 and not inits[n.input[5]].any()
                              and np.abs(inits[n.input[3]].astype(int)).max() <= 64 for n in layers)
    for name in meta["classifier"]:
        assert TP.FLOAT16 in weight_types(data / "float-networks" / name)
    assert meta["quantised"]["networks"] == ["classifier", "detector", "refiner"]
    assert meta["quantised"]["calibration"]["scenes"] == 2 and meta["quantised"]["calibration"]["seed"] == 1001
    assert meta["quantised"]["padded_channels"] == 4
    for name in (*meta["classifier"], meta["refiner"]):   # (quantise.pad_input_channels: the first convolution over 4 channels)
        assert any(n.op_type == "Pad" for n in onnx.load(str(out / name)).graph.node), name
    member_scenes = json.loads((tmp_path / "data-member2" / "scenes.json").read_text())
    assert member_scenes["seed"] == 2 and member_scenes["n"] == 16
    # Member k is trained as a run of seed + k - 1 would train it.
    assert meta["classifier_seeds"] == [1, 2] and meta["classifier_jobs"] == 2
    assert meta["refine_steps"] == 1
    assert meta["look_turned"] is True and meta["turned_accept"] == 0.95 and meta["turned_max"] == 4
    assert meta["weak_heat"] == 0.15 and meta["weak_accept"] == 0.95 and meta["weak_max"] == 4
    rec = Recogniser(out)
    assert rec.weak_heat == 0.15 and len(rec.classifiers) == 2
    img, _ = _scene()
    result = rec.recognise(img)  # a tiny model reads nothing useful, but the path runs end to end
    assert isinstance(result.cards, list) and isinstance(result.unknown, list)
    # The rendered scenes and the detector are cached beside each other; a
    # second run with --reuse-detector retrains only the classifier.
    assert sorted(p.name for p in data.iterdir()) == ["detector.json", "detector.pt", "float-networks",
                                                      "scenes.json", "shard0000.npz"]
    assert meta["crop_norm"] == "standardise" and meta["generated_designs"] == 2
    stamp = (data / "shard0000.npz").stat().st_mtime_ns
    assert train_main(["--config", "tiny", "--out", str(out), "--data", str(data), "--workers", "1",
                       "--reuse-detector", "--jobs", "1"]) == 0
    assert (data / "shard0000.npz").stat().st_mtime_ns == stamp, "the cached scenes were rendered again"
    meta = json.loads((out / "model.json").read_text())
    assert meta["detector_reused"] is True and meta["detector_seconds"] >= 0
    assert meta["classifier_jobs"] == 1 and trained_together[-1] == (2, 1, 2, None)   # one after another, here
    Recogniser(out).recognise(img)
    # --detector-from starts from a written model's detector instead, and --refiner-from
    # from its refiner: the new model's networks compute what those do.
    out2 = tmp_path / "model2"
    (out / "model.json").write_text(json.dumps({**meta, "refiner_seconds": 7}))   # as a record may say
    assert train_main(["--config", "tiny", "--out", str(out2), "--data", str(data), "--workers", "1",
                       "--detector-from", str(out / "index_detector.onnx"),
                       "--refiner-from", str(out / "index_refiner.onnx"), "--jobs", "1"]) == 0
    meta2 = json.loads((out2 / "model.json").read_text())
    assert meta2["detector_reused"] is True and meta2["detector_from"] == str(out / "index_detector.onnx")
    assert meta2["detector_seconds"] == meta["detector_seconds"]   # the source's record of its detector
    assert meta2["refiner_from"] == str(out / "index_refiner.onnx") and meta2["refiner_seconds"] == 7
    assert "using the refiner of" in capsys.readouterr().out
    from vision.index_geometry import REFINE_PATCH_H, REFINE_PATCH_W
    from vision.inference import OnnxNet
    probe = np.random.default_rng(3).normal(size=(2, 3, REFINE_PATCH_H, REFINE_PATCH_W)).astype(np.float32)
    before, after = (OnnxNet(d / "index_refiner.onnx", "onnxruntime", threads=1)(probe) for d in (out, out2))
    # (Both in 8 bits: the second run loads the first's 8-bit weights and stores them in 8 bits
    # again, on ranges it measures itself, so the two lie a few 8-bit steps apart, no more.)
    assert np.abs(after - before).max() < 0.01 * max(1.0, np.abs(before).max())
    # The detector is run over the training scenes only for what needs its detections: the
    # refiner's crops, and with detector_crops the classifier's. A refiner given needs none
    # (the run skips minutes of `full`'s; tiny, with detector_crops, ran it above).
    detected = []
    detect_scenes = T.detect_scenes
    monkeypatch.setattr(T, "detect_scenes", lambda *a: detected.append(len(a[1].images)) or detect_scenes(*a))
    given = ["--config", "tiny", "--data", str(data), "--workers", "1", "--jobs", "1", "--set", "detector_crops=0",
             "--detector-from", str(out / "index_detector.onnx")]
    assert train_main([*given, "--out", str(tmp_path / "given-detector")]) == 0
    assert detected == [CONFIGS["tiny"].scenes]     # the refiner trained on the detections
    assert train_main([*given, "--out", str(tmp_path / "given-both"), "--refiner-from", str(out / "index_refiner.onnx")]) == 0
    assert detected == [CONFIGS["tiny"].scenes], "the detector ran over the scenes for a refiner given"
    assert json.loads((tmp_path / "given-both" / "model.json").read_text())["refiner_from"] == str(out / "index_refiner.onnx")
    # A file that is not there, or not the network asked for, is refused before any work.
    for flag, wrong in (("--detector-from", tmp_path / "missing.onnx"), ("--detector-from", out / "model.json"),
                        ("--detector-from", out / "index_classifier.onnx"),
                        ("--refiner-from", tmp_path / "missing.onnx"),
                        ("--refiner-from", out / "index_detector.onnx")):
        assert train_main(["--config", "tiny", "--out", str(tmp_path / "model3"), "--data", str(data),
                           flag, str(wrong)]) == 2
        assert capsys.readouterr().err.startswith(f"{flag}: "), (flag, wrong)
    # ... and a refiner for a recipe without one.
    with pytest.raises(SystemExit) as refused:
        train_main(["--config", "tiny", "--out", str(tmp_path / "model3"), "--data", str(data),
                    "--set", "refiner=0", "--refiner-from", str(out / "index_refiner.onnx")])
    assert refused.value.code == 2 and "has no refiner" in capsys.readouterr().err
    # ... and so is a detector whose model's record beside it is unreadable (it would be read
    # only after the training otherwise, and the run lost).
    for record, why in (("{not json", "model.json is not valid JSON"), ("[1, 2]", "not a model's record")):
        damaged = tmp_path / "damaged"
        damaged.mkdir(exist_ok=True)
        shutil.copy(out / "index_detector.onnx", damaged / "index_detector.onnx")
        (damaged / "model.json").write_text(record)
        assert train_main(["--config", "tiny", "--out", str(tmp_path / "model3"), "--data", str(data),
                           "--detector-from", str(damaged / "index_detector.onnx")]) == 2
        assert why in capsys.readouterr().err
    assert not (tmp_path / "model3").exists()
    from vision.inference import OnnxNet
    x = np.random.default_rng(0).random((1, 3, 96, 128), dtype=np.float32)
    before, after = (OnnxNet(d / "index_detector.onnx", "onnxruntime", threads=1)(x) for d in (out, out2))
    assert np.abs(after - before).max() < 0.01 * max(1.0, np.abs(before).max())   # (as the refiner's)
    # A cached detector of other channels (an earlier recipe's) is refused by name, not half-loaded.
    import torch

    from vision.training.models import IndexDetector
    torch.save(IndexDetector(0.5, (16, 24, 40, 64)).state_dict(), data / "detector.pt")
    assert train_main(["--config", "tiny", "--out", str(tmp_path / "model4"), "--data", str(data),
                       "--workers", "1", "--reuse-detector"]) == 2
    err = capsys.readouterr().err
    assert "--reuse-detector:" in err and "does not fit this config's detector" in err and "size mismatch" in err
    assert not (tmp_path / "model4").exists()


def test_classifiers_trained_side_by_side_are_those_trained_one_after_another(art, tmp_path):
    """train_classifiers with jobs: the same training in other processes, so with
    as many threads each the same weights, bit for bit, in the order of the files."""
    import torch

    from vision.training.data import generate_scenes, load_scenes
    from vision.training.train import CONFIGS, scene_crops, train_classifiers

    cfg = CONFIGS["tiny"]
    generate_scenes(tmp_path / "scenes", 8, seed=5, decks=["letele", "svgcards-bellot"], workers=1,
                    log=lambda m: None)
    scenes = load_scenes(tmp_path / "scenes")
    files = []
    for k, seed in enumerate((5, 6)):
        X, R, S = scene_crops(scenes, cfg, seed)
        files.append(tmp_path / f"crops{k}.npz")
        np.savez(files[-1], X=X[k::2], R=R[k::2], S=S[k::2])   # two different sets
    together = train_classifiers(files, cfg, [5, 6], jobs=2, threads=2)   # 1 thread each
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        apart = train_classifiers(files, cfg, [5, 6], jobs=1, threads=1)
    finally:
        torch.set_num_threads(threads)
    for a, b in zip(together, apart):
        assert not a.training and not b.training
        sa, sb = a.state_dict(), b.state_dict()
        assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)
    first, second = (n.state_dict()["fc.4.weight"] for n in together)
    assert not torch.equal(first, second)   # each its own crops and seed


WORKER_OF_A_KILLED_COMMAND = """
import os, sys, time
from vision.training.train import _worker_pool
pool = _worker_pool(1)
print(pool.submit(os.getpid).result(), flush=True)
pool.submit(time.sleep, 300)      # a long task, as a classifier's training is
time.sleep(300)
"""


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped is not), from Linux's /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_classifier_workers_end_when_the_command_is_killed():
    """A training command killed outright must not leave its classifier workers
    training on, holding the cores, for the rest of their task (_exit_with_parent)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    parent = subprocess.Popen([sys.executable, "-c", WORKER_OF_A_KILLED_COMMAND], stdout=subprocess.PIPE,
                              text=True, cwd=Path(__file__).resolve().parents[1])
    worker = None
    try:
        worker = int(parent.stdout.readline())
        time.sleep(1.5)
        assert _running(worker), "the worker should be busy with its task"
        parent.send_signal(signal.SIGKILL)   # no clean-up in the command: as `kill -9`
        parent.wait(timeout=10)
        deadline = time.monotonic() + 15
        while _running(worker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _running(worker), "the worker kept running after its command was killed"
    finally:
        parent.kill()
        if worker is not None and _running(worker):
            os.kill(worker, signal.SIGKILL)


@pytest.mark.parametrize("args", [["--jobs", "-1"], ["--threads", "0"], ["--workers", "0"]])
def test_training_refuses_counts_below_one_before_any_work(args, tmp_path, capsys):
    from vision.training.train import main as train_main

    with pytest.raises(SystemExit) as exit_:
        train_main(["--config", "tiny", "--out", str(tmp_path / "model"), "--data", str(tmp_path / "data"), *args])
    assert exit_.value.code == 2
    assert "--threads and --workers must be at least 1, --jobs at least 0" in capsys.readouterr().err
    assert not (tmp_path / "data").exists() and not (tmp_path / "model").exists()


def test_the_time_budget_times_each_network_and_records_its_plan(art, tmp_path, capsys):
    from vision.training.train import CONFIGS
    from vision.training.train import main as train_main

    out, data = tmp_path / "model", tmp_path / "data"
    assert train_main(["--config", "tiny", "--out", str(out), "--data", str(data), "--workers", "1",
                       "--hours", "1", "--set", "det_steps=8", "--set", "pair_accept_threshold=0.6"]) == 0
    printed = capsys.readouterr().out
    assert "time budget 1 h: timing a few steps of each network" in printed
    assert "time budget 1 h: the recipe fits" in printed and "pair_accept_threshold" not in printed
    meta = json.loads((out / "model.json").read_text())
    # Two classifiers, but the recipe's own: they read at the recipe's threshold.
    assert meta["accept_threshold"] == CONFIGS["tiny"].accept_threshold != 0.6
    budget = meta["budget"]
    assert budget["hours"] == 1 and budget["cut"] is False
    assert budget["speeds"]["draw"] > 0 and budget["speeds"]["cls_step"] > 0 and budget["speeds"]["cls_alone_step"] > 0
    assert 0 < budget["estimated_seconds"] == budget["recipe_estimated_seconds"] < 3600
    assert meta["config_values"]["det_steps"] == 8 and meta["config_values"]["cls_members"] == 2
    assert len(meta["classifier"]) == 2
    assert budget["speeds"]["det_step"] > 0 and budget["speeds"]["refine_step"] > 0
    # Networks taken from a written model cost the budget nothing.
    out2 = tmp_path / "model2"
    assert train_main(["--config", "tiny", "--out", str(out2), "--data", str(data), "--workers", "1",
                       "--hours", "1", "--detector-from", str(out / "index_detector.onnx"),
                       "--refiner-from", str(out / "index_refiner.onnx")]) == 0
    speeds = json.loads((out2 / "model.json").read_text())["budget"]["speeds"]
    capsys.readouterr()
    assert speeds["det_step"] == 0 and speeds["refine_step"] == 0 and speeds["cls_step"] > 0
    # Without a budget (tiny's own), nothing is timed and nothing recorded.
    assert train_main(["--config", "tiny", "--out", str(out), "--data", str(data), "--workers", "1",
                       "--reuse-detector", "--jobs", "1"]) == 0
    assert "time budget" not in capsys.readouterr().out
    assert "budget" not in json.loads((out / "model.json").read_text())


class _ScriptedRuns:
    """A network's probe runs on a clock the test sets: each run of ``steps`` steps
    takes the next of ``seconds`` (the untimed first run included)."""

    def __init__(self, seconds):
        self.now, self.seconds, self.calls = 0.0, list(seconds), []

    def clock(self):
        return self.now

    def run(self, steps):
        self.calls.append(steps)
        self.now += self.seconds.pop(0)
        return steps


def test_the_speed_probe_takes_the_longer_run_less_the_shorter_per_step():
    from vision.training.train import PROBE_STEPS, _step_seconds

    short, long_ = PROBE_STEPS
    runs = _ScriptedRuns([9.0, 1.0 + short * 0.1, 1.0 + long_ * 0.1])
    assert _step_seconds(runs.run, clock=runs.clock) == pytest.approx(0.1)
    assert runs.calls == [short, short, long_]


def test_the_speed_probe_times_again_when_other_work_upsets_its_runs():
    """A shorter run slowed by other work (the flake a busy test machine showed: a
    negative difference, recorded as a step of 0 s) is timed again with the longer."""
    from vision.training.train import PROBE_STEPS, _step_seconds

    short, long_ = PROBE_STEPS
    runs = _ScriptedRuns([9.0, 5.0, 2.0, 1.0 + short * 0.1, 1.0 + long_ * 0.1])
    assert _step_seconds(runs.run, clock=runs.clock) == pytest.approx(0.1)
    assert runs.calls == [short, short, long_, short, long_]


def test_a_speed_probe_upset_every_time_counts_the_longer_runs_whole_time():
    from vision.training.train import PROBE_STEPS, _step_seconds

    short, long_ = PROBE_STEPS
    runs = _ScriptedRuns([9.0] + [3.0, 2.8] * 3)
    step = _step_seconds(runs.run, clock=runs.clock, tries=3)
    assert step == pytest.approx(2.8 / long_) and step > 0
    assert len(runs.calls) == 7


def test_the_side_by_side_probe_times_the_machine_not_each_worker():
    """Two workers start each run together.  The first is done early; the second then has
    the machine to itself and its own time would say a step is cheap.  The machine's time
    runs from the first start to the last end: (11 - 3) s for 2 x 10 more steps."""
    from vision.training.train import _joint_step_seconds

    first = [((0.0, 2.0, 4), (10.0, 16.0, 14))]
    second = [((0.0, 3.0, 4), (10.0, 21.0, 14))]
    assert _joint_step_seconds([first, second]) == pytest.approx((11.0 - 3.0) / 20)
    # A try upset by other work (the shorter runs took longer) is left out of the mean ...
    upset = [((0.0, 30.0, 4), (40.0, 41.0, 14))]
    assert _joint_step_seconds([first + upset, second + upset]) == pytest.approx(0.4)
    assert _joint_step_seconds([first + first, second + [((0.0, 3.0, 4), (10.0, 31.0, 14))]]) \
        == pytest.approx((0.4 + 0.9) / 2)
    # ... and with none right, the longer runs' whole time per step counts.
    assert _joint_step_seconds([upset, upset]) == pytest.approx(1.0 / 28)


def test_a_slow_machine_trains_less_to_fit_the_budget(art, tmp_path, capsys, monkeypatch):
    """The plan is carried out: on a machine whose detector step took 20 minutes (the
    speeds stand in for one), one classifier instead of two and two thirds of the detector's steps."""
    from vision.training import train as T
    from vision.training.budget import Speeds
    from vision.training.train import CONFIGS

    def slow(scenes, cfg, seed, threads, jobs, draw_seconds, detector=True, refiner=True):
        return Speeds(draw=draw_seconds, det_step=1200.0, refine_step=0.01, cls_step=0.01, cls_alone_step=0.01)

    monkeypatch.setattr(T, "measure_speeds", slow)
    out = tmp_path / "model"
    assert T.main(["--config", "tiny", "--out", str(out), "--data", str(tmp_path / "data"), "--workers", "1",
                   "--hours", "1.5", "--set", "pair_accept_threshold=0.6"]) == 0
    printed = capsys.readouterr().out
    assert "to fit, 1 classifier instead of 2, 4 detector steps instead of 6" in printed
    assert "detector step 4/4" in printed and "classifier 2 of 2" not in printed
    meta = json.loads((out / "model.json").read_text())
    assert meta["classifier"] == "index_classifier.onnx" and not (out / "index_classifier_2.onnx").exists()
    assert meta["config_values"]["det_steps"] == 4 and meta["config_values"]["cls_members"] == 1
    assert meta["budget"]["cut"] is True and meta["budget"]["speeds"]["det_step"] == 1200.0
    # One classifier left is not a pair: it reads at the recipe's threshold.
    assert meta["accept_threshold"] == CONFIGS["tiny"].accept_threshold


def test_the_command_tunes_its_classifiers_where_the_config_says_and_the_budget_allows(art, tmp_path, capsys,
                                                                                        monkeypatch):
    """``tune_scenes`` (4000 in ``full``): once trained and stored in 8 bits, the classifiers are
    tuned on squeezed indices (vision.training.tune) by the same command, within its budget."""
    from vision.recogniser import Recogniser
    from vision.training import train as T
    from vision.training import tune
    from vision.training.budget import Speeds

    def fast(scenes, cfg, seed, threads, jobs, draw_seconds, detector=True, refiner=True):
        return Speeds(draw=draw_seconds, det_step=0.01, refine_step=0.01, cls_step=0.01, cls_alone_step=0.01)

    monkeypatch.setattr(T, "measure_speeds", fast)
    out, data = tmp_path / "model", tmp_path / "data"
    assert T.main(["--config", "tiny", "--out", str(out), "--data", str(data), "--workers", "1",
                   "--hours", "1", "--set", "tune_scenes=3"]) == 0
    printed = capsys.readouterr().out
    assert "the recipe fits" in printed and "tuned 2 classifiers" in printed
    meta = json.loads((out / "model.json").read_text())
    assert meta["config_values"]["tune_scenes"] == 3 and meta["budget"]["cut"] is False
    (tuned,) = meta["tuned"]
    assert tuned["scenes"] == 3 and tuned["epochs"] == tune.EPOCHS and tuned["seeds"] == [tune.SEED, tune.SEED + 1]
    assert meta["quantised"]["calibration"]["scenes"] == 2          # in 8 bits again, as trained
    assert sorted(p.name for p in (tmp_path / "data-tune").iterdir()) == [f"tiny-{tune.SEED}-3",
                                                                         f"tiny-{tune.SEED + 1}-3"]
    assert len(Recogniser(out).classifiers) == 2
    # Where the tuning would not fit once the classifiers are trained, it is given up, and
    # the model is written as trained, its record saying so.
    monkeypatch.setattr(T, "tuning", lambda cfg, speeds, indices, members: 3600.0 if members == 2 else 0.0)
    out2 = tmp_path / "model2"
    assert T.main(["--config", "tiny", "--out", str(out2), "--data", str(data), "--workers", "1",
                   "--hours", "1", "--set", "tune_scenes=3", "--reuse-detector"]) == 0
    assert "no tuning on squeezed indices, which would take about 60 minutes, to end in time" in capsys.readouterr().out
    meta2 = json.loads((out2 / "model.json").read_text())
    assert meta2["config_values"]["tune_scenes"] == 0 and "tuned" not in meta2 and meta2["budget"]["cut"] is True
    # Where its time would cost the classifiers an epoch, it is given up before any epoch is.
    monkeypatch.setattr(T, "tuning", lambda cfg, speeds, indices, members: 3500.0)
    out3 = tmp_path / "model3"
    assert T.main(["--config", "tiny", "--out", str(out3), "--data", str(data), "--workers", "1",
                   "--hours", "1", "--set", "tune_scenes=3", "--set", "cls_epochs=2", "--reuse-detector"]) == 0
    printed = capsys.readouterr().out
    assert "no tuning on squeezed indices, to keep the classifiers' epochs" in printed
    assert "classifier epochs instead of" not in printed
    meta3 = json.loads((out3 / "model.json").read_text())
    assert meta3["config_values"]["tune_scenes"] == 0 and meta3["config_values"]["cls_epochs"] == 2
    assert "tuned" not in meta3 and meta3["budget"]["cut"] is True
    # A tuning that fails leaves the model as trained, its record saying it is not tuned.
    monkeypatch.undo()
    monkeypatch.setattr(T, "measure_speeds", fast)

    def broken(*args, **kwargs):
        raise tune.TuneError("no art")
    monkeypatch.setattr(tune, "tune_model", broken)
    out4 = tmp_path / "model4"
    assert T.main(["--config", "tiny", "--out", str(out4), "--data", str(data), "--workers", "1",
                   "--hours", "1", "--set", "tune_scenes=3", "--reuse-detector"]) == 2
    assert "tuning the classifiers: no art; the model in" in capsys.readouterr().err
    meta4 = json.loads((out4 / "model.json").read_text())
    assert meta4["config_values"]["tune_scenes"] == 0 and meta4["budget"]["cut"] is True
    assert len(Recogniser(out4).classifiers) == 2


def test_slow_classifiers_keep_two_of_fewer_epochs(art, tmp_path, capsys, monkeypatch):
    """The middle step of the plan carried out: classifiers so slow that two of 5 epochs
    do not fit but two of 3 do (the speeds stand in for such a machine, sized from the
    scenes' real count of indices); both are trained, each for fewer epochs, and
    they read at the pair's accept threshold."""
    from vision.recogniser import Recogniser
    from vision.training import budget as B
    from vision.training import train as T
    from vision.training.budget import Speeds

    hours = 1.5

    def slow_classifiers(scenes, cfg, seed, threads, jobs, draw_seconds, detector=True, refiner=True):
        indices = sum(len(r) for r in scenes.indices)
        usable = 0.95 * hours * 3600   # about what plan() will have, less its margin
        per_epoch_steps = 2 * B._epoch_steps(indices * B.CLASSIFIER_CROPS_PER_INDEX, cfg.cls_batch)
        step = usable / 3.5 / per_epoch_steps   # three epochs of two fit, four do not
        return Speeds(draw=draw_seconds, det_step=0.01, refine_step=0.01, cls_step=step, cls_alone_step=step)

    monkeypatch.setattr(T, "measure_speeds", slow_classifiers)
    out = tmp_path / "model"
    assert T.main(["--config", "tiny", "--out", str(out), "--data", str(tmp_path / "data"), "--workers", "1",
                   "--hours", str(hours), "--set", "cls_epochs=5", "--set", "pair_accept_threshold=0.6"]) == 0
    printed = capsys.readouterr().out
    assert "to fit, 3 classifier epochs instead of 5" in printed and "classifier 2 of 2" in printed
    assert "they read at accept threshold 0.6 (pair_accept_threshold) instead of 0.85" in printed
    meta = json.loads((out / "model.json").read_text())
    # A pair cut short reads at the pair's threshold, and the recogniser takes it from model.json.
    assert meta["accept_threshold"] == meta["config_values"]["accept_threshold"] == 0.6
    assert Recogniser(out).accept_threshold == 0.6
    assert meta["classifier"] == ["index_classifier.onnx", "index_classifier_2.onnx"]
    assert meta["config_values"]["cls_members"] == 2 and meta["budget"]["cut"] is True
    # The epochs are checked once more against the crops' real number: never more than planned.
    assert 1 <= meta["config_values"]["cls_epochs"] <= 3
    assert "classifier 2/2 epoch 4/" not in printed and "classifier 2/2 epoch 5/" not in printed


def _random_crops(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 256, (n, PATCH_H, PATCH_W, 3), dtype=np.uint8),
            rng.integers(0, NOT_INDEX + 1, n), rng.integers(-1, 4, n))


def test_a_classifier_behind_its_time_trains_the_epochs_that_fit(capsys):
    """The budget's probe can be off: the first epoch's real time decides.  On a scripted
    clock the first epoch takes 100 s and 150 s are left after it: 2 epochs of 5, the
    schedule stretched over them (a schedule stepped past its end would raise)."""
    from dataclasses import replace

    from vision.training.train import CONFIGS, train_classifier

    X, R, S = _random_crops(300)
    cfg = replace(CONFIGS["tiny"], cls_epochs=5)
    times = iter([0.0, 100.0])
    net = train_classifier(X, R, S, cfg, 1, until=250.0, clock=lambda: next(times))
    printed = capsys.readouterr().out
    assert net.epochs_trained == 2
    assert "its first epoch took 100 s, so 2 epochs fit in the time budget instead of 5" in printed
    assert "classifier epoch 2/2" in printed and "epoch 3/" not in printed
    # Time enough: every epoch, nothing said.
    times = iter([0.0, 100.0])
    assert train_classifier(X, R, S, cfg, 1, until=10_000.0, clock=lambda: next(times)).epochs_trained == 5
    assert "fit in the time budget" not in capsys.readouterr().out


def test_classifiers_side_by_side_out_of_time_stop_after_one_epoch(tmp_path, capsys):
    """In the worker processes too: past their time, each classifier ends after its first
    epoch and says how many epochs it trained."""
    import time
    from dataclasses import replace

    from vision.training.train import CONFIGS, train_classifiers

    files = []
    for k in range(2):
        X, R, S = _random_crops(200, seed=k)
        files.append(tmp_path / f"crops{k}.npz")
        np.savez(files[-1], X=X, R=R, S=S)
    cfg = replace(CONFIGS["tiny"], cls_epochs=3)
    nets = train_classifiers(files, cfg, [1, 2], jobs=2, threads=2, until=time.time() - 1)
    assert [net.epochs_trained for net in nets] == [1, 1]
    nets = train_classifiers(files[:1], cfg, [1], jobs=1, threads=1)
    assert nets[0].epochs_trained == 3


def test_a_run_out_of_time_records_the_epochs_its_classifiers_trained(art, tmp_path, capsys, monkeypatch):
    """The check carried out by the command: with what follows the classifiers taking
    (as far as the command knows) the whole budget, they stop after their first epoch,
    and model.json says so."""
    from vision.training import train as T

    hours = 1.0
    monkeypatch.setattr(T, "FINISH_SECONDS", hours * 3600)
    out = tmp_path / "model"
    assert T.main(["--config", "tiny", "--out", str(out), "--data", str(tmp_path / "data"), "--workers", "1",
                   "--hours", str(hours), "--set", "cls_epochs=3", "--set", "pair_accept_threshold=0.6"]) == 0
    printed = capsys.readouterr().out
    assert "the recipe fits" in printed
    assert "time budget 1 h: the classifiers trained 1, 1 epochs instead of 3, to end in time" in printed
    meta = json.loads((out / "model.json").read_text())
    assert meta["classifier_epochs"] == [1, 1] and meta["config_values"]["cls_epochs"] == 1
    assert meta["budget"]["cut"] is True
    # A pair cut while it trained reads at the pair's threshold too.
    assert "two classifiers of 1, 1 epochs, where the recipe trains 2 of 3: they read at accept threshold 0.6" in printed
    assert meta["accept_threshold"] == 0.6


@pytest.mark.parametrize("args, why", [
    (["--hours", "0.0002"], "--hours 0.0002: even 2 detector steps, 1 refiner epoch and one classifier of 1 epoch"),
    (["--hours", "-1"], "--hours must be 0 (no limit) or more"),
    (["--hours", "nan"], "--hours must be 0 (no limit) or more"),
    (["--set", "cls_members=0"], "cls_members='0': must be a finite number of at least 1"),
    (["--set", "det_lr=-0.1"], "det_lr='-0.1': must be a finite number of at least 0"),
    (["--set", "hours=inf"], "hours='inf': must be a finite number of at least 0"),
    (["--set", "hidden_pip_below=1.5"], "hidden_pip_below='1.5': a fraction, at most 1"),
    (["--set", "hidden_rank_below=50"], "hidden_rank_below='50': a fraction, at most 1"),
    (["--set", "accept_threshold=2"], "accept_threshold='2': a fraction, at most 1"),
    (["--set", "pair_accept_threshold=1.2"], "pair_accept_threshold='1.2': a fraction, at most 1"),
    (["--set", "real_share=1"], "real_share='1': a fraction, under 1"),
    (["--set", "weak_heat=1.0"], "weak_heat='1.0': a fraction, under 1"),
    (["--set", "nonsense=1"], "--set: 'nonsense=1': expected FIELD=VALUE with one of the config's fields"),
    (["--set", "cls_members"], "expected FIELD=VALUE"),
    (["--set", "cls_members=two"], "cls_members='two': not a int"),
    (["--set", "bf16=maybe"], "bf16='maybe': not a bool"),
    (["--set", "views=1"], "views is not a number or a boolean"),
])
def test_a_budget_or_setting_that_cannot_be_met_is_refused_before_training(art, tmp_path, capsys, args, why):
    from vision.training.train import main as train_main

    try:
        code = train_main(["--config", "tiny", "--out", str(tmp_path / "model"), "--data", str(tmp_path / "data"),
                           "--workers", "1", *args])
    except SystemExit as e:   # argparse's refusals
        code = e.code
    assert code == 2 and why in capsys.readouterr().err
    assert not (tmp_path / "model").exists()


def test_scene_cache_is_redone_when_the_request_changes(art, tmp_path):
    from vision.training.data import generate_scenes, load_scenes

    generate_scenes(tmp_path, 3, seed=1, decks=["letele"], width=160, height=120, workers=1, log=lambda m: None)
    (tmp_path / "detector.pt").write_bytes(b"stale")
    (tmp_path / "detector.json").write_text('{"seconds": 1}')
    first = load_scenes(tmp_path)
    assert first.images.shape == (3, 120, 160, 3) and len(first.indices) == 3
    # Same request: kept.  Another design list: the old scenes and detector go.
    generate_scenes(tmp_path, 3, seed=1, decks=["letele"], width=160, height=120, workers=1, log=lambda m: None)
    assert (tmp_path / "detector.pt").exists()
    generate_scenes(tmp_path, 2, seed=1, decks=["letele", "svgcards-bellot"], width=160, height=120, workers=1,
                    log=lambda m: None)
    assert not (tmp_path / "detector.pt").exists() and not (tmp_path / "detector.json").exists()
    second = load_scenes(tmp_path)
    assert second.images.shape[0] == 2
    # Every record holds what RECORD_FIELDS says, which is part of the request: scenes
    # cached when the records held less are rendered anew, not trained on without it.
    assert all(tuple(r) == RECORD_FIELDS for recs in second.indices for r in recs) and second.indices[0]
    spec = json.loads((tmp_path / "scenes.json").read_text())
    assert spec["records"] == list(RECORD_FIELDS)
    (tmp_path / "scenes.json").write_text(json.dumps({k: v for k, v in spec.items() if k != "records"}))
    shard = tmp_path / "shard0000.npz"
    stamp = shard.stat().st_mtime_ns
    generate_scenes(tmp_path, 2, seed=1, decks=["letele", "svgcards-bellot"], width=160, height=120, workers=1,
                    log=lambda m: None)
    assert shard.stat().st_mtime_ns != stamp and json.loads((tmp_path / "scenes.json").read_text()) == spec
    # Scenes seen by leaning cameras or in dim rooms are another request; none of them, the same.
    generate_scenes(tmp_path, 2, seed=1, decks=["letele", "svgcards-bellot"], width=160, height=120, workers=1,
                    log=lambda m: None, views=0.0, dim=0.0)
    assert json.loads((tmp_path / "scenes.json").read_text()) == spec
    stamp = shard.stat().st_mtime_ns
    generate_scenes(tmp_path, 2, seed=1, decks=["letele", "svgcards-bellot"], width=160, height=120, workers=1,
                    log=lambda m: None, views=0.5, dim=0.25)
    assert shard.stat().st_mtime_ns != stamp
    assert json.loads((tmp_path / "scenes.json").read_text()) == {**spec, "views": 0.5, "dim": 0.25}


def test_glyph_reshaping_keeps_the_crop_and_its_centre_but_changes_the_glyph():
    import torch

    from vision.training.train import _augment, _reshape_glyphs

    # A dark vertical bar ("1") on paper, centred in the crop.
    x = torch.ones(64, 3, PATCH_H, PATCH_W)
    x[:, :, 12:36, 14:18] = 0.1
    g = torch.Generator().manual_seed(3)
    y = _reshape_glyphs(x, g)
    assert y.shape == x.shape and float(y.min()) >= 0.0 and float(y.max()) <= 1.0
    ink = (y.mean(dim=1) < 0.5).float()                      # n x H x W
    cols = torch.arange(PATCH_W).float()
    centre_x = (ink.sum(dim=1) * cols).sum(dim=1) / ink.sum(dim=(1, 2))
    assert torch.all((centre_x - 15.5).abs() < 2.0), "the glyph left the crop's centre"
    widths = ink.sum(dim=(1, 2)) / ink.any(dim=2).sum(dim=1)  # mean ink width per inked row
    assert float(widths.max() - widths.min()) >= 1.5, "stroke weight and width did not vary"
    # Without reshaping the photometric jitter alone leaves the glyph where and as wide as it was.
    z = _augment(x, torch.Generator().manual_seed(3), reshape=False)
    assert torch.all((z.mean(dim=1) < 0.5) == (x.mean(dim=1) < 0.5))


@pytest.mark.parametrize("shape", [(1, 1, 1, 1), (1, 1, 1, 5), (2, 3, 2, 2), (3, 3, 7, 1), (64, 3, PATCH_H, PATCH_W)])
def test_the_fast_3x3_maximum_is_max_pooling_bit_for_bit(shape):
    """The glyph reshaping's stroke-weight step uses _max3x3 for speed; the
    training data must stay what max_pool2d made it, edges and ties included."""
    import doctest

    import torch
    import torch.nn.functional as F

    from vision.training import train
    from vision.training.train import _max3x3

    g = torch.Generator().manual_seed(sum(shape))
    for x in (torch.randn(shape, generator=g), torch.randint(0, 3, shape, generator=g).float()):  # ties too
        assert torch.equal(_max3x3(x), F.max_pool2d(x, 3, 1, 1))
        assert torch.equal(-_max3x3(-x), -F.max_pool2d(-x, 3, 1, 1))
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner()
    for test in finder.find(train._max3x3, "_max3x3", globs={"torch": torch, "_max3x3": _max3x3}):
        runner.run(test)
    assert runner.failures == 0 and runner.tries >= 1


class _Det:
    """A detection as vision.recogniser.decode_indices gives it (geometry only)."""

    def __init__(self, centre, angle, height):
        self.centre, self.angle, self.height = centre, angle, height


def test_detector_crops_label_what_the_detector_found(art):
    from vision.training.data import detector_crops

    img, recs = _scene()
    a, b = recs
    dets = [
        _Det((a["cx"] + 0.2 * a["h"], a["cy"]), a["angle"] + 10, a["h"] * 1.2),  # a fair detection: 9D
        _Det((b["cx"], b["cy"]), b["angle"] + 180, b["h"]),                       # upside down: refuse
        _Det((b["cx"], b["cy"]), b["angle"] + 45, b["h"]),                        # neither: left out
        _Det((a["cx"] + 0.8 * a["h"], a["cy"]), a["angle"], a["h"]),              # beside an index: left out
        _Det((5.0, 5.0), 0.0, a["h"]),                                            # a false alarm: refuse
    ]
    X, R, S = detector_crops(SceneSet(img[None], [recs]), [dets], seed=0)
    assert X.shape == (3, PATCH_H, PATCH_W, 3) and X.dtype == np.uint8
    assert list(R) == [RANKS.index("9"), NOT_INDEX, NOT_INDEX]
    assert list(S) == [SUITS.index("D"), -1, -1]
    # Nothing detected: no crops, and arrays that still concatenate.
    X0, R0, S0 = detector_crops(SceneSet(img[None], [recs]), [[]], seed=0)
    assert X0.shape == (0, PATCH_H, PATCH_W, 3) and len(R0) == len(S0) == 0


def test_training_decodes_detections_exactly_as_the_recogniser(art, tmp_path):
    """The crops the classifier learns from must sit where the run-time detector's readings sit."""
    import torch

    from vision.recogniser import Recogniser
    from vision.training.models import IndexClassifier, IndexDetector
    from vision.training.train import detect_scenes, export_detector, export_onnx

    torch.manual_seed(0)
    det, cls = IndexDetector(0.5).eval(), IndexClassifier(0.5, standardised=True).eval()
    export_detector(det, tmp_path / "d.onnx")
    export_onnx(cls, torch.zeros(1, 3, PATCH_H, PATCH_W), tmp_path / "c.onnx", dynamic_hw=False)
    (tmp_path / "model.json").write_text(json.dumps({"detector": "d.onnx", "det_input": "centred",
                                                     "classifier": "c.onnx"}))
    img, recs = _scene()
    img = np.ascontiguousarray(np.concatenate([img, img[::-1], img], axis=1))  # 960 wide: scaled to 640
    # An untrained detector is unsure everywhere: a low threshold gives many peaks to compare.
    rec = Recogniser(tmp_path, heat_threshold=0.02)
    expected = rec.detect_indices(img)
    got = detect_scenes(det, SceneSet(img[None], [recs]), 0.02)[0]
    assert len(expected) >= 5 and len(got) == len(expected)
    for e in expected:  # peaks of (almost) equal heat may come in another order
        g = min(got, key=lambda g: np.hypot(g.centre[0] - e.centre[0], g.centre[1] - e.centre[1]))
        assert g.centre == pytest.approx(e.centre, abs=0.05) and g.height == pytest.approx(e.height, rel=1e-3)
        assert g.angle == pytest.approx(e.angle, abs=0.05) and g.card_centre == pytest.approx(e.card_centre, abs=0.1)


def test_refiner_samples_point_from_the_crop_to_the_annotated_index(art):
    from vision.index_geometry import REFINE_PATCH_H, REFINE_PATCH_W, apply_refinement
    from vision.training.data import refiner_samples

    img, recs = _scene()
    a = recs[0]
    off = _Det((a["cx"] + 0.2 * a["h"], a["cy"] - 0.1 * a["h"]), a["angle"] + 12, a["h"] * 1.2)
    dets = [off, _Det((5.0, 5.0), 0.0, a["h"])]  # the second lies on no index: no sample
    X, Y = refiner_samples(SceneSet(img[None], [recs]), [dets], seed=0, jitter_copies=3)
    assert X.shape == (2 * 3 + 1, REFINE_PATCH_H, REFINE_PATCH_W, 3) and X.dtype == np.uint8
    assert Y.shape == (7, 4) and Y.dtype == np.float32
    # The detection's sample (last) leads back to the annotated index.
    centre, angle, height = apply_refinement((off.centre, off.angle, off.height), Y[-1])
    assert centre == pytest.approx((a["cx"], a["cy"]), abs=1e-3)
    assert angle == pytest.approx(a["angle"], abs=1e-3) and height == pytest.approx(a["h"], rel=1e-5)
    # The jittered ones are cut off the index, within what the recogniser lets the refiner correct.
    from vision.recogniser import REFINE_LIMITS
    assert np.all(np.abs(Y[:-1]) <= REFINE_LIMITS) and np.all(np.abs(Y[:-1]).max(axis=0) > 0.01)
    X0, Y0 = refiner_samples(SceneSet(img[None], [recs]), [[]], seed=0, jitter_copies=0)
    assert X0.shape == (0, REFINE_PATCH_H, REFINE_PATCH_W, 3) and Y0.shape == (0, 4)


def test_training_refines_detections_exactly_as_the_recogniser(art, tmp_path):
    """The refiner's correction is the same in training (torch) and at run time (cv2.dnn),
    and the card centre that the detector estimated moves with its index."""
    import torch

    from vision.index_geometry import REFINE_PATCH_H, REFINE_PATCH_W, glyph_axes
    from vision.recogniser import IndexReading, Recogniser
    from vision.training.models import IndexClassifier, IndexDetector, IndexRefiner
    from vision.training.train import export_onnx, refine_detections

    torch.manual_seed(0)
    det, cls = IndexDetector(0.5).eval(), IndexClassifier(0.5, standardised=True).eval()
    ref = IndexRefiner(0.5)
    with torch.no_grad():  # an untrained refiner says "no change": make it say something
        ref.fc[-1].bias.copy_(torch.tensor([0.1, -0.05, 0.2, 0.1]))
    ref.eval()
    export_onnx(det, torch.zeros(1, 3, 320, 320), tmp_path / "d.onnx", dynamic_hw=True)
    export_onnx(cls, torch.zeros(1, 3, PATCH_H, PATCH_W), tmp_path / "c.onnx", dynamic_hw=False)
    export_onnx(ref, torch.zeros(1, 3, REFINE_PATCH_H, REFINE_PATCH_W), tmp_path / "r.onnx", dynamic_hw=False)
    (tmp_path / "model.json").write_text(json.dumps(
        {"detector": "d.onnx", "classifier": "c.onnx", "refiner": "r.onnx", "refine_steps": 2}))
    img, recs = _scene()
    rec = Recogniser(tmp_path)
    readings = [IndexReading((r["cx"] + 3, r["cy"] - 2), r["angle"] + 5, r["h"] * 0.9, (r["card_cx"], r["card_cy"]),
                             r["card_h"], 0.9) for r in recs]
    before = [(ix.centre, ix.angle, ix.height, ix.card_centre, ix.card_height) for ix in readings]
    rec.refine(img, readings)
    got = refine_detections(ref, SceneSet(img[None], [recs]), [[IndexReading(*b, 0.9) for b in before]], steps=2)[0]
    for ix, g, (c0, a0, h0, cc0, ch0) in zip(readings, got, before):
        assert ix.centre != pytest.approx(c0, abs=0.5), "the refiner moved nothing"
        assert g.centre == pytest.approx(ix.centre, abs=0.05) and g.angle == pytest.approx(ix.angle, abs=0.05)
        assert g.height == pytest.approx(ix.height, rel=1e-3)
        # The card centre keeps its place in the index's frame, in index heights.
        frame = lambda c, a, h, p: (np.dot(np.subtract(p, c), glyph_axes(a)[0]) / h,  # noqa: E731
                                    np.dot(np.subtract(p, c), glyph_axes(a)[1]) / h)
        assert frame(ix.centre, ix.angle, ix.height, ix.card_centre) == pytest.approx(frame(c0, a0, h0, cc0), abs=1e-6)
        assert ix.card_height / ix.height == pytest.approx(ch0 / h0)


def test_half_weights_halve_the_file_and_both_engines_read_it_as_before(tmp_path):
    """store_half_weights: float16 weights, cast back to float32 at load; the outputs move
    only by the rounding, under either engine."""
    import torch

    from vision.inference import OnnxNet
    from vision.training.models import IndexClassifier
    from vision.training.train import export_onnx

    torch.manual_seed(0)
    net = IndexClassifier(0.5)
    example = torch.zeros(1, 3, PATCH_H, PATCH_W)
    full, half = tmp_path / "full.onnx", tmp_path / "half.onnx"
    export_onnx(net, example, full, dynamic_hw=False)
    export_onnx(net, example, half, dynamic_hw=False, half_weights=True)
    assert half.stat().st_size < 0.6 * full.stat().st_size
    x = np.random.default_rng(0).standard_normal((7, 3, PATCH_H, PATCH_W)).astype(np.float32)
    with torch.no_grad():
        expected = net(torch.from_numpy(x)).numpy()
    for engine in ("onnxruntime", "opencv"):
        got = OnnxNet(half, engine, threads=1)(x)
        assert got.shape == expected.shape
        assert np.abs(got - expected).max() < 0.01 * max(1.0, np.abs(expected).max())
        assert not np.array_equal(got, OnnxNet(full, engine, threads=1)(x)), "the weights were not rounded"


@pytest.mark.parametrize("network, shape, half", [
    ("IndexDetector", (1, 3, 96, 128), False),
    ("IndexRefiner", (5, 3, 0, 0), False),
    ("IndexClassifier", (5, 3, PATCH_H, PATCH_W), True),
])
def test_exported_weights_load_back_into_the_network(tmp_path, network, shape, half):
    """load_onnx_weights undoes export_onnx, batch normalisation folded in and half
    weights included: the network loaded from the file computes what the file does."""
    import torch

    from vision.index_geometry import REFINE_PATCH_H, REFINE_PATCH_W
    from vision.inference import OnnxNet
    from vision.training import models
    from vision.training.train import export_onnx, load_onnx_weights

    if network == "IndexRefiner":
        shape = (5, 3, REFINE_PATCH_H, REFINE_PATCH_W)
    make = getattr(models, network)
    torch.manual_seed(0)
    net = make(0.5)
    with torch.no_grad():   # trained-looking normalisations, so that folding them matters
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5), m.bias.uniform_(-0.3, 0.3)
                m.running_mean.uniform_(-0.2, 0.2), m.running_var.uniform_(0.5, 2.0)
    path = tmp_path / "net.onnx"
    export_onnx(net, torch.zeros(1, *shape[1:]), path, dynamic_hw=network == "IndexDetector", half_weights=half)

    loaded = make(0.5)
    load_onnx_weights(loaded, path)
    loaded.eval()
    x = np.random.default_rng(1).random(shape, dtype=np.float32)
    with torch.no_grad():
        got = loaded(torch.from_numpy(x)).numpy()
    expected = OnnxNet(path, "onnxruntime", threads=1)(x)
    assert got.shape == expected.shape
    assert np.abs(got - expected).max() < 1e-4 * max(1.0, np.abs(expected).max())

    with pytest.raises(ValueError, match="folded convolutions|in the file"):
        load_onnx_weights(make(1.0), path)    # another width: the file does not fit


def test_the_exported_detector_takes_centred_input_and_loads_back(tmp_path):
    """export_detector leaves the input's centring out of the file (the recogniser
    does it); the network loaded back (``--detector-from``) centres 0..1 input
    itself, and computes what the file computes on the centred image."""
    import onnx
    import torch

    from vision.inference import OnnxNet
    from vision.recogniser import detector_blob
    from vision.training.models import IndexDetector
    from vision.training.train import export_detector, load_onnx_weights

    torch.manual_seed(0)
    net = IndexDetector(0.5).eval()
    with torch.no_grad():   # trained-looking normalisations (an untrained one's equal biases are shared)
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.bias.uniform_(-0.3, 0.3), m.running_var.uniform_(0.5, 2.0)
    path = tmp_path / "d.onnx"
    export_detector(net, path)
    ops = [n.op_type for n in onnx.load(str(path)).graph.node]
    assert "Conv" in ops and not {"Sub", "Mul"} & set(ops)
    assert isinstance(net.norm, type(IndexDetector(0.5).norm)), "the network keeps its normalisation"
    small = np.random.default_rng(2).integers(0, 256, (96, 128, 3), dtype=np.uint8)
    loaded = IndexDetector(0.5)
    load_onnx_weights(loaded, path)
    loaded.eval()
    with torch.no_grad():
        got = loaded(torch.from_numpy(detector_blob(small))).numpy()
    expected = OnnxNet(path, "onnxruntime", threads=1)(detector_blob(small, centred=True))
    assert np.abs(got - expected).max() < 1e-4 * max(1.0, np.abs(expected).max())


def test_detector_channels_come_from_the_config_and_fit_the_committed_detector():
    """IndexDetector takes its four stages' channels (scaled by width); the committed detector is
    the ``full`` recipe's shape, so ``--detector-from vision/models/index_detector.onnx`` loads it,
    and a detector of other channels is refused with the layer that does not fit."""
    import torch

    from vision.recogniser import MODEL_DIR
    from vision.training.models import IndexDetector
    from vision.training.train import CONFIGS, load_onnx_weights

    def widths(net):
        return [m.out_channels for m in net.modules() if isinstance(m, torch.nn.Conv2d)]

    assert widths(IndexDetector(channels=(16, 32, 48, 64)))[:6] == [16, 32, 32, 48, 48, 64]
    assert widths(IndexDetector(0.5, (16, 32, 48, 64)))[:6] == [8, 16, 16, 24, 24, 32]
    assert widths(IndexDetector())[:6] == [16, 24, 24, 40, 40, 64]   # the first detector's, by default
    with pytest.raises(ValueError, match="4 stages of channels, not 3"):
        IndexDetector(channels=(16, 32, 48))
    full = CONFIGS["full"]
    net = IndexDetector(full.det_width, full.det_channels)
    load_onnx_weights(net, MODEL_DIR / "index_detector.onnx")
    with pytest.raises(ValueError, match=r"s2\.0\.0\.weight is \(32, 16, 3, 3\) in the file"):
        load_onnx_weights(IndexDetector(), MODEL_DIR / "index_detector.onnx")


def test_bfloat16_training_is_used_only_where_the_cpu_computes_it(monkeypatch):
    """fast_math: asked for by the config, and only where oneDNN says the CPU
    computes bfloat16 natively; a CPU that does not trains in float32."""
    import dataclasses

    import torch

    from vision.training import train as T

    cfg = dataclasses.replace(T.CONFIGS["tiny"], bf16=True)
    assert T.CONFIGS["tiny"].bf16, "the tests train in bfloat16 where the CPU can"
    assert T.CONFIGS["full"].bf16, "the committed model's recipe trains in bfloat16 where the CPU can"
    assert T.fast_math(dataclasses.replace(cfg, bf16=False)) is False
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: False)
    assert T.fast_math(cfg) is False
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: True)
    assert T.fast_math(cfg) is True
    monkeypatch.setattr(torch.backends.mkldnn, "is_available", lambda: False)
    assert T.fast_math(cfg) is False


@pytest.mark.parametrize("bf16", [False, True])
def test_training_precision_and_memory_layout(bf16, monkeypatch):
    """_train_mode: the forward pass runs in bfloat16 under fast_math, float32
    otherwise, on channels-last weights; _trained gives back a network in the
    plain layout that computes in float32, as the exporter and the engines expect."""
    import dataclasses

    import torch

    from vision.training import train as T
    from vision.training.models import IndexClassifier

    monkeypatch.setattr(T, "fast_math", lambda cfg: cfg.bf16)
    cfg = dataclasses.replace(T.CONFIGS["tiny"], bf16=bf16)
    torch.manual_seed(0)
    net = IndexClassifier(0.5, standardised=True)
    precision = T._train_mode(net, cfg)
    conv = net.features[0][0].weight
    assert conv.is_contiguous(memory_format=torch.channels_last) and not conv.is_contiguous()
    x = torch.randn(4, 3, PATCH_H, PATCH_W)
    with precision():
        out = net(T._channels_last(x))
    assert out.dtype == (torch.bfloat16 if bf16 else torch.float32)
    assert conv.dtype == torch.float32, "the weights themselves stay in float32"
    T._trained(net)
    assert conv.is_contiguous() and not net.training
    with torch.no_grad():
        assert net(x).dtype == torch.float32


def test_held_out_crops_are_read_in_batches_as_one_batch_reads_them(monkeypatch):
    """The progress lines' held-out crops go through the network a few at a time, under the
    training's precision: in float32 the outputs are those of one batch of all of them, in
    the held-out order, the last batch short."""
    import dataclasses

    import torch

    from vision.training import train as T
    from vision.training.models import IndexClassifier

    monkeypatch.setattr(T, "fast_math", lambda cfg: cfg.bf16)
    monkeypatch.setattr(T, "VALIDATION_BATCH", 4)
    torch.manual_seed(0)
    net = IndexClassifier(0.5, standardised=True)
    precision = T._train_mode(net, dataclasses.replace(T.CONFIGS["tiny"], bf16=False))
    net.eval()
    Xt = torch.from_numpy(np.random.default_rng(0).integers(0, 256, (12, 3, PATCH_H, PATCH_W), dtype=np.uint8))
    val = np.array([9, 2, 7, 0, 11, 5, 3, 8, 1, 6])
    out = T._held_out_outputs(net, Xt, val, T._standardise, precision)
    with torch.no_grad():
        whole = net(T._standardise(Xt[torch.from_numpy(val)].float() / 255.0))
    assert out.shape == (10, whole.shape[1]) and out.dtype == torch.float32
    assert torch.allclose(out, whole, atol=1e-5)
    assert not torch.allclose(out[:3], whole[1:4], atol=1e-5), "rows in another order differ"


def test_the_committed_model_is_what_the_full_recipe_trains():
    """model.json of the committed model records the recipe it was trained with: it must be
    `full` as it stands, so that a change to `full` comes with a model trained by it (or the
    change is seen here), and the recogniser reads at `full`'s accept threshold."""
    import dataclasses

    from vision.recogniser import MODEL_DIR, Recogniser
    from vision.training.train import CONFIGS

    meta = json.loads((MODEL_DIR / "model.json").read_text())
    full = json.loads(json.dumps(dataclasses.asdict(CONFIGS["full"])))   # tuples as JSON writes them
    assert meta["config"] == "full"
    assert meta["config_values"] == full
    assert meta["accept_threshold"] == CONFIGS["full"].accept_threshold
    assert Recogniser().accept_threshold == CONFIGS["full"].accept_threshold
    assert len(meta["classifier"]) == CONFIGS["full"].cls_members
    # ... and then had its classifiers tuned by vision.training.tune as it now stands (session 54),
    # so that a change to the tuning's recipe comes with a model tuned by it too.
    from vision.training import tune
    (tuned,) = meta["tuned"]
    assert (tuned["scenes"], tuned["epochs"], tuned["lr"], tuned["squeeze_share"], tuned["squeeze_least"],
            tuned["seeds"]) == (tune.SCENES, tune.EPOCHS, tune.LR, tune.SHARE, tune.LEAST,
                                [tune.SEED + k for k in range(CONFIGS["full"].cls_members)])
