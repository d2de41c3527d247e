"""Fit the training command into its time budget (``--hours``; 2 in ``full``).

The recipe is fixed in steps, its time is not: the same ``full`` run took 81
minutes on a CPU that computes bfloat16 natively (an AMD Zen 5, session 32 in
docs/vision-experiments.md) and would take about 3.8 hours in float32 on a Zen 3
(session 31).  So once the first draw of scenes is rendered, the command knows
how long a draw takes on this machine; it then times a few steps of each network
(``train.measure_speeds``) and :func:`plan` works out what fits in the time left.

What it gives up first is what earlier sessions found costs least:

1. the tuning of the classifiers on squeezed indices once they are trained
   (``tune_scenes``, vision.training.tune): it mends a leaning camera's readings, and the
   overhead scenes read as well without it (session 54).  Where giving up classifiers or
   their epochs (2 and 3 below) leaves the time for it beside those kept, it comes back
   (session 65: two classifiers of the recipe's epochs and their tuning on a Zen 4); not
   once the refiner is cut (4);
2. classifiers of the ensemble beyond two, the last first (each costs a whole draw
   of scenes and a full classifier's training), the ones kept keeping all their epochs
   (three of 4 epochs read fewer images exactly than two of 6, session 36);
3. then the two classifiers' epochs, down to :data:`LEAST_MEMBER_SHARE` of the
   recipe's: two short classifiers read far fewer wrong cards than one long one
   for the same time (session 34 in docs/vision-experiments.md);
4. then half the refiner's epochs (:data:`LEAST_REFINER_SHARE`: 4 of 8 read as 8 did,
   session 37), keeping two classifiers of as many epochs as then fit, down to the same
   least: on session 60's float32 machine the command's one classifier of 10 epochs, on
   a detector of 6000 steps and a refiner of 4 epochs, read 97.56% of the cards and 92.41%
   of the images exactly (34 wrong), and session 57's two classifiers of 6 epochs on such
   a detector and refiner (session 59's, the networks swapped in; not a run of the command)
   98.19 and 93.93 (26 wrong); at that machine's speeds two classifiers of 7 epochs fit
   beside the refiner's 4 epochs and not of 6 beside its 8;
5. then the second classifier.  Not the other way round: two classifiers of 6 epochs
   kept on 40% of the detector's and the refiner's steps read fewer cards and fewer
   images exactly than one classifier on two thirds of them, on the same machine and
   scenes (session 57).  With one classifier left, the refiner keeps its half, and the
   classifier's epochs go down to :data:`LEAST_MEMBER_SHARE` of the recipe's, the
   detector keeping all its steps: on
   session 56's float32 machine that is a detector of 6000 steps, a refiner of 4 epochs
   and a classifier of 8, which read 0.4 points more of the cards and 0.8 more of the
   images exactly than the 4134 steps, 6 epochs and 8 epochs that the same share of
   every network gave there, for 4 more wrong cards in about 6850 (99.68% precision;
   session 59; a classifier of 5 epochs read only 0.1 points fewer cards than one of 8);
6. then every network's steps in the same share of those.

Once every crop is cut, :func:`classifier_epochs` checks the classifiers' epochs
against the time then left, with the crops' real number, so that an estimate
that was off early on is made up before the longest part; and each classifier,
after its first epoch, against that epoch's real time (``train.train_classifier``'s
``until``), for what the probe misses: side by side, it once said a fifth too little
(session 47, its workers' own times; since session 48 it times them together).  The
plan and the speeds it was made from go into model.json ("budget").  Two classifiers
cut from the recipe's are written with the config's ``pair_accept_threshold``
(``train.main``): a shorter ensemble reads more images exactly at a lower threshold
(session 47).

With the speeds of the two machines (seconds; ``left``: the budget less the
designs and the first draw), the Zen 5 trains the recipe and the Zen 3 two
classifiers of 6 epochs:

>>> from vision.training.train import CONFIGS
>>> zen5 = Speeds(draw=210.0, det_step=0.078, refine_step=0.066, cls_step=0.064, cls_alone_step=0.095)
>>> p = plan(CONFIGS["full"], zen5, indices=72124, left=7200 - 370)
>>> (p.cls_members, p.cls_epochs, p.det_steps, p.tune, p.cut)
(3, 14, 6000, True, False)
>>> zen3 = Speeds(draw=366.0, det_step=0.22, refine_step=0.19, cls_step=0.19, cls_alone_step=0.22)
>>> p = plan(CONFIGS["full"], zen3, indices=72124, left=7200 - 642)
>>> (p.cls_members, p.cls_epochs, p.det_steps, p.refine_epochs, p.tune, p.cut)
(2, 6, 6000, 8, False, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Work besides the networks' steps once the first draw is in, in draws' time: running
#: the detector over the scenes and cutting the refiner's and classifiers' crops
#: (measured on the `full` runs of sessions 31 and 32: 1.1 and 1.2 draws), plus each
#: further classifier's draw (its scenes and crops: 1.0 draw each).
AROUND_DRAWS = 1.3
#: Seconds for what follows the classifiers: export, and quantising (100 scenes rendered
#: and read: 17 s on the Zen 5 with the classifiers alone; with the detector and the
#: refiner too, since session 63, 51 s for a model of one classifier on the float32 Zen 3).
FINISH_SECONDS = 90.0
#: The share of the budget kept in hand for what the estimates miss.
MARGIN = 0.04
#: Crops per annotated index of the first draw, as the `full` recipe cuts them (session 32:
#: 88836 refiner crops for 72124 indices; session 46, with the half-covered indices taught:
#: 158767 classifier crops for the same 72124, 161623 for the most of its three draws).
REFINER_CROPS_PER_INDEX = 1.25
CLASSIFIER_CROPS_PER_INDEX = 2.25
#: The fewest steps of each network that a cut may leave, as a share of the recipe's.
LEAST_SHARE = 0.25
#: The fewest epochs, as a share of the recipe's, that two classifiers may be cut to
#: before the budget keeps one instead (6 of `full`'s 14: two classifiers of 6 and of 7
#: epochs were measured against one of 14, session 34).  Not fewer: two of 4 epochs, which
#: cost about what one of 6 does, read what one classifier of 5 or 8 read (session 61).
LEAST_MEMBER_SHARE = 0.4
#: With one classifier left, the share of the refiner's epochs kept before any other
#: network gives up a step (session 37: a refiner of 4 epochs read as one of 8).
LEAST_REFINER_SHARE = 0.5


class BudgetError(ValueError):
    """The budget cannot hold even the smallest run: says how long that would take."""


@dataclass(frozen=True)
class Speeds:
    """Seconds measured on this machine (``train.measure_speeds``)."""
    #: The first draw of scenes: rendering and loading them.
    draw: float
    #: One detector step, one refiner step.
    det_step: float
    refine_step: float
    #: One classifier step, counted for the whole machine, when the classifiers train
    #: side by side (the workers' runs timed together, ``train._joint_step_seconds``).
    cls_step: float
    #: One step of a classifier trained alone with every thread.
    cls_alone_step: float

    def member_step(self, members: int) -> float:
        """The machine's seconds per classifier step with ``members`` classifiers."""
        return self.cls_step if members > 1 else self.cls_alone_step


