"""The networks in 8 bits (vision.training.quantise): what the file computes, on
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
    # The added channel's weights are the zero point: weight 0.
    assert (weights[conv.input[3]][:, 3:] == weights[conv.input[5]].reshape(-1, 1, 1, 1)).all()
    assert any(n.op_type == "Pad" for n in model.graph.node)
    assert model.graph.input[0].type.tensor_type.shape.dim[1].dim_value == 3
    x = crops[200:260]
    for engine in ("onnxruntime", "opencv"):
        assert np.array_equal(OnnxNet(padded, engine, threads=1)(x), OnnxNet(plain, engine, threads=1)(x)), engine
    # Padding twice, or padding a float network, does nothing.
    assert not Q.pad_input_channels(model)
    assert not Q.pad_input_channels(Q.float_graph(path))


def _quantise_as_before(monkeypatch, Q, path, dst, crops, unsigned=False):
    """Quantise as the project did before session 32: weights over the whole int8 range
    (-127 to 127), unpadded; with ``unsigned``, stored as session 31 stored them (uint8,
    w + 128, zero point 128)."""
    import onnx
    import onnxruntime.quantization as oq
    from onnx import numpy_helper

    quantize_static = oq.quantize_static
    with monkeypatch.context() as m:
        m.setattr(oq, "quantize_static", lambda *a, **k: quantize_static(*a, **{**k, "reduce_range": False}))
        m.setattr(Q, "pad_input_channels", lambda model: False)
        m.setattr(Q, "narrow_weights", lambda model: False)
        Q.quantise_network(path, dst, crops)
    if unsigned:
        model = onnx.load(str(dst))
        inits = {w.name: w for w in model.graph.initializer}
        for node in model.graph.node:
            if node.op_type in ("QLinearConv", "QGemm"):
                for name in node.input[3], node.input[5]:
                    value = numpy_helper.to_array(inits[name]).astype(np.int16) + 128
                    inits[name].CopyFrom(numpy_helper.from_array(value.astype(np.uint8), name))
        onnx.save(model, str(dst))


def _layers(path):
    """Each 8-bit layer of the network at ``path``: (its node, {input name: array})."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    inits = {w.name: numpy_helper.to_array(w) for w in model.graph.initializer}
    return [(n, inits) for n in model.graph.node if n.op_type in ("QLinearConv", "QGemm")]


@pytest.mark.parametrize("unsigned", [False, True], ids=["int8", "session-31-uint8"])
def test_updating_a_model_quantised_before_changes_its_files_once_and_keeps_its_readings(tmp_path, monkeypatch,
                                                                                         capsys, unsigned):
    from vision.index_geometry import NOT_INDEX
    from vision.inference import OnnxNet
    from vision.training import quantise as Q

    path, crops = _classifier(tmp_path)
    _quantise_as_before(monkeypatch, Q, path, path, crops[:200], unsigned)
    plain = path.read_bytes()
    (tmp_path / "model.json").write_text(json.dumps({"classifier": [path.name]}))
    with pytest.raises(Q.QuantiseError, match="not quantised"):
        Q.pad_classifiers(tmp_path)
    assert path.read_bytes() == plain
    (tmp_path / "model.json").write_text(json.dumps({"classifier": [path.name], "quantised": {"networks": "classifier"}}))
    x = crops[200:300]
    before = OnnxNet(path, "opencv")(x)   # (OpenCV computes the wide int8 weights exactly on every CPU)
    assert max(np.abs(inits[n.input[3]].astype(int) - inits[n.input[5]].astype(int).reshape(
        (-1,) + (1,) * (inits[n.input[3]].ndim - 1))).max() for n, inits in _layers(path)) > 64
    assert Q.main(["--model", str(tmp_path), "--update"]) == 0
    printed = capsys.readouterr().out
    assert "padded to 4 input channels" in printed and "narrowed to -64..64" in printed
    assert path.read_bytes() != plain
    for node, inits in _layers(path):
        assert inits[node.input[3]].dtype == np.int8 and not inits[node.input[5]].any()
        assert np.abs(inits[node.input[3]].astype(int)).max() <= Q.WEIGHT_LIMIT
    # The last bit of the weights is gone, so the logits move a little; the readings stay.
    for engine in ("opencv", "onnxruntime"):
        after = OnnxNet(path, engine, threads=1)(x)
        spread = before.max() - before.min()
        assert 0 < np.abs(after - before).max() < 0.05 * spread, engine
        for part in (slice(0, NOT_INDEX + 1), slice(NOT_INDEX + 1, None)):
            assert (after[:, part].argmax(1) == before[:, part].argmax(1)).mean() > 0.95, engine
    record = json.loads((tmp_path / "model.json").read_text())["quantised"]
    assert record["padded_channels"] == 4 and record["weights"] == Q.WEIGHTS
    updated = path.read_bytes()
    assert Q.pad_classifiers(tmp_path, log=lambda m: None) == 0 and path.read_bytes() == updated
    # "--pad", its older name, does the same.
    assert Q.main(["--model", str(tmp_path), "--pad"]) == 0 and path.read_bytes() == updated


