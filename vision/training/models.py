"""The three small networks (PyTorch; training only, never imported at run time).

* :class:`IndexDetector`: fully convolutional; for each 4x4-pixel cell of the
  scaled image it outputs the channels of ``vision.index_geometry.DET_CHANNELS``
  (is an index centre here, its angle and size, where its card is).  A
  one-class "index" detector converges fast on a CPU; the 52-way decision is
  left to the classifier.
* :class:`IndexClassifier`: reads one rotation-normalised index crop and
  outputs 14 rank logits (13 ranks + "not an upright index") and 4 suit logits.
* :class:`IndexRefiner`: looks at a wider crop around a detected index and
  says where the index really is, relative to the detection (position,
  angle, size): the classifier then reads a crop cut where the index is.

Both use only Conv/BatchNorm/ReLU/MaxPool/Resize/Gemm so that the exported
ONNX runs through ``cv2.dnn``.
"""

from __future__ import annotations

import torch
from torch import nn

from vision.index_geometry import DET_CHANNELS, NOT_INDEX, REFINE_PATCH_H, REFINE_PATCH_W
from vision.recogniser import DET_CENTRE, DET_GAIN


def _cbr(i: int, o: int, stride: int = 1, dilation: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(i, o, 3, stride, padding=dilation, dilation=dilation, bias=False),
                         nn.BatchNorm2d(o), nn.ReLU(inplace=True))


class Normalise(nn.Module):
    """Inputs arrive as BGR in [0, 1] (cv2.dnn.blobFromImage(img, 1/255)); centre them.

    The detector is exported without it (``train.export_detector``): the
    recogniser centres its input the same way (``detector_blob(centred=True)``)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - DET_CENTRE) * DET_GAIN


class IndexDetector(nn.Module):
    """``channels``: the widths at 1/2, 1/4, 1/8 and 1/16 of the input's scale, each
    multiplied by ``width``.  The default is the first detector's; ``full`` trains
    (16, 32, 48, 64) since session 29 (``train.Config.det_channels``): onnxruntime
    computes channels in blocks of 16, so it runs in the time of the default, and it
    finds half as many false indices, which the refiner and classifiers then skip.

    >>> [m.out_channels for m in IndexDetector(channels=(16, 32, 48, 64)).modules()
    ...  if isinstance(m, nn.Conv2d)][:3]
    [16, 32, 32]
    """

    def __init__(self, width: float = 1.0, channels: tuple[int, int, int, int] = (16, 24, 40, 64)):
        super().__init__()
        if len(channels) != 4:
            raise ValueError(f"a detector has 4 stages of channels, not {len(channels)}: {channels}")
        c1, c2, c3, c4 = (max(8, int(round(c * width))) for c in channels)
        self.norm = Normalise()
        self.s1 = _cbr(3, c1, 2)                                  # /2
        self.s2 = nn.Sequential(_cbr(c1, c2, 2), _cbr(c2, c2))    # /4
        self.s3 = nn.Sequential(_cbr(c2, c3, 2), _cbr(c3, c3))    # /8
        self.s4 = nn.Sequential(_cbr(c3, c4, 2), _cbr(c4, c4), _cbr(c4, c4, dilation=2))  # /16
        self.lat4 = nn.Conv2d(c4, c3, 1)
        self.m3 = _cbr(c3, c3)
        self.lat3 = nn.Conv2d(c3, c2, 1)
        self.m2 = _cbr(c2, c2)
        self.head = nn.Conv2d(c2, len(DET_CHANNELS), 1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        with torch.no_grad():
            self.head.bias.zero_()
            self.head.bias[0] = -2.2  # start with a low "index here" prior (focal-loss practice)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm(x)
        f2 = self.s2(self.s1(x))
        f3 = self.s3(f2)
        f4 = self.s4(f3)
        p3 = self.m3(f3 + self.up(self.lat4(f4)))
        p2 = self.m2(f2 + self.up(self.lat3(p3)))
        return self.head(p2)


class IndexClassifier(nn.Module):
    """``standardised``: inputs arrive already standardised per crop
    (``vision.index_geometry.standardise_crops``), so no centring layer."""

    def __init__(self, width: float = 1.0, standardised: bool = False):
        super().__init__()
        c1, c2, c3 = (max(8, int(round(c * width))) for c in (16, 32, 64))
        self.norm = nn.Identity() if standardised else Normalise()
        self.features = nn.Sequential(
            _cbr(3, c1), nn.MaxPool2d(2),          # 24 x 16
            _cbr(c1, c2), _cbr(c2, c2), nn.MaxPool2d(2),  # 12 x 8
            _cbr(c2, c3), _cbr(c3, c3), nn.MaxPool2d(2),  # 6 x 4
        )
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(c3 * 6 * 4, 128), nn.ReLU(inplace=True),
                                nn.Dropout(0.2), nn.Linear(128, NOT_INDEX + 1 + 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(self.norm(x)))


class IndexRefiner(nn.Module):
    """Inputs: standardised REFINE_PATCH_H x REFINE_PATCH_W crops; outputs the 4
    numbers of ``vision.index_geometry.refine_target``.  Where the index is
    matters, so the features keep their layout into the fully connected layer."""

    def __init__(self, width: float = 1.0):
        super().__init__()
        c1, c2, c3, c4 = (max(8, int(round(c * width))) for c in (16, 32, 48, 64))
        self.features = nn.Sequential(
            _cbr(3, c1), nn.MaxPool2d(2),                  # 32 x 24
            _cbr(c1, c2), _cbr(c2, c2), nn.MaxPool2d(2),   # 16 x 12
            _cbr(c2, c3), _cbr(c3, c3), nn.MaxPool2d(2),   # 8 x 6
            _cbr(c3, c4),
        )
        cells = (REFINE_PATCH_H // 8) * (REFINE_PATCH_W // 8)
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(c4 * cells, 128), nn.ReLU(inplace=True), nn.Linear(128, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x))
