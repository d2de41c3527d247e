"""The training command's time budget (vision.training.budget): what it gives up, in
which order, and that what it plans fits the time it was given."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.training import budget as B
from vision.training.budget import BudgetError, Speeds, classifier_epochs, estimate, plan
from vision.training.train import CONFIGS

FULL = CONFIGS["full"]
INDICES = 72124   # the first draw of `full`, seed 1 (session 32)
ZEN5 = Speeds(draw=210.0, det_step=0.078, refine_step=0.066, cls_step=0.064, cls_alone_step=0.095)


def _usable(left: float, speeds: Speeds) -> float:
    return left - B.MARGIN * (left + speeds.draw)


def test_a_recipe_that_fits_is_trained_as_it_is():
    p = plan(FULL, ZEN5, INDICES, left=7200 - 370)
    assert not p.cut and p.seconds == p.recipe_seconds
    assert (p.det_steps, p.refine_epochs, p.cls_members, p.cls_epochs) == (6000, 8, 3, 14)
    assert "the recipe fits" in p.describe(FULL)


def test_the_estimate_matches_the_measured_run():
    """Session 32's run on the Zen 5: 4877 s in all, 370 of them before the first draw
    was in; the estimate from there should be within a tenth of the remaining 4507 s."""
    assert abs(estimate(FULL, ZEN5, INDICES, 6000, 8, 3, 14) - 4507) < 450


def test_the_recipe_and_its_tuning_fit_where_a_whole_run_fitted_them():
    """Session 66's run on another Zen 5 (its model.json's speeds and first draw): the plan kept
    everything, tuning included, and the run took 4432 s from the plan to its end (3837 to the
    classifiers' 8-bit files, 595 for the tuning).  The estimate was a sixth high there: it
    should stay at or over what the run took, and within a fifth of it."""
    speeds = Speeds(draw=197.3, det_step=0.05955, refine_step=0.06948, cls_step=0.05792, cls_alone_step=0.0621)
    p = plan(FULL, speeds, 72318, left=7200 - 360)
    assert not p.cut and p.tune and (p.det_steps, p.refine_epochs, p.cls_members, p.cls_epochs) == (6000, 8, 3, 14)
    trained = estimate(FULL, speeds, 72318, 6000, 8, 3, 14)
    assert 3837 <= trained <= 1.2 * 3837
    assert 595 <= B.tuning(FULL, speeds, 72318, 3) <= 1.2 * 595
    assert p.seconds == trained + B.tuning(FULL, speeds, 72318, 3)


def test_the_tuning_is_kept_where_it_fits_and_given_up_first_where_not():
    recipe = estimate(FULL, ZEN5, INDICES, 6000, 8, 3, 14)
    tune = B.tuning(FULL, ZEN5, INDICES, 3)
    assert tune > 0 and B.tuning(replace(FULL, tune_scenes=0), ZEN5, INDICES, 3) == 0
    p = plan(FULL, ZEN5, INDICES, left=7200 - 370)
    assert p.tune and p.seconds == recipe + tune
    # A budget that holds the recipe but not its tuning: the tuning goes, nothing else.
    left = (recipe + tune / 2) / (1 - 2 * B.MARGIN)
    assert _usable(left, ZEN5) > recipe
    p = plan(FULL, ZEN5, INDICES, left)
    assert not p.tune and p.cut and (p.cls_members, p.cls_epochs, p.det_steps) == (3, 14, 6000)
    assert p.seconds == recipe and p.recipe_seconds == recipe + tune
    assert p.describe(FULL).split("to fit, ")[1].startswith("no tuning on squeezed indices (about")
    # A config without tuning never plans one, and is not cut for it.
    p = plan(replace(FULL, tune_scenes=0), ZEN5, INDICES, left)
    assert not p.tune and not p.cut


def test_the_classifier_epochs_keep_the_tunings_time_aside():
    steps = [700, 700, 700]
    epoch = sum(steps) * ZEN5.cls_step
    left = (B.FINISH_SECONDS + 10.5 * epoch) / (1 - B.MARGIN)     # ten epochs and a half fit
    assert classifier_epochs(14, 3, steps, ZEN5, left) == 10
    assert classifier_epochs(14, 3, steps, ZEN5, left, after=3 * epoch) == 7
    assert classifier_epochs(14, 3, steps, ZEN5, left, after=left) == 1    # (never fewer than one)


def test_classifiers_beyond_two_go_first_the_last_first_and_keep_their_epochs():
    # A machine half as slow again: the recipe (about 123 minutes) does not fit; without
    # the third classifier (its draw and its training) it does.
    slow = Speeds(*(1.5 * v for v in (ZEN5.draw, ZEN5.det_step, ZEN5.refine_step, ZEN5.cls_step,
                                    ZEN5.cls_alone_step)))
    left = 7200 - 1.5 * 370
    assert estimate(FULL, slow, INDICES, 6000, 8, 3, 14) > _usable(left, slow)
    p = plan(FULL, slow, INDICES, left)
    assert p.cut and (p.det_steps, p.refine_epochs, p.cls_members, p.cls_epochs) == (6000, 8, 2, 14)
    assert p.seconds <= _usable(left, slow) < p.recipe_seconds
    said = p.describe(FULL)
    assert "2 classifiers instead of 3" in said and "detector" not in said and "--hours 0" in said


def test_the_tuning_comes_back_beside_the_classifiers_kept_where_it_fits():
    """The tuning goes first, to keep a classifier; once the third classifier is given up, the
    time it leaves may hold the tuning of the two kept again (session 65's Zen 4: 89 minutes
    planned for two classifiers untuned, where about 113 were usable)."""
    slow = Speeds(*(1.5 * v for v in (ZEN5.draw, ZEN5.det_step, ZEN5.refine_step, ZEN5.cls_step,
                                    ZEN5.cls_alone_step)))
    two = estimate(FULL, slow, INDICES, 6000, 8, 2, 14)
    tune = B.tuning(FULL, slow, INDICES, 2)
    p = plan(FULL, slow, INDICES, 7200 - 1.5 * 370)
    assert p.tune and p.cut and (p.det_steps, p.refine_epochs, p.cls_members, p.cls_epochs) == (6000, 8, 2, 14)
    assert p.seconds == two + tune
    said = p.describe(FULL)
    assert "2 classifiers instead of 3" in said and "tuning" not in said
    # Where the two fit and their tuning does not, they are kept untuned.
    left = (two + tune / 2 + B.MARGIN * slow.draw) / (1 - B.MARGIN)
    assert abs(_usable(left, slow) - (two + tune / 2)) < 1e-6
    p = plan(FULL, slow, INDICES, left)
    assert not p.tune and (p.cls_members, p.cls_epochs) == (2, 14) and p.seconds == two
    assert p.describe(FULL).split("to fit, ")[1].startswith("no tuning on squeezed indices, 2 classifiers instead of 3")


def test_two_classifiers_then_give_up_epochs_before_one_is_dropped():
    # The Zen 3 of session 31 (float32): two full classifiers do not fit; two of 6 epochs
    # do, in about the time of one classifier of 13.
    zen3 = Speeds(draw=366.0, det_step=0.22, refine_step=0.19, cls_step=0.19, cls_alone_step=0.22)
    left = 7200 - 642
    p = plan(FULL, zen3, INDICES, left)
    assert (p.det_steps, p.refine_epochs, p.cls_members, p.cls_epochs) == (6000, 8, 2, 6)
    assert p.seconds <= _usable(left, zen3) < estimate(FULL, zen3, INDICES, 6000, 8, 2, 7)
    assert "2 classifiers instead of 3, 6 classifier epochs instead of 14" in p.describe(FULL)
    # A little slower still, and two classifiers of 6 epochs no longer fit: one of 14, or
    # what of it fits, is trained instead.
    slower = replace(zen3, cls_step=0.25)
    assert estimate(FULL, slower, INDICES, 6000, 8, 2, 6) > _usable(left, slower)
    p = plan(FULL, slower, INDICES, left)
    assert p.cls_members == 1 and p.seconds <= _usable(left, slower)
    assert "read under the recall and exact-set targets" in p.describe(FULL)


def test_the_float32_machine_of_session_56_keeps_one_classifier_and_says_what_that_costs():
    # The speeds its full run recorded in model.json (the time left as it was once the
    # probe's minute was spent).
    zen3_kvm = Speeds(draw=502.8, det_step=0.3288, refine_step=0.3324, cls_step=0.2266, cls_alone_step=0.2335)
    p = plan(FULL, zen3_kvm, 72400, 7200 - 883)
    # Since session 59 the detector keeps its steps there, the refiner giving up half its
    # epochs and the classifier those that fit (it planned 4134 detector steps, 6 and 9).
    assert (p.det_steps, p.refine_epochs, p.cls_members, p.cls_epochs, p.tune) == (6000, 4, 1, 8, False)
    assert p.seconds <= _usable(7200 - 883, zen3_kvm) < estimate(FULL, zen3_kvm, 72400, 6000, 4, 1, 9)
    said = p.describe(FULL)
    assert "1 classifier instead of 3" in said and "read under the recall and exact-set targets" in said
    assert said.endswith("--hours 0 trains the whole recipe")
    # Two classifiers kept say nothing of the sort.
    zen3 = Speeds(draw=366.0, det_step=0.22, refine_step=0.19, cls_step=0.19, cls_alone_step=0.22)
    assert "targets" not in plan(FULL, zen3, INDICES, 7200 - 642).describe(FULL)


def test_the_float32_machine_of_session_60_keeps_two_classifiers_on_half_the_refiner():
    # The speeds its full run recorded in model.json, from a fresh data folder (the time
    # left as it was once the probe's minute was spent).
    zen3_kvm = Speeds(draw=373.8, det_step=0.2471, refine_step=0.2828, cls_step=0.1738, cls_alone_step=0.2661)
    left = 7200 - 757
    # Two classifiers of the least epochs do not fit beside the whole refiner ...
    assert estimate(FULL, zen3_kvm, 72400, 6000, 8, 2, 6) > _usable(left, zen3_kvm)
    p = plan(FULL, zen3_kvm, 72400, left)
    # ... so the refiner gives up half its epochs and two classifiers stay, with the epochs
    # that then fit (before session 60: one classifier of 10 epochs).
    assert (p.det_steps, p.refine_epochs, p.cls_members, p.cls_epochs, p.tune) == (6000, 4, 2, 7, False)
    assert p.seconds <= _usable(left, zen3_kvm) < estimate(FULL, zen3_kvm, 72400, 6000, 4, 2, 8)
    said = p.describe(FULL)
    assert "2 classifiers instead of 3" in said and "4 refiner epochs instead of 8" in said
    assert "detector" not in said and "targets" not in said


def test_an_ensemble_of_two_is_never_cut_below_its_least_epochs():
    assert B._ensembles(FULL)[-1] == (2, math.ceil(14 * B.LEAST_MEMBER_SHARE))
    one = replace(FULL, cls_members=1)
    assert B._ensembles(one) == [(1, 14)]
    short = replace(FULL, cls_members=2, cls_epochs=1)   # `tiny`'s: nothing to shorten
    assert B._ensembles(short) == [(2, 1)]


def test_two_classifiers_on_half_the_refiner_go_before_one_on_the_whole():
    """Hypothesis's find (session 66): with few indices, one classifier of 14 epochs beside the
    whole refiner fitted, and was planned, where two of 6 beside half the refiner fitted too."""
    s = Speeds(draw=1.0, det_step=1.25, refine_step=2.0, cls_step=1.5, cls_alone_step=1.0)
    assert estimate(FULL, s, 180, 6000, 8, 1, 14) <= _usable(8001.0, s)
    p = plan(FULL, s, 180, 8001.0)
    assert (p.det_steps, p.refine_epochs, p.cls_members) == (6000, 4, 2) and p.cls_epochs >= 6


def test_with_one_classifier_left_the_refiner_gives_way_first_then_the_classifier():
    # One classifier of 14 epochs with the whole refiner does not fit; with half its epochs it does.
    one = Speeds(draw=366.0, det_step=0.22, refine_step=0.25, cls_step=0.6, cls_alone_step=0.3)   # (no pair fits)
    whole, halved = (estimate(FULL, one, INDICES, 6000, ref, 1, 14) for ref in (8, 4))
    left = (whole + halved) / 2 / (1 - 2 * B.MARGIN)
    assert halved <= _usable(left, one) < whole
    p = plan(FULL, one, INDICES, left)
    assert (p.det_steps, p.refine_epochs, p.cls_members, p.cls_epochs) == (6000, 4, 1, 14)
    assert "4 refiner epochs instead of 8" in p.describe(FULL) and "detector" not in p.describe(FULL)
    # Less time: the classifier's epochs go next, the detector still whole, down to 6.
    left = (estimate(FULL, one, INDICES, 6000, 4, 1, 9) + 10) / (1 - 2 * B.MARGIN)
    p = plan(FULL, one, INDICES, left)
    assert (p.det_steps, p.refine_epochs, p.cls_members, p.cls_epochs) == (6000, 4, 1, 9)
    # A refiner of one epoch, or none, has nothing to halve.
    assert plan(replace(FULL, refine_epochs=1), one, INDICES, left).refine_epochs == 1


def test_with_one_short_classifier_left_every_network_gives_up_the_same_share():
    slow = Speeds(draw=366.0, det_step=0.5, refine_step=0.5, cls_step=0.5, cls_alone_step=0.6)
    left = 7200 - 900
    p = plan(FULL, slow, INDICES, left)
    assert p.cut and p.cls_members == 1
    # The share of what the stage before left: the whole detector, half the refiner, 6 epochs.
    least_epochs = math.ceil(FULL.cls_epochs * B.LEAST_MEMBER_SHARE)
    half_refiner = math.ceil(FULL.refine_epochs * B.LEAST_REFINER_SHARE)
    assert estimate(FULL, slow, INDICES, FULL.det_steps, half_refiner, 1, least_epochs) > _usable(left, slow)
    share = p.det_steps / FULL.det_steps
    assert B.LEAST_SHARE <= share < 1
    assert abs(p.refine_epochs - half_refiner * share) <= 0.5            # (rounded)
    assert abs(p.cls_epochs - least_epochs * share) <= 1                  # (rounded down)
    assert p.seconds <= _usable(left, slow)
    # ... and the largest that fits: a twentieth more would not.
    more = estimate(FULL, slow, INDICES, round(p.det_steps * 1.05), p.refine_epochs, 1,
                    max(p.cls_epochs, math.floor(least_epochs * share * 1.05)))
    assert more > _usable(left, slow) or p.det_steps >= FULL.det_steps * 0.95


def test_a_budget_that_holds_too_little_is_refused_with_what_it_would_need():
    with pytest.raises(BudgetError, match=r"would take about \d+ more minutes .* and 10 are left: give more --hours"):
        plan(FULL, ZEN5, INDICES, left=600)


def test_a_reused_detector_costs_no_time():
    slow = Speeds(draw=300.0, det_step=0.0, refine_step=0.2, cls_step=0.2, cls_alone_step=0.25)
    with_det = replace(slow, det_step=0.3)
    assert estimate(FULL, with_det, INDICES, 6000, 8, 3, 14) - estimate(FULL, slow, INDICES, 6000, 8, 3, 14) \
        == pytest.approx(6000 * 0.3)


speeds = st.builds(Speeds, draw=st.floats(1, 1000), det_step=st.floats(0, 2), refine_step=st.floats(0, 2),
                   cls_step=st.floats(0.001, 2), cls_alone_step=st.floats(0.001, 2))


@settings(max_examples=300, deadline=None)
@given(speeds, st.floats(0, 20000), st.integers(1, 200000), st.sampled_from(["full", "quick", "tiny"]))
def test_what_is_planned_fits_and_never_asks_for_more_than_the_recipe(s, left, indices, config):
    cfg = CONFIGS[config]
    # The least one-classifier run before the detector gives up steps: half the refiner, the least epochs.
    half_refiner = max(1, math.ceil(cfg.refine_epochs * B.LEAST_REFINER_SHARE)) if cfg.refiner else cfg.refine_epochs
    least_epochs = max(1, math.ceil(cfg.cls_epochs * B.LEAST_MEMBER_SHARE))
    try:
        p = plan(cfg, s, indices, left)
    except BudgetError:
        # Refused only when a quarter of that run does not fit.
        least = estimate(cfg, s, indices, max(1, round(cfg.det_steps * B.LEAST_SHARE)),
                         max(1, round(half_refiner * B.LEAST_SHARE)), 1,
                         max(1, math.floor(least_epochs * B.LEAST_SHARE)))
        assert least > _usable(left, s)
        return
    assert p.seconds <= _usable(left, s) + 1e-6
    assert 1 <= p.det_steps <= cfg.det_steps and 1 <= p.refine_epochs <= cfg.refine_epochs
    assert 1 <= p.cls_members <= cfg.cls_members and 1 <= p.cls_epochs <= cfg.cls_epochs
    if not p.cut:
        assert (p.det_steps, p.refine_epochs, p.cls_members, p.cls_epochs) == \
            (cfg.det_steps, cfg.refine_epochs, cfg.cls_members, cfg.cls_epochs)
        assert p.recipe_seconds <= _usable(left, s) + 1e-6
    elif p.cls_members > 1:   # classifiers, their epochs and half the refiner's went before anything else
        assert p.det_steps == cfg.det_steps and p.refine_epochs in (cfg.refine_epochs, half_refiner)
        if p.refine_epochs < cfg.refine_epochs:   # only once two classifiers of the least epochs did not fit
            assert p.cls_members == 2
            assert estimate(cfg, s, indices, cfg.det_steps, cfg.refine_epochs, 2, least_epochs) > _usable(left, s)
        if p.cls_members > 2 or p.cls_epochs < cfg.cls_epochs:   # only two classifiers are shortened
            assert p.cls_members == 2 or p.cls_epochs == cfg.cls_epochs
            assert p.cls_epochs >= least_epochs
    if p.cls_members == 1 and cfg.cls_members >= 2:
        # One classifier only once two of the least epochs did not fit beside half the refiner.
        assert estimate(cfg, s, indices, cfg.det_steps, half_refiner, 2, least_epochs) > _usable(left, s)
    if p.cls_members == 1 and p.det_steps < cfg.det_steps:
        # The detector gives up steps only once one classifier of the least epochs, with half
        # the refiner's, does not fit beside the whole detector.
        assert estimate(cfg, s, indices, cfg.det_steps, half_refiner, 1, least_epochs) > _usable(left, s)
        assert p.refine_epochs <= half_refiner and p.cls_epochs <= least_epochs
    if p.cut:   # ... and none of the better ensembles, with every other step kept, would have fitted
        better = B._ensembles(cfg)
        if (p.det_steps, p.refine_epochs) == (cfg.det_steps, cfg.refine_epochs) \
                and (p.cls_members, p.cls_epochs) in better:
            better = better[:better.index((p.cls_members, p.cls_epochs))]
        for members, epochs in better:
            assert estimate(cfg, s, indices, cfg.det_steps, cfg.refine_epochs, members, epochs) > _usable(left, s)


def test_the_classifier_epochs_are_checked_against_the_time_then_left():
    steps = [1136, 1158, 1153]
    per_epoch = sum(steps) * ZEN5.cls_step
    assert classifier_epochs(14, 3, steps, ZEN5, left=10 * 3600) == 14   # never more than planned
    left = 9 * per_epoch + B.FINISH_SECONDS + 1
    epochs = classifier_epochs(14, 3, steps, ZEN5, left)
    assert epochs < 14 and epochs * per_epoch <= left - B.FINISH_SECONDS - B.MARGIN * left
    assert (epochs + 1) * per_epoch > left - B.FINISH_SECONDS - B.MARGIN * left
    assert classifier_epochs(14, 3, steps, ZEN5, left=1.0) == 1   # at least one: the run goes on
    # One classifier trains alone, with every thread: its own speed counts.
    left = (5 * steps[0] * ZEN5.cls_alone_step + B.FINISH_SECONDS) / (1 - B.MARGIN) + 1
    assert classifier_epochs(14, 1, steps[:1], ZEN5, left) == 5
