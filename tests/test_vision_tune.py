"""Tuning a trained model's classifiers to read squeezed indices (vision/training/tune.py):
the 8-bit classifiers read back into torch, the squeeze itself, and the command end to end
on a copy of the committed model."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from vision.index_geometry import PATCH_H, PATCH_W
from vision.recogniser import MODEL_DIR
from vision.synth.decks import available_decks


@pytest.fixture(scope="module")
def art():
    if "letele" not in available_decks():
        pytest.fail("card art not rendered: run scripts/fetch-art.sh")


def _committed_classifiers() -> list[str]:
    meta = json.loads((MODEL_DIR / "model.json").read_text())
    return meta["classifier"] if isinstance(meta["classifier"], list) else [meta["classifier"]]


def _crops(n: int = 48, seed: int = 0) -> np.ndarray:
    """Index crops as the recogniser hands them to a classifier: standardised."""
    from vision.index_geometry import crop_index, standardise_crops
    from vision.synth.scene import READABLE_FRACTION, random_scene_spec, render_scene
    from vision.training.data import _index_records

    rng = np.random.default_rng(seed)
    crops = []
    while len(crops) < n:
        img, ann = render_scene(random_scene_spec(rng, available_decks()[:3]), rng)
        for r in _index_records(ann):
            if r["visible"] >= READABLE_FRACTION:
                crops.append(crop_index(img, (r["cx"], r["cy"]), r["angle"], r["h"]))
    x = np.stack(crops[:n]).astype(np.float32) / 255.0
    return standardise_crops(x.transpose(0, 3, 1, 2)).astype(np.float32)


def test_an_8bit_classifier_reads_back_into_torch_as_the_file_computes(art):
    """load_onnx_weights on a classifier stored in 8 bits (QLinearConv, QGemm): its integers
    times their scales, less the padded input channel.  The network then reads what the
    file reads; the difference left is the file's 8-bit activations."""
    import torch

    from vision.inference import OnnxNet
    from vision.training.models import IndexClassifier
    from vision.training.train import load_onnx_weights

    x = _crops()
    for name in _committed_classifiers():
        net = IndexClassifier(1.5, standardised=True)
        load_onnx_weights(net, MODEL_DIR / name)
        net.eval()
        with torch.no_grad():
            got = net(torch.from_numpy(x)).numpy()
        expected = OnnxNet(MODEL_DIR / name, "onnxruntime", threads=1)(x)
        scale = np.abs(expected).max()
        assert np.abs(got - expected).max() < 0.06 * scale, name
        assert (got[:, :14].argmax(1) == expected[:, :14].argmax(1)).mean() >= 0.95, name
        assert (got[:, 14:].argmax(1) == expected[:, 14:].argmax(1)).mean() >= 0.95, name
        assert net.features[0][0].in_channels == 3   # (the file's first convolution reads 4)
    with pytest.raises(ValueError, match="folded convolutions|in the file|no weights"):
        load_onnx_weights(IndexClassifier(1.0, standardised=True), MODEL_DIR / _committed_classifiers()[0])


def _bar(vertical: bool):
    import torch

    x = torch.zeros(1, 3, PATCH_H, PATCH_W)
    if vertical:
        x[..., 8:40, 15:17] = 1.0     # through the centre, along the crop's up vector
    else:
        x[..., 23:25, 6:26] = 1.0     # across it
    return x


def test_the_squeeze_keeps_an_index_upright_and_as_tall_and_changes_its_width():
    """squeeze_indices: the crop's vertical through its centre (the up vector the refiner
    finds) stays where and as long as it was, whatever the squeeze; a stroke across the
    index is narrowed, widened or slanted."""
    import torch

    from vision.training.tune import squeeze_indices

    g = torch.Generator().manual_seed(3)
    upright = _bar(vertical=True).repeat(64, 1, 1, 1)
    kept = squeeze_indices(upright, g, 0.5)[:, 0]
    # Its middle line stays on the crop's centre (x = 16), its ends where they were
    # (rows 8 to 39); its width is what may change.
    columns = torch.arange(PATCH_W, dtype=torch.float32) + 0.5
    assert ((kept * columns).sum(dim=(1, 2)) / kept.sum(dim=(1, 2)) - 16.0).abs().max() < 0.3
    rows = kept.sum(dim=2) > 0.8      # (the bar is 2 px wide; a squeeze leaves at least half)
    first = rows.float().argmax(dim=1)
    last = PATCH_H - 1 - rows.flip(1).float().argmax(dim=1)
    assert (first - 8).abs().max() <= 1 and (last - 39).abs().max() <= 1
    widths = kept[:, 24].sum(dim=1)
    assert widths.min() < 1.6 and widths.max() > 2.4     # narrowed by some squeezes, widened by others
    across = _bar(vertical=False).repeat(64, 1, 1, 1)
    moved = (squeeze_indices(across, g, 0.5) - across).abs().amax(dim=(1, 2, 3))
    assert (moved > 0.5).float().mean() > 0.5      # most squeezes move the stroke across the index
    # and the rows it lies on change with it: slanted or its ends moved.
    assert not torch.allclose(squeeze_indices(across, torch.Generator().manual_seed(4), 0.5).sum(dim=(0, 1, 3)),
                              across.sum(dim=(0, 1, 3)))