def test_narrowing_keeps_each_weight_and_bias_within_half_a_step(tmp_path, monkeypatch):
    """narrow_weights: a channel whose largest integer m exceeds 64 is scaled by 64 / m,
    its scale and its int32 bias with it, so each weight's value moves by at most half the
    new step, each bias by at most half its own; channels within 64 keep their integers.
    Session 31's unsigned files (w + 128, zero point 128) narrow to the same file."""
    import onnx

    from vision.training import quantise as Q

    path, crops = _classifier(tmp_path)
    wide, unsigned = tmp_path / "wide.onnx", tmp_path / "unsigned.onnx"
    _quantise_as_before(monkeypatch, Q, path, wide, crops[:200])
    _quantise_as_before(monkeypatch, Q, path, unsigned, crops[:200], unsigned=True)
    narrow = onnx.load(str(wide))
    assert Q.narrow_weights(narrow)
    onnx.save(narrow, str(tmp_path / "narrow.onnx"))
    old_unsigned = onnx.load(str(unsigned))
    assert Q.narrow_weights(old_unsigned)
    assert old_unsigned.graph.SerializeToString() == narrow.graph.SerializeToString()
    narrowed_channels = kept_channels = 0
    for (node, old), (_, new) in zip(_layers(wide), _layers(tmp_path / "narrow.onnx")):
        w, s = old[node.input[3]].astype(np.int64), old[node.input[4]]
        w7, s7 = new[node.input[3]].astype(np.int64), new[node.input[4]]
        assert new[node.input[3]].dtype == np.int8 and not new[node.input[5]].any()
        bias_at = 8 if node.op_type == "QLinearConv" else 6
        b, b7 = old[node.input[bias_at]], new[node.input[bias_at]]
        x_scale = old[node.input[1]]
        for c in range(w.shape[0]):   # (these layers' output channel is their first axis)
            peak = np.abs(w[c]).max()
            if peak <= Q.WEIGHT_LIMIT:
                assert np.array_equal(w7[c], w[c]) and s7[c] == s[c] and b7[c] == b[c]
                kept_channels += 1
                continue
            narrowed_channels += 1
            assert np.abs(w7[c]).max() == Q.WEIGHT_LIMIT
            assert np.isclose(s7[c], s[c] * peak / Q.WEIGHT_LIMIT, rtol=1e-6)
            assert np.abs(w7[c] * s7[c] - w[c] * s[c]).max() <= s7[c] * (0.5 + 1e-5)
            assert abs(b7[c] * s7[c] - b[c] * s[c]) * x_scale <= s7[c] * x_scale * (0.5 + 1e-5)
    assert narrowed_channels > 0   # (all of them here: the old quantiser put each channel's peak at 127)
    # A narrowed file, a freshly quantised one and a float one are left alone.
    assert not Q.narrow_weights(onnx.load(str(tmp_path / "narrow.onnx")))
    Q.quantise_network(path, tmp_path / "fresh.onnx", crops[:200])
    assert not Q.narrow_weights(onnx.load(str(tmp_path / "fresh.onnx")))
    assert not Q.narrow_weights(Q.float_graph(path))


def test_quantising_keeps_the_weights_within_64_and_both_engines_agree(tmp_path):
    """Weights of at most 64 keep every pair of products under 2 x 255 x 64 = 32640, below
    the 16-bit saturation of onnxruntime's int8 path on CPUs without 8-bit dot products
    (session 31 found a model that read almost nothing there): so the engines agree on
    every CPU, up to an 8-bit step of an activation that their float requantising may
    round either way."""
    from vision.inference import OnnxNet
    from vision.training import quantise as Q

    path, crops = _classifier(tmp_path)
    small = tmp_path / "cls8.onnx"
    Q.quantise_network(path, small, crops[:200])
    layers = _layers(small)
    assert len(layers) >= 3
    for node, inits in layers:
        w = inits[node.input[3]]
        assert w.dtype == np.int8 and not inits[node.input[5]].any()
        assert np.abs(w.astype(int)).max() <= Q.WEIGHT_LIMIT == 64
        assert 2 * 255 * Q.WEIGHT_LIMIT < 2 ** 15
    x = crops[200:260]
    exact = OnnxNet(small, "opencv")(x)
    got = OnnxNet(small, "onnxruntime", threads=1)(x)
    assert np.abs(got - exact).max() < 0.01 * (exact.max() - exact.min())