@dataclass(frozen=True)
class Plan:
    """What the command will train, and its estimate of the time from now to the end."""
    det_steps: int
    refine_epochs: int
    cls_members: int
    cls_epochs: int
    seconds: float
    #: The same estimate for the config's own recipe.
    recipe_seconds: float
    #: Whether anything was given up.
    cut: bool
    #: Whether the classifiers are tuned once trained (the config's ``tune_scenes``, kept).
    tune: bool = False

    def describe(self, cfg) -> str:
        if not self.cut:
            return (f"the recipe fits: about {self.seconds / 60:.0f} more minutes at the speeds measured")
        changes = []
        if cfg.tune_scenes and not self.tune:
            changes.append("no tuning on squeezed indices")
        if self.cls_members != cfg.cls_members:
            changes.append(f"{self.cls_members} classifier{'s' * (self.cls_members > 1)} instead of {cfg.cls_members}")
        if self.det_steps != cfg.det_steps:
            changes.append(f"{self.det_steps} detector steps instead of {cfg.det_steps}")
        if cfg.refiner and self.refine_epochs != cfg.refine_epochs:
            changes.append(f"{self.refine_epochs} refiner epochs instead of {cfg.refine_epochs}")
        if self.cls_epochs != cfg.cls_epochs:
            changes.append(f"{self.cls_epochs} classifier epochs instead of {cfg.cls_epochs}")
        # One classifier where the recipe has an ensemble is the cut that costs most: say what
        # it cost when a whole run made one (sessions 56, 60 and 62), so nobody mistakes it for the recipe's.
        alone = (" a model of one classifier read under the recall and exact-set targets (97.3 to 97.8% of "
                 "the cards, 91.9 to 93.4% of the images exactly: docs/vision.md, Measured figures);"
                 if self.cls_members < 2 <= cfg.cls_members else "")
        return (f"the recipe would take about {self.recipe_seconds / 60:.0f} more minutes at the speeds "
                f"measured; to fit, {', '.join(changes)} (about {self.seconds / 60:.0f} minutes);{alone} "
                f"--hours 0 trains the whole recipe")


