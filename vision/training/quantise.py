"""Store a trained model's networks in 8 bits, in place, so that they read in less time.

    python -m vision.training.quantise                 # the committed model (vision/models), once
    python -m vision.training.quantise --model DIR --scenes 100 --seed 1001
    python -m vision.training.quantise --update        # a model quantised before session 32

Every network of the model that is still in float is rewritten: the index
classifiers, the detector and the refiner.  The classifiers were first
(session 24): they are most of the recogniser's time (they read every index
from several views, three of them for the doubtful ones), and in 8 bits
onnxruntime runs one in less than half the time on an x86 core with 8-bit
dot products (bench/bench_engines.py).  The detector and the refiner followed
in session 63: on the committed model they read the benchmark's 2240 scenes
as in float (one wrong card fewer) in 12% less time an image on a float32
Zen 3 core (docs/vision-experiments.md, session 63).

The activations' ranges are measured, not guessed: the float model reads
``scenes`` rendered scenes of its *training* designs (never the held-out ones), and every input
it hands a network is kept (for the classifiers, also every view of each
index where the scene put it); the ranges are the extremes seen on up to
``MAX_CROPS`` crops and ``MAX_IMAGES`` detector inputs (onnxruntime's static
quantisation, MinMax).  The layer that writes each network's output stays in
float, and so does the detector's first convolution (over the picture's 3
colours, at half the picture's size, it is faster in float).  The first
convolution of a classifier and of the refiner is given a fourth input channel
that adds nothing (:func:`pad_input_channels`): the same numbers, in less time.
The weights keep to 7 bits and a sign so that onnxruntime computes them exactly
on every x86 CPU, those without 8-bit dot products too (:func:`narrow_weights`).

The files are written in onnxruntime's operator format (``QLinearConv``,
``QGemm``, ``QLinearAdd``), which OpenCV's dnn also runs, so one file serves
both engines; OpenCV computes them more slowly than float ones, and rounds
the detector's requantised activations now and then to the neighbouring step,
so that its indices lie up to a few tenths of a pixel from onnxruntime's.
``model.json`` records what was done (``"quantised"``: which networks, how
calibrated), and a model whose networks are all in 8 bits is refused: their
float weights are gone (the training run keeps a copy, see train.py).

Needs the ``onnx`` package and onnxruntime's quantisation tools (the
``train`` extra); the recogniser itself needs neither.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np

from vision.recogniser import MODEL_DIR, IndexReading, Recogniser
from vision.synth.decks import available_decks, build_face_cache
from vision.synth.scene import random_scene_spec, render_scene

#: At most this many crops set the activations' ranges (a random draw of those recorded).
MAX_CROPS = 2000
#: At most this many of the detector's input pictures set its ranges (the first ones).
MAX_IMAGES = 100
#: The networks a model may store in 8 bits, by the names model.json gives their files.
NETWORKS = ("classifier", "detector", "refiner")
#: The operators each network has in 8 bits: only these, since an input normalisation
#: (Sub, Mul) in 8 bits gains nothing and OpenCV cannot load its quantised constants.
#: The detector's feature pyramid has its sums and upsamplings in 8 bits too, so that its
#: activations stay in 8 bits from one convolution to the next.
OPERATORS = {"classifier": ["Conv", "Relu", "MaxPool", "Flatten", "Gemm"],
             "refiner": ["Conv", "Relu", "MaxPool", "Flatten", "Gemm"],
             "detector": ["Conv", "Relu", "Add", "Resize"]}
#: An 8-bit network's first convolution, over the crops' 3 colour channels, is given
#: this many: onnxruntime computes it over 4 channels in less time than over 3 (its
#: 8-bit dot products take their input 4 bytes at a time), to the same numbers
#: (:func:`pad_input_channels`; session 27 in docs/vision-experiments.md).
PADDED_CHANNELS = 4
#: The largest size of an 8-bit weight's integer (:func:`narrow_weights`).
WEIGHT_LIMIT = 64
#: How the 8-bit weights are stored (model.json's "quantised"; :func:`narrow_weights`).
WEIGHTS = "int8 from -64 to 64 (7 bits), zero point 0, one scale per output channel"
#: The scenes the ranges are measured on: 1 to 8 cards, as the benchmark's.
SCENE_W, SCENE_H = 1280, 720


class QuantiseError(RuntimeError):
    """The model cannot be quantised: missing files, already quantised, or no designs to render."""


def is_8bit(path: Path) -> bool:
    """Whether the ONNX network at ``path`` is stored in 8 bits (has onnxruntime's
    8-bit operators).  Raises QuantiseError for a file that is not an ONNX network."""
    import onnx

    try:
        model = onnx.load(str(path))
    except Exception as e:   # (protobuf's decode errors have no common type worth naming)
        raise QuantiseError(f"{path} is not an ONNX network: {e}") from None
    return any(node.op_type.startswith("QLinear") or node.op_type == "QGemm" for node in model.graph.node)


def calibration_inputs(model_dir: Path, scenes: int, seed: int, decks: list[str],
                       max_crops: int = MAX_CROPS, max_images: int = MAX_IMAGES,
                       kinds: tuple[str, ...] = NETWORKS) -> dict[str, list[np.ndarray]]:
    """What the model's networks are given while it reads ``scenes`` rendered
    scenes of ``decks``, by network (:data:`NETWORKS`), each a list of the
    batches to measure on (empty for a network not among ``kinds``, which is not recorded):

    * ``"classifier"``: the crops of every stage (first looks, doubtful
      indices, turned and weak ones), and every view of each index where the
      scene put it; up to ``max_crops`` of them drawn at random, in one array
      (N x 3 x PATCH_H x PATCH_W, float32);
    * ``"refiner"``: the refiner's crops (where the model finds no index at all,
      crops where each index really lies); up to ``max_crops`` drawn likewise
      (none for a model without a refiner);
    * ``"detector"``: its first ``max_images`` inputs, one picture each.
    """
    rec = Recogniser(model_dir)
    seen: dict[str, list[np.ndarray]] = {name: [] for name in NETWORKS}

    def recording(net, name: str):
        def run(blob: np.ndarray) -> np.ndarray:
            if name != "detector" or len(seen[name]) < max_images:
                seen[name].append(np.array(blob, np.float32))
            return net(blob)
        return run
    refiner = rec.refiner is not None and "refiner" in kinds
    if "classifier" in kinds:
        rec.classifiers = [recording(net, "classifier") for net in rec.classifiers]
    if "detector" in kinds:
        rec.detector = recording(rec.detector, "detector")
    if refiner:
        rec.refiner = recording(rec.refiner, "refiner")
    at_truth: list[np.ndarray] = []   # the refiner's crops of the indices where they lie
    rng = np.random.default_rng(seed)
    for k in range(scenes):
        spec = random_scene_spec(rng, decks, SCENE_W, SCENE_H, n_cards=1 + k % 8, card_height=(130, 300))
        image, ann = render_scene(spec, rng)
        rec.recognise(image)
        # And every view of each index where it really lies: a model that finds none yet
        # (one that has hardly trained) still has crops to measure on.
        truth = [IndexReading(ix.centre, ix.angle, ix.height, card.centre, card.height, 1.0)
                 for card in ann.cards for ix in card.indices]
        if truth and "classifier" in kinds:
            seen["classifier"].append(rec._view_crops(image, truth, rec.views))
        if truth and refiner:   # (recorded aside; the readings it moves are thrown away)
            own, seen["refiner"] = seen["refiner"], at_truth
            rec.refine(image, truth)
            seen["refiner"] = own
    if not seen["refiner"]:
        # Such a model gives its refiner nothing either: it is measured on those indices.
        # (Only then: on a trained model's own crops alone it reads a little better, session 63.)
        seen["refiner"] = at_truth
    # (The doubtful indices' crops are in it once for each classifier: no matter for the extremes.)
    inputs = {"detector": seen["detector"]}
    for name, draw in (("classifier", rng), ("refiner", np.random.default_rng(seed))):
        crops = np.concatenate(seen[name]) if seen[name] else np.zeros((0, 3, 1, 1), np.float32)
        if len(crops) > max_crops:
            crops = crops[np.sort(draw.choice(len(crops), max_crops, replace=False))]
        inputs[name] = [crops] if len(crops) else []
    return inputs


def float_graph(path: Path):
    """The ONNX network at ``path`` with float32 weights and opset 13 (what the
    quantiser needs): weights stored as float16 (train.store_half_weights) are
    put back as float32, their casts dropped, and weights passed on by an
    Identity given their own copy.  Raises QuantiseError for a file that is not
    such a network."""
    import onnx
    from onnx import TensorProto, numpy_helper, version_converter

    try:
        model = onnx.load(str(path))
    except Exception as e:   # (protobuf's decode errors have no common type worth naming)
        raise QuantiseError(f"{path} is not an ONNX network: {e}") from None
    graph = model.graph
    weights = {w.name: w for w in graph.initializer}
    nodes = []
    for node in graph.node:
        source = weights.get(node.input[0]) if node.input else None
        # A cast of float16 weights, or an Identity the exporter puts where two weights
        # are equal (zero biases): the quantiser wants the weights themselves.
        if source is not None and (node.op_type == "Identity" or
                                   (node.op_type == "Cast" and source.data_type == TensorProto.FLOAT16)):
            weights[node.output[0]] = numpy_helper.from_array(
                numpy_helper.to_array(source).astype(np.float32), node.output[0])
            graph.initializer.append(weights[node.output[0]])
            continue
        nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for node in graph.node for name in node.input}
    kept = [w for w in graph.initializer if w.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    model = version_converter.convert_version(model, 13)
    onnx.checker.check_model(model)
    return model


def pad_input_channels(model) -> bool:
    """Give the first convolution of ``model`` (an 8-bit network, an ONNX
    ModelProto) :data:`PADDED_CHANNELS` input channels, in place; returns
    whether it did.

    The quantised input is padded with its zero point (the 8-bit value that
    stands for 0.0) by a Pad node, the convolution's weights with their own zero
    point (weight 0).  Each product the padding adds is (zero point - zero
    point) x weight = 0 in the convolution's integer sums, so the network computes what it computed
    before, bit for bit, on either engine, in less time; its input stays 3
    channels, so nothing outside the file changes.  A network whose input
    does not go through a QuantizeLinear straight into one 3-channel
    QLinearConv (a float one, or one padded already) is left as it is.
    """
    from onnx import helper, numpy_helper

    graph = model.graph
    source = graph.input[0].name
    quantise = next((n for n in graph.node if n.op_type == "QuantizeLinear" and n.input[0] == source), None)
    if quantise is None:
        return False
    users = [n for n in graph.node if quantise.output[0] in n.input]
    weights = {w.name: w for w in graph.initializer}
    if len(users) != 1 or users[0].op_type != "QLinearConv" or users[0].input[3] not in weights:
        return False
    conv = users[0]
    group = next((a.i for a in conv.attribute if a.name == "group"), 1)
    w = numpy_helper.to_array(weights[conv.input[3]])
    if group != 1 or w.ndim != 4 or w.shape[1] != 3:
        return False
    # The added weights are the weights' zero point (0 for int8, 128 for the unsigned ones of
    # session 31's files): weight 0.
    zero = numpy_helper.to_array(weights[conv.input[5]]) if conv.input[5] in weights else np.zeros((), w.dtype)
    padded = np.empty((w.shape[0], PADDED_CHANNELS) + w.shape[2:], w.dtype)
    padded[:] = zero.reshape(-1, 1, 1, 1) if zero.ndim else zero
    padded[:, :3] = w
    weights[conv.input[3]].CopyFrom(numpy_helper.from_array(padded, conv.input[3]))
    pads = f"{quantise.output[0]}_channel_pads"   # (N, C, H, W) at the start, then at the end: C's end
    graph.initializer.append(numpy_helper.from_array(
        np.array([0, 0, 0, 0, 0, PADDED_CHANNELS - 3, 0, 0], np.int64), pads))
    wider = f"{quantise.output[0]}_padded"
    # Padded with the convolution's own input zero point: that is what "0.0" is to it.
    pad = helper.make_node("Pad", [quantise.output[0], pads, conv.input[2]], [wider], mode="constant",
                           name=f"{quantise.output[0]}_pad")
    conv.input[0] = wider
    graph.node.insert(list(graph.node).index(quantise) + 1, pad)
    return True


def narrow_weights(model) -> bool:
    """Store the 8-bit weights of ``model`` (an ONNX ModelProto) as int8 from -64 to 64
    with zero point 0, in place; returns whether anything changed.

    Why: onnxruntime computes uint8 inputs against int8 weights on x86 CPUs without
    8-bit dot products (AVX2 only: many laptops and AMD servers) with VPMADDUBSW, which
    adds two products into 16 bits and saturates there.  With weights of at most 64 in
    size, two products of an input (at most 255) make at most 2 x 255 x 64 = 32640, under
    the 32767 where it saturates, so that path is exact too, and it is the fast one on
    every x86 CPU (onnxruntime's own quantiser calls this ``reduce_range``).  Weights
    stored as int8 or, as session 31 stored them, uint8 with zero point 128 are brought
    into that range one output channel at a time: a channel whose largest integer m
    exceeds 64 is scaled by 64 / m (its weights rounded, its scale and its int32 bias
    adjusted to match), the others keep their integers.  That drops the channel's last
    bit, so the network computes almost, not exactly, what it computed before
    (docs/vision-experiments.md, session 32, measures what it reads).
    """
    from onnx import numpy_helper

    inits = {w.name: w for w in model.graph.initializer}
    changed = False
    for node in model.graph.node:
        if node.op_type not in ("QLinearConv", "QGemm"):
            continue
        # QLinearConv: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, [bias];
        # QGemm: A, a_scale, a_zp, B, b_scale, b_zp, [C (bias)], [y_scale, y_zp].
        w_name, s_name, zp_name = node.input[3:6]
        b_at = 8 if node.op_type == "QLinearConv" else 6
        b_name = node.input[b_at] if len(node.input) > b_at and node.input[b_at] else None
        if not {w_name, s_name, zp_name} <= inits.keys() or (b_name and b_name not in inits):
            continue
        w, scale, zp = (numpy_helper.to_array(inits[n]) for n in (w_name, s_name, zp_name))
        if w.dtype not in (np.int8, np.uint8):
            continue
        # The output channel is the weights' first axis, but for a QGemm that does not transpose B.
        axis = 1 if node.op_type == "QGemm" and not any(a.name == "transB" and a.i for a in node.attribute) else 0
        channels = w.shape[axis]
        along = [1] * w.ndim
        along[axis] = channels
        q = w.astype(np.int32) - np.broadcast_to(zp.astype(np.int32), (channels,)).reshape(along)
        peak = np.abs(np.moveaxis(q, axis, 0).reshape(channels, -1)).max(axis=1)
        if w.dtype == np.int8 and not zp.any() and peak.max() <= WEIGHT_LIMIT:
            continue
        factor = np.where(peak > WEIGHT_LIMIT, WEIGHT_LIMIT / np.maximum(peak, 1), 1.0)
        if scale.size == 1:   # one scale for the whole tensor: one factor for every channel
            factor = np.full(channels, factor.min())
        narrowed = np.clip(np.round(q * factor.reshape(along)), -WEIGHT_LIMIT, WEIGHT_LIMIT).astype(np.int8)
        new_scale = (scale.reshape(-1) / factor[:scale.size]).astype(scale.dtype).reshape(scale.shape)
        inits[w_name].CopyFrom(numpy_helper.from_array(narrowed, w_name))
        inits[s_name].CopyFrom(numpy_helper.from_array(new_scale, s_name))
        inits[zp_name].CopyFrom(numpy_helper.from_array(np.zeros(zp.shape, np.int8), zp_name))
        if b_name:   # its scale is the input's times the weights': it keeps its value in the new one
            bias = numpy_helper.to_array(inits[b_name])
            inits[b_name].CopyFrom(numpy_helper.from_array(
                np.round(bias.astype(np.float64) * factor).astype(np.int32), b_name))
        changed = True
    return changed


def quantise_network(src: Path, dst: Path, crops, network: str = "classifier") -> None:
    """Write ``src`` (a float network, one of :data:`NETWORKS`) to ``dst`` in 8 bits,
    its activations' ranges measured on ``crops``.  ``dst`` may be ``src``."""
    quantise_graph(float_graph(src), dst, crops, network=network)


def quantise_graph(model, dst: Path, crops, batch: int = 100, network: str = "classifier") -> None:
    """Write ``model`` (a :func:`float_graph` of a ``network``, one of :data:`NETWORKS`)
    to ``dst`` in 8 bits, its activations' ranges measured on ``crops`` (one array of
    inputs, or a list of them: the detector's pictures need not be of one size), in
    batches of up to ``batch``; a classifier's and the refiner's first convolution over 4
    channels (:func:`pad_input_channels`)."""
    import onnx
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)

    if network not in OPERATORS:
        raise ValueError(f"unknown network {network!r}: one of {', '.join(NETWORKS)}")
    arrays = crops if isinstance(crops, list) else [crops]

    class Crops(CalibrationDataReader):
        def __init__(self, name: str):
            self.batches = iter([{name: a[i:i + batch]} for a in arrays for i in range(0, len(a), batch)])

        def get_next(self):
            return next(self.batches, None)

    outputs = {o.name for o in model.graph.output}
    # The layer that writes the logits stays in float: in 8 bits its output would move in
    # steps of a 255th of the logits' range, coarse next to the accept threshold's margins.
    keep_float = [node.name for node in model.graph.node if set(node.output) & outputs]
    if network == "detector":
        # Its first convolution too: over 3 colours at half the picture's size it runs
        # faster in float than in 8 bits (session 24), and the picture keeps every bit.
        # (The first in the graph's order: an older detector normalises its input first.)
        keep_float.append(next(node.name for node in model.graph.node if node.op_type == "Conv"))
    # The quantiser logs advice (pre-processing, opset) that does not apply to these small networks.
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            plain, packed = Path(tmp) / "float.onnx", Path(tmp) / "int8.onnx"
            onnx.save(model, str(plain))
            quantize_static(str(plain), str(packed), Crops(model.graph.input[0].name),
                            quant_format=QuantFormat.QOperator, per_channel=True,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                            reduce_range=True,   # weights from -64 to 64: narrow_weights says why
                            calibrate_method=CalibrationMethod.MinMax,
                            op_types_to_quantize=OPERATORS[network],
                            nodes_to_exclude=keep_float)
            packed_model = onnx.load(str(packed))
            pad_input_channels(packed_model)
            narrow_weights(packed_model)   # (the quantiser made them so already: a check that costs nothing)
            onnx.checker.check_model(packed_model)
            onnx.save(packed_model, str(packed))
            shutil.copyfile(packed, dst)
    finally:
        root.setLevel(level)