def test_the_committed_networks_keep_their_weights_within_64():
    from vision.recogniser import MODEL_DIR
    from vision.training import quantise as Q

    meta = json.loads((MODEL_DIR / "model.json").read_text())
    assert meta["quantised"]["weights"] == Q.WEIGHTS
    for name in [*meta["classifier"], meta["detector"], meta["refiner"]]:
        assert _layers(MODEL_DIR / name), name
        for node, inits in _layers(MODEL_DIR / name):
            w = inits[node.input[3]]
            assert w.dtype == np.int8 and not inits[node.input[5]].any(), name
            assert np.abs(w.astype(int)).max() <= Q.WEIGHT_LIMIT, name


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
    from vision.training.quantise import QuantiseError, main, quantise_model, quantise_network

    (tmp_path / "model").mkdir()
    model = _model_dir(tmp_path / "model", quantised={"networks": "classifier"})
    path, crops = _classifier(tmp_path)
    quantise_network(path, model / "cls.onnx", crops[:100])   # what the record says: in 8 bits
    before = {p.name: p.read_bytes() for p in model.iterdir()}
    with pytest.raises(QuantiseError, match="already quantised"):
        quantise_model(model, scenes=1)
    assert main(["--model", str(model), "--scenes", "1"]) == 2
    assert "already quantised" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in model.iterdir()} == before


def test_a_model_without_installed_training_designs_or_record_is_refused(tmp_path, monkeypatch, capsys):
    from vision.training import quantise as Q

    model = _model_dir(tmp_path)
    monkeypatch.setattr(Q, "available_decks", lambda: [])
    with pytest.raises(Q.QuantiseError, match="fetch-art"):
        Q.quantise_model(model, scenes=1)
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
        Q.quantise_model(tmp_path, scenes=1)
    meta["classifier"] = meta["classifier"][:2]
    (tmp_path / "model.json").write_text(json.dumps(meta))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    monkeypatch.setattr(Q, "available_decks", lambda: ["letele"])
    monkeypatch.setattr(Q, "build_face_cache", lambda log: None)
    monkeypatch.setattr(Q, "calibration_inputs", lambda *a, **k: {"classifier": [crops[:100]]})
    done, real = [], Q.quantise_graph

    def second_fails(model, dst, x, network):
        if done:
            raise RuntimeError("disk full")
        done.append(dst.name)
        real(model, dst, x, network=network)
    monkeypatch.setattr(Q, "quantise_graph", second_fails)
    with pytest.raises(RuntimeError, match="disk full"):
        Q.quantise_model(tmp_path, scenes=1)
    assert done == [path.name]   # the first was quantised ...
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before   # ... aside


def test_the_committed_networks_are_8_bit_and_say_how_they_were_made():
    import onnx

    from vision.recogniser import Recogniser

    rec = Recogniser(engine="onnxruntime")
    record = rec.meta["quantised"]
    assert record["networks"] == ["classifier", "detector", "refiner"]
    assert record["calibration"]["inputs"]["classifier"] > 500 and record["calibration"]["inputs"]["refiner"] > 500
    assert record["calibration"]["inputs"]["detector"] == 100
    assert not set(record["calibration"]["designs"]) & set(rec.meta["held_out"])
    assert record["padded_channels"] == 4
    for name in [*rec.meta["classifier"], rec.meta["refiner"]]:
        model = onnx.load(str(rec.model_dir / name))
        ops = {n.op_type for n in model.graph.node}
        assert "QLinearConv" in ops and "Conv" not in ops, name
        conv = next(n for n in model.graph.node if n.op_type == "QLinearConv")
        first = next(w for w in model.graph.initializer if w.name == conv.input[3])
        assert first.dims[1] == 4, name   # (pad_input_channels: the same numbers in less time)
    # The detector: in 8 bits but for its first convolution (over the picture's colours) and
    # its output layer, which stay in float; its pyramid's sums in 8 bits too.
    graph = onnx.load(str(rec.model_dir / rec.meta["detector"])).graph
    floats = [n for n in graph.node if n.op_type == "Conv"]
    assert len(floats) == 2 and graph.input[0].name in floats[0].input
    assert set(floats[1].output) == {o.name for o in graph.output}
    assert sum(n.op_type == "QLinearConv" for n in graph.node) == 11
    assert any(n.op_type == "QLinearAdd" for n in graph.node)