def _epoch_steps(crops: float, batch: int) -> int:
    return max(1, math.ceil(crops * 0.95 / batch))   # (train.epoch_steps: a twentieth is held out)


def estimate(cfg, speeds: Speeds, indices: int, det_steps: int, refine_epochs: int, members: int,
             epochs: int) -> float:
    """Seconds from the end of the first draw to the end of the command for these counts."""
    around = speeds.draw * (AROUND_DRAWS + (members - 1)) + FINISH_SECONDS
    det = det_steps * speeds.det_step
    ref = (refine_epochs * _epoch_steps(indices * REFINER_CROPS_PER_INDEX, cfg.cls_batch) * speeds.refine_step
           if cfg.refiner else 0.0)
    cls = members * epochs * _epoch_steps(indices * CLASSIFIER_CROPS_PER_INDEX, cfg.cls_batch) \
        * speeds.member_step(members)
    return around + det + ref + cls


def tuning(cfg, speeds: Speeds, indices: int, members: int) -> float:
    """Seconds of the tuning step (vision.training.tune) for ``members`` classifiers, 0 where the
    config has none: each classifier's draw of ``tune_scenes`` (rendered and cut as a draw is),
    its epochs' steps, and quantising again."""
    if not cfg.tune_scenes:
        return 0.0
    from vision.training.tune import EPOCHS   # (tune imports train, which imports this module)

    share = cfg.tune_scenes / cfg.scenes
    steps = EPOCHS * _epoch_steps(indices * share * CLASSIFIER_CROPS_PER_INDEX, cfg.cls_batch)
    return members * (speeds.draw * share + steps * speeds.member_step(members)) + FINISH_SECONDS


def _ensembles(cfg) -> list[tuple[int, int]]:
    """The classifiers (members, epochs each) to try with every other step kept, the
    best first: the recipe's, fewer members down to two, two with fewer epochs.  One
    classifier only where the recipe has one: an ensemble's last classifier goes only
    after the refiner's half, and then keeps the refiner at its half (:func:`plan`).

    >>> from vision.training.train import CONFIGS
    >>> _ensembles(CONFIGS["full"])
    [(3, 14), (2, 14), (2, 13), (2, 12), (2, 11), (2, 10), (2, 9), (2, 8), (2, 7), (2, 6)]
    """
    if cfg.cls_members < 2:
        return [(1, cfg.cls_epochs)]
    least = max(1, math.ceil(cfg.cls_epochs * LEAST_MEMBER_SHARE))
    return ([(members, cfg.cls_epochs) for members in range(cfg.cls_members, 1, -1)]
            + [(2, epochs) for epochs in range(cfg.cls_epochs - 1, least - 1, -1)])