def _model_record(model_dir: Path) -> tuple[Path, dict, list[str]]:
    """The model's model.json path, its record, and the classifiers' file names it lists;
    a QuantiseError when the record cannot be read or a classifier it lists is missing."""
    meta_path = model_dir / "model.json"
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise QuantiseError(f"{meta_path}: cannot read the model's record ({e})") from None
    files = meta.get("classifier") or []
    files = files if isinstance(files, list) else [files]
    missing = [name for name in files if not (model_dir / name).is_file()]
    if not files or missing:
        raise QuantiseError(f"the model in {model_dir} lacks its classifiers ({', '.join(missing) or 'none named'})")
    return meta_path, meta, files


def _networks(model_dir: Path, meta: dict, classifiers: list[str]) -> list[tuple[str, str]]:
    """The model's networks as (kind, file name) pairs, kinds from :data:`NETWORKS`;
    a QuantiseError when the detector or the refiner that model.json names is missing."""
    networks = [("classifier", name) for name in classifiers]
    for kind in ("detector", "refiner"):
        name = meta.get(kind)
        if name:   # (a model without a refiner says "refiner": null)
            if not isinstance(name, str) or not (model_dir / name).is_file():
                raise QuantiseError(f"the model in {model_dir} lacks its {kind} ({name})")
            networks.append((kind, name))
    return networks