def test_a_classifier_that_is_not_onnx_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    from vision.training import quantise as Q

    model = _model_dir(tmp_path)
    (model / "cls.onnx").write_bytes(b"not a network at all")
    before = {p.name: p.read_bytes() for p in model.iterdir()}

    def no_work(*a, **k):
        raise AssertionError("scenes were rendered for a model that cannot be quantised")
    monkeypatch.setattr(Q, "calibration_inputs", no_work)
    with pytest.raises(Q.QuantiseError, match="cls.onnx is not an ONNX network"):
        Q.quantise_model(model, scenes=1)
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


def _trained_looking(net, seed):
    """``net`` in eval mode with trained-looking batch normalisations (see _classifier)."""
    import torch

    torch.manual_seed(seed)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5), m.bias.uniform_(-0.3, 0.3)
                m.running_mean.uniform_(-0.2, 0.2), m.running_var.uniform_(0.5, 2.0)
    return net.eval()


def test_a_model_whose_classifiers_alone_are_8_bit_gets_its_detector_and_refiner_done(tmp_path, monkeypatch, capsys):
    """As the committed model was brought up to date in session 63: the networks still in float
    are quantised, those in 8 bits are left byte for byte, and the record says all three, its
    calibration merged with the earlier one's (the same scenes).  The 8-bit detector keeps its
    first and last layers in float, computes about what the float one did on both engines, and
    loads back into PyTorch (``--detector-from``) as the file computes it."""
    import onnx
    import torch

    from vision.index_geometry import REFINE_PATCH_H, REFINE_PATCH_W
    from vision.inference import OnnxNet
    from vision.training import quantise as Q
    from vision.training.models import IndexDetector, IndexRefiner
    from vision.training.train import export_detector, export_onnx, load_onnx_weights

    path, crops = _classifier(tmp_path)
    Q.quantise_network(path, path, crops[:100])
    export_detector(_trained_looking(IndexDetector(0.5, (16, 32, 48, 64)), 1), tmp_path / "det.onnx")
    export_onnx(_trained_looking(IndexRefiner(0.5), 2), torch.zeros(1, 3, REFINE_PATCH_H, REFINE_PATCH_W),
                tmp_path / "ref.onnx", dynamic_hw=False, half_weights=True)
    earlier = {"networks": "classifier", "weights": Q.WEIGHTS, "calibration":
               {"method": "MinMax", "scenes": 1, "seed": 1001, "crops": 100, "designs": ["letele"]}}
    meta = {"classifier": [path.name], "detector": "det.onnx", "refiner": "ref.onnx", "trained_on": ["letele"],
            "quantised": earlier}
    (tmp_path / "model.json").write_text(json.dumps(meta))
    rng = np.random.default_rng(5)
    pictures = [rng.uniform(-2, 2, (1, 3, 96, 128)).astype(np.float32) for _ in range(4)]
    refiner_crops = rng.standard_normal((200, 3, REFINE_PATCH_H, REFINE_PATCH_W)).astype(np.float32)
    monkeypatch.setattr(Q, "available_decks", lambda: ["letele"])
    monkeypatch.setattr(Q, "build_face_cache", lambda log: None)
    monkeypatch.setattr(Q, "calibration_inputs", lambda *a, **k: {"classifier": [crops[:100]], "detector": pictures,
                                                                  "refiner": [refiner_crops]})
    classifier = path.read_bytes()
    float_det = OnnxNet(tmp_path / "det.onnx", "onnxruntime", threads=1)(pictures[0])
    record = Q.quantise_model(tmp_path, scenes=1, log=print)
    assert "detector, refiner networks" in capsys.readouterr().out
    assert path.read_bytes() == classifier
    assert record["networks"] == ["classifier", "detector", "refiner"] and "earlier" not in record
    assert record["calibration"]["inputs"] == {"classifier": 100, "detector": 4, "refiner": 200}
    assert json.loads((tmp_path / "model.json").read_text())["quantised"] == record
    graph = onnx.load(str(tmp_path / "det.onnx")).graph
    assert [n.op_type for n in graph.node if n.op_type == "Conv"] == ["Conv", "Conv"]
    assert graph.input[0].name in next(n for n in graph.node if n.op_type == "Conv").input
    assert any(n.op_type == "QLinearAdd" for n in graph.node)
    for name in ("det.onnx", "ref.onnx"):
        assert Q.is_8bit(tmp_path / name)
        for node, inits in _layers(tmp_path / name):
            assert np.abs(inits[node.input[3]].astype(int)).max() <= Q.WEIGHT_LIMIT, name
    spread = float_det.max() - float_det.min()
    ours = OnnxNet(tmp_path / "det.onnx", "onnxruntime", threads=1)(pictures[0])
    theirs = OnnxNet(tmp_path / "det.onnx", "opencv")(pictures[0])
    assert np.abs(ours - float_det).max() < 0.1 * spread     # (8-bit steps, not another network)
    assert np.abs(ours - theirs).max() < 0.05 * spread      # (a requantised step apart, here and there)
    # Back into PyTorch as the file computes it, but for the activations' 8-bit steps.
    det = IndexDetector(0.5, (16, 32, 48, 64))
    load_onnx_weights(det, tmp_path / "det.onnx")
    det.norm = torch.nn.Identity()   # (the file takes its input centred, as the recogniser makes it)
    with torch.no_grad():
        loaded = det.eval()(torch.from_numpy(pictures[0])).numpy()
    assert np.abs(loaded - ours).max() < 0.1 * spread
    # Done once: a second time there is nothing left in float.
    with pytest.raises(Q.QuantiseError, match="already quantised"):
        Q.quantise_model(tmp_path, scenes=1)
    # Calibrated on other scenes than the earlier networks were: that record is kept whole.
    export_onnx(_trained_looking(IndexRefiner(0.5), 2), torch.zeros(1, 3, REFINE_PATCH_H, REFINE_PATCH_W),
                tmp_path / "ref.onnx", dynamic_hw=False, half_weights=True)
    again = Q.quantise_model(tmp_path, scenes=2, log=lambda m: None)
    assert again["calibration"]["inputs"] == {"refiner": 200} and again["earlier"] == [record]