def plan(cfg, speeds: Speeds, indices: int, left: float) -> Plan:
    """What of ``cfg`` (a train.Config) fits in ``left`` seconds after the first draw of
    scenes, whose ``indices`` annotated indices set the crops' number; a BudgetError when
    not even a quarter of every network's steps, with one classifier, fits."""
    usable = left - MARGIN * (left + speeds.draw)   # (the margin: a share of the whole budget, about)
    recipe = estimate(cfg, speeds, indices, cfg.det_steps, cfg.refine_epochs, cfg.cls_members, cfg.cls_epochs) \
        + tuning(cfg, speeds, indices, cfg.cls_members)
    # The recipe's own classifiers come first (``_ensembles``): with their tuning, that is the recipe.
    for members, epochs in _ensembles(cfg):
        seconds = estimate(cfg, speeds, indices, cfg.det_steps, cfg.refine_epochs, members, epochs)
        if seconds <= usable:
            # The tuning, given up first, comes back where it fits beside the classifiers kept.
            extra = tuning(cfg, speeds, indices, members)
            tune = bool(cfg.tune_scenes) and seconds + extra <= usable
            return Plan(cfg.det_steps, cfg.refine_epochs, members, epochs, seconds + extra * tune, recipe,
                        cut=((members, epochs) != (cfg.cls_members, cfg.cls_epochs)
                             or (bool(cfg.tune_scenes) and not tune)),
                        tune=tune)
    # Two classifiers of the least epochs do not fit beside the whole refiner: half the
    # refiner's epochs, then two classifiers again, then one; the detector whole (its steps
    # count most: sessions 59 and 60, the module's docstring).
    refine_epochs = max(1, math.ceil(cfg.refine_epochs * LEAST_REFINER_SHARE)) if cfg.refiner else cfg.refine_epochs
    least_epochs = max(1, math.ceil(cfg.cls_epochs * LEAST_MEMBER_SHARE))
    # (Two beside the whole refiner were tried above: with nothing to halve, only one is left.)
    pair_again = cfg.cls_members >= 2 and refine_epochs < cfg.refine_epochs
    for members in ((2, 1) if pair_again else (1,)):
        for epochs in range(cfg.cls_epochs, least_epochs - 1, -1):
            seconds = estimate(cfg, speeds, indices, cfg.det_steps, refine_epochs, members, epochs)
            if seconds <= usable:
                return Plan(cfg.det_steps, refine_epochs, members, epochs, seconds, recipe, cut=True)

    # Then every network's steps in the same share of those, the largest that fits (the
    # estimate grows with the share, so halve the interval).
    def counts(share: float) -> tuple[int, int, int]:
        return (max(1, round(cfg.det_steps * share)), max(1, round(refine_epochs * share)),
                max(1, math.floor(least_epochs * share)))

    lo, hi = LEAST_SHARE, 1.0
    if estimate(cfg, speeds, indices, *counts(lo)[:2], 1, counts(lo)[2]) > usable:
        det, ref, epochs = counts(lo)
        least = estimate(cfg, speeds, indices, det, ref, 1, epochs) + (left - usable)
        least_run = [f"{det} detector steps"] + ([f"{ref} refiner epoch{'s' * (ref > 1)}"] if cfg.refiner else [])
        raise BudgetError(f"even {', '.join(least_run)} and one classifier of {epochs} epoch{'s' * (epochs > 1)} "
                          f"would take about "
                          f"{least / 60:.0f} more minutes at the speeds measured, and {left / 60:.0f} are left: "
                          f"give more --hours, or --hours 0 for no limit")
    for _ in range(30):
        mid = (lo + hi) / 2
        det, ref, epochs = counts(mid)
        lo, hi = (mid, hi) if estimate(cfg, speeds, indices, det, ref, 1, epochs) <= usable else (lo, mid)
    det, ref, epochs = counts(lo)
    return Plan(det, ref, 1, epochs, estimate(cfg, speeds, indices, det, ref, 1, epochs), recipe, cut=True)


def classifier_epochs(planned: int, members: int, epoch_steps: list[int], speeds: Speeds, left: float,
                      after: float = 0.0) -> int:
    """The classifiers' epochs that fit in ``left`` seconds, once their crops are cut
    (``epoch_steps``: each classifier's steps per epoch), with ``after`` seconds kept for what
    follows them besides the export (the tuning's :func:`tuning`): ``planned`` or fewer, at least 1."""
    usable = left - FINISH_SECONDS - after - MARGIN * left
    per_epoch = sum(epoch_steps) * speeds.member_step(members)
    return max(1, min(planned, math.floor(usable / per_epoch)))