def quantise_model(model_dir: Path, scenes: int = 100, seed: int = 1001, log: Callable[[str], None] = print,
                   kinds: tuple[str, ...] = NETWORKS) -> dict:
    """Rewrite every network of the model in ``model_dir`` that is still in float
    in 8 bits (of ``kinds``, by default all), in place, and record it in its
    model.json; returns that record.  Raises QuantiseError when they are all in 8
    bits already, or no training design is installed; the model is then left as it was."""
    import onnx
    import onnxruntime

    unknown = set(kinds) - set(NETWORKS)
    if unknown:
        raise ValueError(f"unknown networks {sorted(unknown)}: {', '.join(NETWORKS)} are a model's")
    model_dir = Path(model_dir)
    meta_path, meta, classifiers = _model_record(model_dir)
    networks = _networks(model_dir, meta, classifiers)
    eight = {name: is_8bit(model_dir / name) for _, name in networks}
    todo = [(kind, name) for kind, name in networks if kind in kinds and not eight[name]]
    if not todo:
        raise QuantiseError(f"the model in {model_dir} is already quantised: its float networks are gone "
                            f"(train it again, or restore them, to quantise anew)")
    for kind, name in networks:
        # The record will say how the 8-bit files are stored: those left as they are must be so.
        if eight[name]:
            kept = onnx.load(str(model_dir / name))
            if pad_input_channels(kept) or narrow_weights(kept):
                raise QuantiseError(f"{name} was stored in 8 bits by an earlier version: bring it up to date "
                                    f"first (python -m vision.training.quantise --update --model {model_dir})")
    graphs = {name: float_graph(model_dir / name) for _, name in todo}   # (a bad file is refused before the work)
    decks = [d for d in meta.get("trained_on", []) if d in available_decks()]
    if not decks:
        raise QuantiseError("none of the model's training designs is installed: run scripts/fetch-art.sh")
    build_face_cache(log=lambda m: None)
    measured = list(dict.fromkeys(kind for kind, _ in todo))
    log(f"measuring the activations of the {', '.join(measured)} networks on {scenes} scenes of {len(decks)} "
        f"training designs")
    inputs = calibration_inputs(model_dir, scenes, seed, decks, kinds=tuple(measured))
    for kind in measured:
        if not inputs[kind]:
            raise QuantiseError(f"{scenes} scenes showed no index: nothing to measure the {kind}'s ranges on")
    # All are written aside first: a failure half way leaves the model as it was.
    with tempfile.TemporaryDirectory() as tmp:
        for kind, name in todo:
            quantise_graph(graphs[name], Path(tmp) / name, inputs[kind], network=kind)
        for _, name in todo:
            shutil.copyfile(Path(tmp) / name, model_dir / name)
            log(f"{name}: {(model_dir / name).stat().st_size} bytes in 8 bits")
            eight[name] = True
    in_8_bits = [kind for kind in NETWORKS if any(k == kind for k, _ in networks)
                 and all(eight[name] for k, name in networks if k == kind)]
    record = {
        "networks": in_8_bits,
        "weights": WEIGHTS,
        "activations": "uint8",
        "format": f"onnxruntime QOperator (QLinearConv, QGemm{', QLinearAdd' * ('detector' in in_8_bits)})",
        "padded_channels": PADDED_CHANNELS,
        "calibration": {"method": "MinMax", "scenes": scenes, "seed": seed,
                        "inputs": {kind: sum(len(a) for a in inputs[kind]) for kind in measured},
                        "designs": decks},
        "onnxruntime": onnxruntime.__version__,
    }
    earlier = meta.get("quantised")
    if isinstance(earlier, dict):
        # Networks quantised before keep their record of how they were calibrated: merged
        # when it was on the same scenes, else kept whole beside this one.
        before = dict(earlier.get("calibration") or {})
        if "crops" in before:   # (a record of before session 63: the classifiers' crops)
            before["inputs"] = {"classifier": before.pop("crops")}
        same = all(before.get(k) == record["calibration"][k] for k in ("method", "scenes", "seed", "designs"))
        if same:
            record["calibration"]["inputs"] = {**before.get("inputs", {}), **record["calibration"]["inputs"]}
            if earlier.get("earlier"):
                record["earlier"] = earlier["earlier"]
        else:
            record["earlier"] = [*earlier.pop("earlier", []), earlier]
    meta["quantised"] = record
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    return record


