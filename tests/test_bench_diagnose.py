"""bench/diagnose_recognition.py: its account of the misses adds up, and its helpers say what they claim."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from bench_modules import load_bench
from vision.synth.decks import HELD_OUT


@pytest.fixture(scope="module")
def diag():
    return load_bench("diagnose_recognition", list(HELD_OUT))


def reading(diag, **cards: float) -> np.ndarray:
    p = np.zeros(52)
    for name, value in cards.items():
        p[diag.CARD_INDEX[name]] = value
    return p


def test_the_part_in_doubt_is_the_rank_the_suit_both_or_neither(diag):
    assert diag.doubtful_part(reading(diag, QC=0.6, QS=0.4), "QC") == "suit"
    assert diag.doubtful_part(reading(diag, **{"QC": 0.55, "KC": 0.4, "QS": 0.05}), "QC") == "rank"
    assert diag.doubtful_part(reading(diag, QC=0.5, KS=0.5), "QC") == "both"
    assert diag.doubtful_part(reading(diag, QC=0.95, QS=0.03, KC=0.02), "QC") == "neither"
    # A misread card: the reading is sure of the rank and sure of another suit.
    assert diag.doubtful_part(reading(diag, **{"3S": 0.97, "3C": 0.03}), "3C") == "suit"
    # Shares are of the whole reading, so an unnormalised one counts the same.
    assert diag.doubtful_part(2 * reading(diag, QC=0.6, QS=0.4), "QC") == "suit"
    # The card index follows the recogniser's order of the 52 probabilities.
    assert [diag.CARD_INDEX[n] for n in ("AC", "AD", "2C", "KS")] == [0, 1, 4, 51]


def test_height_bands_cover_every_height_once(diag):
    assert diag.height_band(0) == "0-40 px"
    assert diag.height_band(39.9) == "0-40 px"
    assert diag.height_band(40) == "40-50 px"
    assert diag.height_band(69.99) == "60-70 px"
    assert diag.height_band(70) == diag.height_band(500) == "70+ px"
    for bad in (-1.0, math.nan):
        with pytest.raises(ValueError, match="not a height"):
            diag.height_band(bad)


def test_the_account_of_a_few_scenes_adds_up(diag, capsys):
    # At an accept threshold this high most cards are missed, whatever the model: every count is exercised.
    assert diag.main(["--n", "6", "--seed", "5", "--threshold", "0.999"]) == 0
    out = capsys.readouterr().out
    readable = int(re.search(r"readable cards\s+(\d+)", out).group(1))
    bands = re.findall(r"^\s+(\d+(?:-\d+|\+) px)\s+cards\s+(\d+)\s+missed\s+(\d+) \([\d.]+%\): ([\d /]+)$",
                       out, re.M)
    assert [b[0] for b in bands] == ["0-40 px", "40-50 px", "50-60 px", "60-70 px", "70+ px"]
    assert sum(int(c) for _, c, _, _ in bands) == readable > 0
    # Each band's misses, by the stage that lost them, add up to its misses, and over
    # the bands to the whole account's count of each stage.
    reasons = [[int(v) for v in why.split(" / ")] for *_, why in bands]
    assert all(len(r) == len(diag.MISS_REASONS) for r in reasons)
    assert [sum(r) for r in reasons] == [int(m) for _, _, m, _ in bands]
    for k, why in enumerate(diag.MISS_REASONS):
        listed = re.search(rf"^\s+{re.escape(why)}\s+(\d+)", out, re.M)
        assert sum(r[k] for r in reasons) == (int(listed.group(1)) if listed else 0)
    decks = re.findall(r"^\s+([a-z-]+)\s+cards\s+(\d+)\s+missed\s+(\d+)", out, re.M)
    missed = sum(int(m) for _, _, m in decks)
    assert missed > 0
    assert sum(int(m) for _, _, m, _ in bands) == missed
    # The same cards and misses split by how much of the most visible index shows, and by
    # how many indices are readable: every readable card in one band of each, each band's
    # stages adding up to its misses and, over the bands, to each stage's count.
    for pattern, labels in ((r"0\.\d\d(?:-0\.\d\d|\+)", ["0.85-0.90", "0.90-0.95", "0.95-0.99", "0.99+"]),
                            (r"\d (?:index|indices)", None)):
        split = re.findall(rf"^\s+({pattern})\s+cards\s+(\d+)\s+missed\s+(\d+) \([\d.]+%\): ([\d /]+)$", out, re.M)
        if labels:
            assert [b[0] for b in split] == labels
        else:
            assert {b[0] for b in split} <= {"1 index", "2 indices"}
        assert sum(int(c) for _, c, _, _ in split) == readable
        assert sum(int(m) for _, _, m, _ in split) == missed
        stages = [[int(v) for v in why.split(" / ")] for *_, why in split]
        assert [sum(r) for r in stages] == [int(m) for _, _, m, _ in split]
        assert [sum(r[k] for r in stages) for k in range(len(diag.MISS_REASONS))] == \
            [sum(r[k] for r in reasons) for k in range(len(diag.MISS_REASONS))]
    parts = dict(re.findall(r"^\s+(rank|suit|both|neither)\s+(\d+)$", out, re.M))
    found = int(re.search(r"missed cards with an index found in place \((\d+)\)", out).group(1))
    assert set(parts) == {"rank", "suit", "both", "neither"}
    assert 0 < sum(map(int, parts.values())) == found <= missed


def test_the_readings_at_the_threshold_add_up_by_how_much_of_their_index_shows(diag, capsys):
    assert diag.main(["--n", "8", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    bands = re.findall(r"^\s+(\d\.\d\d(?:-\d\.\d\d|\+))\s+read\s+(\d+)\s+wrong\s+(\d+) \([\d.]+%\): (\d+) / (\d+) / (\d+)$",
                       out, re.M)
    assert [b[0] for b in bands] == ["0.00-0.45", "0.45-0.70", "0.70-0.85", "0.85-0.97", "0.97+"]
    counts = [[int(v) for v in b[1:]] for b in bands]
    # Each band's wrong readings are its wrong ranks, suits and both, and no more than it read.
    assert all(wrong == rank + suit + both <= read for read, wrong, rank, suit, both in counts)
    # The readings of covered indices again, by how much of their pip shows: the same
    # readings as the bands under READABLE_FRACTION, and as many of them wrong.
    covered = counts[:3]          # 0.00-0.45, 0.45-0.70 and 0.70-0.85: under READABLE_FRACTION
    # And by how much of their rank shows: the same readings again.
    for part in ("pip", "rank"):
        lines = re.findall(rf"^\s+{part} (\d\.\d\d(?:-\d\.\d\d|\+))\s+read\s+(\d+)\s+wrong\s+(\d+) "
                           r"\([\d.]+%\): (\d+) / (\d+) / (\d+)$", out, re.M)
        assert [b[0] for b in lines] == ["0.00-0.50", "0.50-0.90", "0.90+"]
        by_part = [[int(v) for v in b[1:]] for b in lines]
        for k in range(5):
            assert sum(c[k] for c in by_part) == sum(c[k] for c in covered)
    off = int(re.search(r"on no index \(farther than [\d.]+ of an index height from every one\): read (\d+)$",
                        out, re.M).group(1))
    # A reading of a whole index is almost always made: eight scenes hold readable cards.
    assert counts[-1][0] > 0
    assert sum(c[0] for c in counts) + off > 0


def test_shown_bands_and_wrong_parts(diag):
    assert diag.shown_band(0.0) == diag.shown_band(0.449) == "0.00-0.45"
    assert diag.shown_band(diag.HIDDEN_FRACTION) == "0.45-0.70"
    assert diag.shown_band(diag.READABLE_FRACTION) == "0.85-0.97"
    assert diag.shown_band(0.97) == diag.shown_band(1.0) == "0.97+"
    for bad in (-0.1, math.nan):
        with pytest.raises(ValueError, match="visible fraction"):
            diag.shown_band(bad)
    assert diag.part_band(0.0) == diag.part_band(0.49) == "0.00-0.50"
    assert diag.part_band(0.5) == "0.50-0.90" and diag.part_band(0.9) == diag.part_band(1.0) == "0.90+"
    with pytest.raises(ValueError, match="visible fraction"):
        diag.part_band(math.nan)
    assert diag.wrong_part("10S", "10C") == "suit"
    assert diag.wrong_part("JH", "QH") == "rank"
    assert diag.wrong_part("10H", "10H") == "neither"
    assert diag.wrong_part("AS", "KD") == "both"


def test_visible_bands_cover_every_readable_fraction_once(diag):
    assert diag.visible_band(diag.READABLE_FRACTION) == "0.85-0.90"
    assert diag.visible_band(0.9) == "0.90-0.95"
    assert diag.visible_band(0.989) == "0.95-0.99"
    assert diag.visible_band(0.99) == diag.visible_band(1.0) == "0.99+"
    for bad in (0.5, math.nan):   # under READABLE_FRACTION no card counts as readable
        with pytest.raises(ValueError, match="visible fraction"):
            diag.visible_band(bad)


def test_several_seeds_are_counted_as_one_account(diag, capsys):
    def counts(argv):
        assert diag.main(argv) == 0
        out = capsys.readouterr().out
        return out, {key: int(v) for key, v in re.findall(r"^\s+(readable (?:cards|indices))\s+(\d+)", out, re.M)}

    _, five = counts(["--n", "3", "--seed", "5"])
    _, six = counts(["--n", "3", "--seed", "6"])
    out, both = counts(["--n", "3", "--seeds", "5,6"])
    assert out.startswith("6 scenes (seeds 5, 6, 3 of each)")
    assert set(both) == {"readable cards", "readable indices"}
    assert both == {key: five[key] + six[key] for key in both} and five != six
    with pytest.raises(SystemExit):   # one seed or several, not both
        diag.main(["--seed", "5", "--seeds", "5,6"])
