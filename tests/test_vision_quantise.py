"""The classifiers in 8 bits (vision.training.quantise): what the file computes, on
both engines, and the refusals.  The whole step, on a tiny trained model, runs in
tests/test_vision_training.py; the committed model's readings are the benchmark's."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from vision.index_geometry import PATCH_H, PATCH_W


def _classifier(tmp_path, seed=0, standardised=True, trained=True):
    """A small classifier with trained-looking normalisations (else fresh ones: zero
    biases, which the exporter shares through Identity nodes), exported as training
    does (float16 weights), and some crops for it (standardised noise)."""
    import torch

    from vision.training.models import IndexClassifier
    from vision.training.train import export_onnx

    torch.manual_seed(seed)
    net = IndexClassifier(0.5, standardised)
    with torch.no_grad():
        for m in net.modules() if trained else ():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5), m.bias.uniform_(-0.3, 0.3)
                m.running_mean.uniform_(-0.2, 0.2), m.running_var.uniform_(0.5, 2.0)
    net.eval()
    path = tmp_path / "cls.onnx"
    export_onnx(net, torch.zeros(1, 3, PATCH_H, PATCH_W), path, dynamic_hw=False, half_weights=True)
    rng = np.random.default_rng(seed)
    crops = rng.standard_normal((600, 3, PATCH_H, PATCH_W)).astype(np.float32)
    return path, crops


@pytest.mark.parametrize("trained", [True, False])
def test_float_graph_undoes_half_weights_and_computes_the_same(tmp_path, trained):
    import onnx

    from vision.inference import OnnxNet
    from vision.training.quantise import float_graph, quantise_network

    path, crops = _classifier(tmp_path, trained=trained)
    shared = any(n.op_type == "Identity" for n in onnx.load(str(path)).graph.node)
    assert shared == (not trained)   # (what this test is for: both kinds of file)
    model = float_graph(path)
    assert not any(n.op_type in ("Cast", "Identity") for n in model.graph.node)
    assert {o.version for o in model.opset_import if o.domain in ("", "ai.onnx")} == {13}
    plain = tmp_path / "plain.onnx"
    plain.write_bytes(model.SerializeToString())
    x = crops[:9]
    assert np.abs(OnnxNet(plain, "onnxruntime", threads=1)(x) - OnnxNet(path, "onnxruntime", threads=1)(x)).max() < 1e-5
    quantise_network(path, tmp_path / "small.onnx", crops[:50])   # (it failed on shared weights once)


@pytest.mark.parametrize("standardised", [True, False])
def test_an_8_bit_classifier_reads_as_the_float_one_and_both_engines_agree(tmp_path, standardised):
    """Its logits stay near the float network's (the same best rank and suit on almost
    every crop), the file is half the float16 one's size, and OpenCV computes it as
    onnxruntime does: one file serves both engines.  (Models with crop_norm
    "standardise" have no normalisation in the network; older ones do.)"""
    import onnx

    from vision.index_geometry import NOT_INDEX
    from vision.inference import OnnxNet
    from vision.training.quantise import quantise_network

    path, crops = _classifier(tmp_path, standardised=standardised)
    small = tmp_path / "cls8.onnx"
    quantise_network(path, small, crops[:400])
    assert small.stat().st_size < 0.6 * path.stat().st_size
    ops = {n.op_type for n in onnx.load(str(small)).graph.node}
    assert "QLinearConv" in ops and "Conv" not in ops, ops
    x = crops[400:]   # crops the ranges were not measured on
    ref = OnnxNet(path, "onnxruntime", threads=1)(x)
    got = OnnxNet(small, "onnxruntime", threads=1)(x)
    spread = ref.max() - ref.min()
    assert np.abs(got - ref).max() < 0.1 * spread
    assert 0 < np.abs(got - ref).max(), "nothing was rounded"
    for part in (slice(0, NOT_INDEX + 1), slice(NOT_INDEX + 1, None)):
        assert (got[:, part].argmax(1) == ref[:, part].argmax(1)).mean() > 0.9
    # The same numbers, except that an input normalisation in float may round a value to the
    # next 8-bit step on one engine and not the other (measured: 0.001 on logits spread over 0.25).
    tolerance = 1e-4 * max(1.0, np.abs(got).max()) if standardised else 0.02 * spread
    assert np.abs(OnnxNet(small, "opencv")(x) - got).max() < tolerance


def test_the_first_convolution_gets_a_fourth_channel_that_changes_no_number(tmp_path, monkeypatch):
    """Quantising pads the first convolution's input to 4 channels (faster in onnxruntime):
    the file computes exactly what the unpadded one does, on both engines, and its
    input stays 3 channels."""
    import onnx
    from onnx import numpy_helper

    from vision.inference import OnnxNet
    from vision.training import quantise as Q

    path, crops = _classifier(tmp_path)
    padded, plain = tmp_path / "padded.onnx", tmp_path / "plain.onnx"
    Q.quantise_network(path, padded, crops[:200])
    monkeypatch.setattr(Q, "pad_input_channels", lambda model: False)
    Q.quantise_network(path, plain, crops[:200])
    model = onnx.load(str(padded))
    conv = next(n for n in model.graph.node if n.op_type == "QLinearConv")
    weights = {w.name: numpy_helper.to_array(w) for w in model.graph.initializer}
    assert weights[conv.input[3]].shape[1] == Q.PADDED_CHANNELS == 4
    # The added channel's weights are the zero point: weight 0 (unsigned_weights).
    assert (weights[conv.input[3]][:, 3:] == weights[conv.input[5]].reshape(-1, 1, 1, 1)).all()
    assert any(n.op_type == "Pad" for n in model.graph.node)
    assert model.graph.input[0].type.tensor_type.shape.dim[1].dim_value == 3
    x = crops[200:260]
    for engine in ("onnxruntime", "opencv"):
        assert np.array_equal(OnnxNet(padded, engine, threads=1)(x), OnnxNet(plain, engine, threads=1)(x)), engine
    # Padding twice, or padding a float network, does nothing.
    assert not Q.pad_input_channels(model)
    assert not Q.pad_input_channels(Q.float_graph(path))


def test_padding_a_model_quantised_before_changes_its_files_once_and_no_reading(tmp_path, monkeypatch, capsys):
    from vision.inference import OnnxNet
    from vision.training import quantise as Q

    path, crops = _classifier(tmp_path)
    monkeypatch.setattr(Q, "pad_input_channels", lambda model: False)
    monkeypatch.setattr(Q, "unsigned_weights", lambda model: False)
    Q.quantise_network(path, path, crops[:200])   # as quantised before session 27 (and 31)
    monkeypatch.undo()
    plain = path.read_bytes()
    (tmp_path / "model.json").write_text(json.dumps({"classifier": [path.name]}))
    with pytest.raises(Q.QuantiseError, match="not quantised"):
        Q.pad_classifiers(tmp_path)
    assert path.read_bytes() == plain
    (tmp_path / "model.json").write_text(json.dumps({"classifier": [path.name], "quantised": {"networks": "classifier"}}))
    # OpenCV computes int8 weights exactly on every CPU (onnxruntime does not on AVX2 alone).
    before = OnnxNet(path, "opencv")(crops[200:240])
    assert Q.main(["--model", str(tmp_path), "--pad"]) == 0
    printed = capsys.readouterr().out
    assert "padded to 4 input channels" in printed and "uint8 with zero point 128" in printed
    assert path.read_bytes() != plain
    assert np.array_equal(OnnxNet(path, "opencv")(crops[200:240]), before)
    after = OnnxNet(path, "onnxruntime", threads=1)(crops[200:240])
    assert np.abs(after - before).max() < 1e-4 * max(1.0, np.abs(before).max())
    record = json.loads((tmp_path / "model.json").read_text())["quantised"]
    assert record["padded_channels"] == 4 and record["weights"] == Q.WEIGHTS
    padded = path.read_bytes()
    assert Q.pad_classifiers(tmp_path, log=lambda m: None) == 0 and path.read_bytes() == padded


def _weights_and_zero_points(path):
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    inits = {w.name: numpy_helper.to_array(w) for w in model.graph.initializer}
    return [(inits[n.input[3]], inits[n.input[5]]) for n in model.graph.node
            if n.op_type in ("QLinearConv", "QGemm")]


def test_8_bit_weights_are_unsigned_and_compute_what_the_signed_ones_did(tmp_path, monkeypatch):
    """unsigned_weights: w + 128 with zero point 128, so that onnxruntime takes its exact
    path on CPUs without 8-bit dot products (its int8 one saturates there, session 31);
    the numbers are those of the int8 file, bit for bit, where computed exactly (OpenCV),
    and both engines agree on the new file on any CPU."""
    from vision.inference import OnnxNet
    from vision.training import quantise as Q

    path, crops = _classifier(tmp_path)
    signed, unsigned = tmp_path / "s8.onnx", tmp_path / "u8.onnx"
    Q.quantise_network(path, unsigned, crops[:200])
    monkeypatch.setattr(Q, "unsigned_weights", lambda model: False)
    Q.quantise_network(path, signed, crops[:200])
    monkeypatch.undo()
    layers = _weights_and_zero_points(unsigned)
    assert len(layers) >= 3
    for (w, zp), (w8, zp8) in zip(layers, _weights_and_zero_points(signed)):
        assert w.dtype == zp.dtype == np.uint8 and (zp == 128).all()
        assert w8.dtype == np.int8 and not zp8.any()
        assert np.array_equal(w.astype(np.int16) - 128, w8)
    x = crops[200:260]
    exact = OnnxNet(unsigned, "opencv")(x)
    assert np.array_equal(exact, OnnxNet(signed, "opencv")(x))
    got = OnnxNet(unsigned, "onnxruntime", threads=1)(x)
    # Within an 8-bit step of an activation that the engines' float requantising may round
    # either way (measured: 0.0002 on logits spread over 0.2); the saturating path was off
    # by a third of the spread.
    assert np.abs(got - exact).max() < 0.01 * (exact.max() - exact.min())
    # A file already unsigned, or a float one, is left alone.
    import onnx
    # Padding a network whose weights are unsigned already pads them with their zero point.
    monkeypatch.setattr(Q, "pad_input_channels", lambda model: False)
    Q.quantise_network(path, signed, crops[:200])          # unsigned, not padded
    monkeypatch.undo()
    model = onnx.load(str(signed))
    assert Q.pad_input_channels(model)
    onnx.save(model, str(tmp_path / "padded_after.onnx"))
    assert np.array_equal(OnnxNet(tmp_path / "padded_after.onnx", "opencv")(x), OnnxNet(signed, "opencv")(x))
    assert not Q.unsigned_weights(onnx.load(str(unsigned)))
    assert not Q.unsigned_weights(Q.float_graph(path))


def test_the_committed_classifiers_have_unsigned_weights():
    import json as _json

    from vision.recogniser import MODEL_DIR
    from vision.training import quantise as Q

    meta = _json.loads((MODEL_DIR / "model.json").read_text())
    assert meta["quantised"]["weights"] == Q.WEIGHTS
    for name in meta["classifier"]:
        for w, zp in _weights_and_zero_points(MODEL_DIR / name):
            assert w.dtype == np.uint8 and (zp == 128).all(), name


def test_quantising_in_place_overwrites_the_file(tmp_path):
    from vision.training.quantise import quantise_network

    path, crops = _classifier(tmp_path)
    before = path.read_bytes()
    quantise_network(path, path, crops[:100])
    assert path.read_bytes() != before and path.stat().st_size < 0.6 * len(before)


def _model_dir(tmp_path, **record):
    path, _ = _classifier(tmp_path)
    meta = {"classifier": [path.name], "trained_on": ["letele"], **record}
    (tmp_path / "model.json").write_text(json.dumps(meta))
    return tmp_path


def test_a_model_already_quantised_is_refused_and_left_as_it_is(tmp_path, capsys):
    from vision.training.quantise import QuantiseError, main, quantise_classifiers

    model = _model_dir(tmp_path, quantised={"networks": "classifier"})
    before = {p.name: p.read_bytes() for p in model.iterdir()}
    with pytest.raises(QuantiseError, match="already quantised"):
        quantise_classifiers(model, scenes=1)
    assert main(["--model", str(model), "--scenes", "1"]) == 2
    assert "already quantised" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in model.iterdir()} == before


def test_a_model_without_installed_training_designs_or_record_is_refused(tmp_path, monkeypatch, capsys):
    from vision.training import quantise as Q

    model = _model_dir(tmp_path)
    monkeypatch.setattr(Q, "available_decks", lambda: [])
    with pytest.raises(Q.QuantiseError, match="fetch-art"):
        Q.quantise_classifiers(model, scenes=1)
    (model / "model.json").write_text("{not json")
    assert Q.main(["--model", str(model)]) == 2
    assert "cannot read the model's record" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        Q.main(["--model", str(model), "--scenes", "0"])


def test_a_missing_classifier_or_a_failure_half_way_leaves_the_model_as_it_was(tmp_path, monkeypatch):
    from vision.training import quantise as Q

    path, crops = _classifier(tmp_path)
    shutil.copy(path, tmp_path / "cls_2.onnx")
    meta = {"classifier": [path.name, "cls_2.onnx", "gone.onnx"], "trained_on": ["letele"]}
    (tmp_path / "model.json").write_text(json.dumps(meta))
    with pytest.raises(Q.QuantiseError, match="gone.onnx"):
        Q.quantise_classifiers(tmp_path, scenes=1)
    meta["classifier"] = meta["classifier"][:2]
    (tmp_path / "model.json").write_text(json.dumps(meta))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    monkeypatch.setattr(Q, "available_decks", lambda: ["letele"])
    monkeypatch.setattr(Q, "build_face_cache", lambda log: None)
    monkeypatch.setattr(Q, "calibration_crops", lambda *a, **k: crops[:100])
    done, real = [], Q.quantise_graph

    def second_fails(model, dst, x):
        if done:
            raise RuntimeError("disk full")
        done.append(dst.name)
        real(model, dst, x)
    monkeypatch.setattr(Q, "quantise_graph", second_fails)
    with pytest.raises(RuntimeError, match="disk full"):
        Q.quantise_classifiers(tmp_path, scenes=1)
    assert done == [path.name]   # the first was quantised ...
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before   # ... aside


def test_the_committed_classifiers_are_8_bit_and_say_how_they_were_made():
    import onnx

    from vision.recogniser import Recogniser

    rec = Recogniser(engine="onnxruntime")
    record = rec.meta["quantised"]
    assert record["networks"] == "classifier" and record["calibration"]["crops"] > 500
    assert not set(record["calibration"]["designs"]) & set(rec.meta["held_out"])
    assert record["padded_channels"] == 4
    for name in rec.meta["classifier"]:
        model = onnx.load(str(rec.model_dir / name))
        ops = {n.op_type for n in model.graph.node}
        assert "QLinearConv" in ops and "Conv" not in ops, name
        conv = next(n for n in model.graph.node if n.op_type == "QLinearConv")
        first = next(w for w in model.graph.initializer if w.name == conv.input[3])
        assert first.dims[1] == 4, name   # (pad_input_channels: the same numbers in less time)
    ops = {n.op_type for n in onnx.load(str(rec.model_dir / rec.meta["detector"])).graph.node}
    assert "Conv" in ops and "QLinearConv" not in ops   # the detector stays in float


def test_a_classifier_that_is_not_onnx_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    from vision.training import quantise as Q

    model = _model_dir(tmp_path)
    (model / "cls.onnx").write_bytes(b"not a network at all")
    before = {p.name: p.read_bytes() for p in model.iterdir()}

    def no_work(*a, **k):
        raise AssertionError("scenes were rendered for a model that cannot be quantised")
    monkeypatch.setattr(Q, "calibration_crops", no_work)
    with pytest.raises(Q.QuantiseError, match="cls.onnx is not an ONNX network"):
        Q.quantise_classifiers(model, scenes=1)
    assert Q.main(["--model", str(model), "--scenes", "1"]) == 2
    assert "is not an ONNX network" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in model.iterdir()} == before
    # Padding a model recorded as quantised whose file is no network: refused as clearly.
    (model / "model.json").write_text(json.dumps({"classifier": ["cls.onnx"], "quantised": {"networks": "classifier"}}))
    before = {p.name: p.read_bytes() for p in model.iterdir()}
    assert Q.main(["--model", str(model), "--pad"]) == 2
    assert "cls.onnx is not an ONNX network" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in model.iterdir()} == before
    # ... and one whose listed classifier is missing: named as missing, not as a bad network.
    (model / "model.json").write_text(json.dumps({"classifier": ["gone.onnx"], "quantised": {"networks": "classifier"}}))
    before = {p.name: p.read_bytes() for p in model.iterdir()}
    assert Q.main(["--model", str(model), "--pad"]) == 2
    assert "lacks its classifiers (gone.onnx)" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in model.iterdir()} == before