def pad_classifiers(model_dir: Path, log: Callable[[str], None] = print) -> int:
    """Bring the classifiers of a model quantised by an earlier version up to date, in
    place: the first convolution padded (:func:`pad_input_channels`, since session 27) and
    the weights from -64 to 64 (:func:`narrow_weights`, since session 32); record it in its
    model.json.  Padding changes no number the network computes; narrowing drops the last
    bit of the weights of the channels that used it.  Returns how many
    files changed (0 when all were up to date).  Raises QuantiseError when the model is
    not quantised."""
    import onnx

    model_dir = Path(model_dir)
    meta_path, meta, files = _model_record(model_dir)
    if not meta.get("quantised"):
        raise QuantiseError(f"the model in {model_dir} is not quantised: its classifiers are padded as they are "
                            f"quantised (python -m vision.training.quantise --model {model_dir})")
    changed = 0
    with tempfile.TemporaryDirectory() as tmp:   # all aside first, as quantise_model does
        for name in files:
            try:
                model = onnx.load(str(model_dir / name))
            except Exception as e:   # (protobuf's decode errors have no common type worth naming)
                raise QuantiseError(f"{model_dir / name} is not an ONNX network: {e}") from None
            padded = pad_input_channels(model)
            narrowed = narrow_weights(model)
            if padded or narrowed:
                onnx.checker.check_model(model)
                onnx.save(model, str(Path(tmp) / name))
                changed += 1
                log(f"{name}: " + " and ".join(
                    ([f"first convolution padded to {PADDED_CHANNELS} input channels"] if padded else [])
                    + ([f"weights narrowed to -{WEIGHT_LIMIT}..{WEIGHT_LIMIT}"] if narrowed else [])))
        for name in files:
            if (Path(tmp) / name).is_file():
                shutil.copyfile(Path(tmp) / name, model_dir / name)
    update = {"padded_channels": PADDED_CHANNELS, "weights": WEIGHTS}
    if any(meta["quantised"].get(k) != v for k, v in update.items()):
        meta["quantised"].update(update)
        meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision.training.quantise", description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=MODEL_DIR, help="the model's folder (default: the committed one)")
    ap.add_argument("--scenes", type=int, default=100, help="scenes rendered to measure the ranges on")
    ap.add_argument("--seed", type=int, default=1001, help="their seed (not one the training used)")
    ap.add_argument("--update", "--pad", dest="update", action="store_true",
                    help="only bring a model quantised by an earlier version up to date (its first "
                         "convolution padded, its weights narrowed to 7 bits); --pad is the older name")
    args = ap.parse_args(argv)
    if args.scenes < 1:
        ap.error("--scenes must be at least 1")
    try:
        if args.update:
            pad_classifiers(args.model)
        else:
            quantise_model(args.model, args.scenes, args.seed)
    except QuantiseError as e:
        print(f"quantise: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