def _small_model(tmp_path):
    """A copy of the committed model that records two generated designs instead of 128,
    so that the test renders two (the tuning renders what the model was trained on)."""
    src = tmp_path / "model"
    shutil.copytree(MODEL_DIR, src)
    meta = json.loads((src / "model.json").read_text())
    meta["generated_designs"] = 2
    (src / "model.json").write_text(json.dumps(meta, indent=1) + "\n")
    return src, meta


def test_tuning_with_no_learning_rate_writes_the_model_it_read(art, tmp_path, capfd):
    """The command end to end on a few scenes: each classifier starts from the model's own
    weights (read back from 8 bits), is stored in 8 bits again, and the rest of the model
    is copied as it was; model.json keeps its training record and gains a ``tuned`` one.
    With a learning rate of 0 nothing is learnt, so the tuned classifiers read as before
    (up to the new 8-bit ranges, measured on their own calibration scenes)."""
    import onnx

    from vision.inference import OnnxNet
    from vision.recogniser import Recogniser
    from vision.training.tune import main

    src, meta = _small_model(tmp_path)
    out = tmp_path / "tuned"
    assert main(["--model", str(src), "--out", str(out), "--scenes", "3", "--epochs", "1", "--lr", "0",
                 "--calibration-scenes", "3", "--data", str(tmp_path / "data"), "--workers", "1"]) == 0
    tuned = json.loads((out / "model.json").read_text())
    assert tuned["config_values"] == meta["config_values"] and tuned["classifier"] == meta["classifier"]
    assert len(tuned["tuned"]) == len(meta.get("tuned", [])) + 1   # (a record added to the source's)
    record = tuned["tuned"][-1]
    assert (record["scenes"], record["epochs"], record["lr"]) == (3, 1, 0.0)
    assert record["seeds"] == [601, 602, 603][:len(_committed_classifiers())]
    assert tuned["quantised"]["calibration"]["scenes"] == 3
    # Only the classifiers were stored in 8 bits again; the record of the detector's and the
    # refiner's 8 bits (calibrated on other scenes, 100) is kept whole beside it.
    assert tuned["quantised"]["networks"] == ["classifier", "detector", "refiner"]
    assert set(tuned["quantised"]["calibration"]["inputs"]) == {"classifier"}
    assert tuned["quantised"]["earlier"] == [meta["quantised"]]
    for name in ("index_detector.onnx", "index_refiner.onnx"):
        assert (out / name).read_bytes() == (src / name).read_bytes(), name
    x = _crops(40, seed=1)
    for name in _committed_classifiers():
        assert any(n.op_type == "QLinearConv" for n in onnx.load(str(out / name)).graph.node)
        before, after = (OnnxNet(d / name, "onnxruntime", threads=1)(x) for d in (src, out))
        assert np.abs(after - before).max() < 0.1 * np.abs(before).max(), name
        assert (after[:, :14].argmax(1) == before[:, :14].argmax(1)).mean() >= 0.9, name
    assert "tuned 1/1" in capfd.readouterr().out   # (said by the worker processes)
    data = tmp_path / "data"
    assert list(data.rglob("shard*.npz")) and not list(data.rglob("*.tmp.npz"))
    assert not list(data.rglob("tune-crops.npz")) and not list(out.glob(".*.tuning"))
    assert record["seconds"] >= 0
    Recogniser(out)   # loads


def test_tuning_refuses_what_it_cannot_tune_before_any_work(art, tmp_path, capsys):
    from vision.training.tune import main

    data = tmp_path / "data"
    assert main(["--model", str(tmp_path / "missing"), "--out", str(tmp_path / "o"), "--data", str(data)]) == 2
    assert capsys.readouterr().err.startswith("tune: ")
    src, meta = _small_model(tmp_path)
    (src / "model.json").write_text(json.dumps({k: v for k, v in meta.items() if k != "config_values"}))
    assert main(["--model", str(src), "--out", str(tmp_path / "o"), "--data", str(data)]) == 2
    assert "config_values" in capsys.readouterr().err
    for broken, why in (({**meta, "classifier": []}, "names no classifier"),
                        ({**meta, "quantised": {"networks": "classifier"}}, "calibrated"),
                        ([1, 2], "not a model's record")):
        (src / "model.json").write_text(json.dumps(broken))
        assert main(["--model", str(src), "--out", str(tmp_path / "o"), "--data", str(data)]) == 2
        assert why in capsys.readouterr().err, why
    (src / "model.json").write_text(json.dumps(meta))
    (tmp_path / "a-file").write_text("")
    assert main(["--model", str(src), "--out", str(tmp_path / "a-file"), "--data", str(data)]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert not (tmp_path / "o").exists() and not data.exists()
    for args in (["--share", "1.5"], ["--least", "0"], ["--epochs", "0"], ["--lr", "nan"]):
        with pytest.raises(SystemExit) as refused:
            main(["--model", str(src), *args])
        assert refused.value.code == 2, args