def test_a_model_without_a_refiner_or_with_classifiers_of_an_earlier_version(tmp_path, monkeypatch):
    """A model with no refiner has its other networks quantised; one whose 8-bit classifiers
    were stored by an earlier version (unpadded, full-range weights) is sent to ``--update``
    first, since the record would say otherwise of them; an unknown kind of network is refused."""
    import torch

    from vision.training import quantise as Q
    from vision.training.models import IndexDetector
    from vision.training.train import export_detector

    path, crops = _classifier(tmp_path)
    export_detector(_trained_looking(IndexDetector(0.5, (16, 32, 48, 64)), 1), tmp_path / "det.onnx")
    meta = {"classifier": [path.name], "detector": "det.onnx", "refiner": None, "trained_on": ["letele"]}
    (tmp_path / "model.json").write_text(json.dumps(meta))
    pictures = [np.random.default_rng(6).uniform(-2, 2, (1, 3, 64, 96)).astype(np.float32) for _ in range(2)]
    monkeypatch.setattr(Q, "available_decks", lambda: ["letele"])
    monkeypatch.setattr(Q, "build_face_cache", lambda log: None)
    monkeypatch.setattr(Q, "calibration_inputs", lambda *a, **k: {"classifier": [crops[:100]], "detector": pictures,
                                                                  "refiner": []})
    with pytest.raises(ValueError, match="unknown networks"):
        Q.quantise_model(tmp_path, scenes=1, kinds=("classifiers",))
    record = Q.quantise_model(tmp_path, scenes=1, log=lambda m: None, kinds=("detector",))
    assert record["networks"] == ["detector"] and record["calibration"]["inputs"] == {"detector": 2}
    assert "QLinearAdd" in record["format"] and not Q.is_8bit(path)
    # The classifier in 8 bits as before session 32: the detector is left alone and nothing written.
    export_detector(_trained_looking(IndexDetector(0.5, (16, 32, 48, 64)), 1), tmp_path / "det.onnx")
    _quantise_as_before(monkeypatch, Q, path, path, crops[:200])
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    with pytest.raises(Q.QuantiseError, match="--update"):
        Q.quantise_model(tmp_path, scenes=1)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before
