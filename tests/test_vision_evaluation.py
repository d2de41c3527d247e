"""vision.evaluation's sampling intervals: how far one benchmark sample pins a figure down."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vision.evaluation import Summary, wilson_interval


@given(st.integers(1, 100000), st.data())
def test_the_interval_holds_the_proportion_and_stays_in_bounds(n, data):
    k = data.draw(st.integers(0, n))
    lo, hi = wilson_interval(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0 and hi > lo
    # Four times the trials, about half the width (exactly so in the limit).
    lo4, hi4 = wilson_interval(4 * k, 4 * n)
    assert hi4 - lo4 < hi - lo


def test_a_large_sample_gives_the_normal_approximation():
    p, n = 0.96, 1_000_000
    lo, hi = wilson_interval(round(p * n), n)
    half = 1.96 * math.sqrt(p * (1 - p) / n)
    assert lo == pytest.approx(p - half, abs=1e-5) and hi == pytest.approx(p + half, abs=1e-5)


def test_nothing_to_count_says_nothing_and_impossible_counts_are_refused():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="5 successes in 4 trials"):
        wilson_interval(5, 4)
    with pytest.raises(ValueError):
        wilson_interval(-1, 4)


def test_a_summary_gives_each_figure_on_its_own_count():
    # No wrong card in 200 read: precision 100%, but 200 readings only show it above ~98.1%.
    s = Summary(images=100, readable=210, tp=200, fp=0, tp_readable=200, exact=90)
    iv = s.intervals()
    assert iv["precision"][1] == 1.0 and 0.98 < iv["precision"][0] < 0.985
    assert iv["recall"] == wilson_interval(200, 210) and iv["exact"] == wilson_interval(90, 100)
    assert iv["exact"][1] - iv["exact"][0] > iv["recall"][1] - iv["recall"][0]   # fewer images than cards


def _card(name: str, x: float, y: float, visible: float = 1.0):
    """A 100 x 150 px card annotation with its top-left corner at (x, y)."""
    import numpy as np

    from vision.synth.scene import CardAnnotation, IndexAnnotation
    corners = np.array([[x, y], [x + 100, y], [x + 100, y + 150], [x, y + 150]], float)
    quad = np.array([[x + 5, y + 5], [x + 15, y + 5], [x + 15, y + 25], [x + 5, y + 25]], float)
    index = IndexAnnotation((x + 10, y + 15), 0.0, 20.0, 10.0, quad, visible)
    return CardAnnotation(name, "test", corners, (int(x), int(y), int(x) + 100, int(y) + 150),
                          (x + 50, y + 75), 0.0, 150.0, [index], visible)


def test_unknown_boxes_are_told_apart_by_what_lies_under_them():
    """An unknown on a card not read is the useful kind; on cards all read, a repeat; on
    nothing, a phantom (the live table would ask players to turn a card that is not there)."""
    from vision.evaluation import score_image
    from vision.recogniser import CardReading, Recognition, UnknownCard
    from vision.synth.scene import SceneAnnotation

    ann = SceneAnnotation(1280, 720, [_card("AS", 100, 100), _card("7H", 400, 100), _card("KD", 450, 150)])
    result = Recognition(
        cards=[CardReading("AS", 0.99, (100, 100, 200, 250)), CardReading("7H", 0.98, (400, 100, 500, 250))],
        unknown=[UnknownCard((120, 120, 160, 160)),     # on AS, read: a repeat
                 UnknownCard((470, 200, 490, 220)),     # on 7H (read) and KD under it (not read): useful
                 UnknownCard((800, 500, 840, 540)),     # on the bare table: a phantom
                 UnknownCard((900, 100, 960, 160))])    # another phantom
    s = score_image(result, ann)
    assert (s.unknown, s.phantom, s.repeat) == (4, 2, 1)
    assert s.missed_cards == ["KD"] and not s.exact
    total = Summary()
    total.add(s)
    total.add(s)
    assert (total.unknown, total.phantom, total.repeat) == (8, 4, 2)
    assert total.line("all").endswith("unknown    8 (on no card 4, repeats 2)")
