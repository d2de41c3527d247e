"""Where does the recogniser lose cards?  A stage-by-stage account on held-out designs.

    .venv/bin/python bench/diagnose_recognition.py            # 160 scenes, seed 99
    .venv/bin/python bench/diagnose_recognition.py --n 400 --model /tmp/model
    .venv/bin/python bench/diagnose_recognition.py --n 960 --cache   # bench_recognition's cached scenes
    .venv/bin/python bench/diagnose_recognition.py --cache --n 560 --seeds 7,99,123,1,2,3,4,5  # one account

Renders the same kind of scenes as ``bench_recognition.py`` (held-out designs,
1280x720, 1-8 cards) and, for every readable index (at least
READABLE_FRACTION visible), asks: did the detector find it (a detection within
half an index height of its centre)?  How far off were its centre, angle and
size as detected, and after the refiner (and the second look, turned) put them right
(indices found only by the look at weak peaks are counted apart)?  Did the classifier
read it right, and how confident was it?  Then, per readable card, which
stage lost it: no index found, every found index misread, read right but
below the accept threshold, or lost when the indices were assembled into
cards.  Of the missed cards whose index was found in the right place, which
part of the reading was in doubt: the rank, the suit or both
(:func:`doubtful_part`); and how often a card is missed by the height of its
largest readable index (:data:`HEIGHT_BANDS`), by how much of its most
visible index shows (:data:`VISIBLE_BANDS`) and by how many of its indices
are readable, and which stage lost them (:data:`MISS_REASONS`).  And the other way round, the
wrong readings: every index read at the accept threshold, put on the nearest index that lies
in the scene (any card's, hidden or not), by how much of that index shows (:data:`SHOWN_BANDS`),
with the part read wrong (:func:`wrong_part`), and those of covered indices by how much of their
suit pip shows, and by how much of their rank (:data:`PART_BANDS`).  Prints the counts and a
confidence histogram of right readings; use it to decide what to improve
next.  Default seed 99 (not the benchmark's 7).  The scenes are
``bench_recognition.py``'s, so ``--cache`` reads the ones it keeps.
"""

from __future__ import annotations

import argparse
import copy
import math
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))   # bench_recognition, whose scenes these are

from bench_recognition import CACHE_DIR, cached_scenes, render_scenes, seed_list  # noqa: E402
from vision.evaluation import score_image  # noqa: E402
from vision.index_geometry import RANKS, SUITS  # noqa: E402
from vision.recogniser import CARD_NAMES, Recogniser  # noqa: E402
from vision.synth.decks import HELD_OUT, available_decks, build_face_cache  # noqa: E402
from vision.synth.scene import HIDDEN_FRACTION, READABLE_FRACTION  # noqa: E402

#: Where each card name lies in ``IndexReading.probs``.
CARD_INDEX = {name: k for k, name in enumerate(CARD_NAMES)}
#: Why a readable card was missed, in the order of the stages that lose it.
MISS_REASONS = ("no index detected", "indices found but none read right",
                "read right, but below the accept threshold", "read right, but lost when assembling cards")
#: Bands of a card's largest readable index height, in pixels, for the misses by size.
HEIGHT_BANDS = (0, 40, 50, 60, 70, math.inf)
#: Bands of how much of a card's most visible index shows (from READABLE_FRACTION, the
#: least that counts as readable), for the misses by cover: a corner of the next card
#: over part of the index.
VISIBLE_BANDS = (READABLE_FRACTION, 0.9, 0.95, 0.99)
#: Bands of how much of an index shows, for the readings made at the accept threshold: hidden
#: (the card need not be found), covered more than a reader is asked to read past (no target
#: counts it, but a reading there that is wrong is a wrong card), readable, and whole.
SHOWN_BANDS = (0.0, HIDDEN_FRACTION, 0.7, READABLE_FRACTION, 0.97)
#: Bands of how much of an index's suit pip or rank shows (``IndexAnnotation.pip_visible``,
#: ``rank_visible``), for the readings of indices under READABLE_FRACTION: a card's edge over
#: an index hides one part of it more than the other.
PART_BANDS = (0.0, 0.5, 0.9)
#: A reading farther than this (in index heights) from every index in the scene reads no index.
ON_AN_INDEX = 0.5


def doubtful_part(probs: np.ndarray, card: str, clear: float = 0.9) -> str:
    """Which part of a reading leaves the true ``card`` in doubt: ``"rank"``, ``"suit"``,
    ``"both"`` or ``"neither"``, by whether the true rank's and the true suit's share
    of the 52 card probabilities (rank-major, as ``IndexReading.probs``) reach ``clear``.

    >>> p = np.zeros(52); p[CARD_INDEX["QC"]] = 0.6; p[CARD_INDEX["QS"]] = 0.4
    >>> doubtful_part(p, "QC")          # the queen is sure, the club is not
    'suit'
    """
    p = np.asarray(probs, float).reshape(len(RANKS), len(SUITS))
    p = p / p.sum()
    rank_ok = p[RANKS.index(card[:-1])].sum() >= clear
    suit_ok = p[:, SUITS.index(card[-1])].sum() >= clear
    return {(True, True): "neither", (True, False): "suit", (False, True): "rank"}.get((rank_ok, suit_ok), "both")


def _band(value: float, edges: tuple, what: str) -> str:
    """The band of ``edges`` (each band's lower edge, the last open-ended) that ``value``
    falls in, as ``"0.90-0.95"`` or ``"0.99+"``; a ValueError saying ``what`` it is not, else."""
    for lo, hi in zip(edges, edges[1:] + (math.inf,)):
        if lo <= value < hi:
            return f"{lo:.2f}+" if math.isinf(hi) else f"{lo:.2f}-{hi:.2f}"
    raise ValueError(f"{what}: {value!r}")


def visible_band(visible: float) -> str:
    """The :data:`VISIBLE_BANDS` band a visible fraction falls in, as ``"0.90-0.95"`` or ``"0.99+"``.

    >>> visible_band(0.93), visible_band(1.0)
    ('0.90-0.95', '0.99+')
    """
    return _band(visible, VISIBLE_BANDS, "not a readable index's visible fraction")


def shown_band(visible: float) -> str:
    """The :data:`SHOWN_BANDS` band a visible fraction falls in, as ``"0.70-0.85"`` or ``"0.97+"``.

    >>> shown_band(0.0), shown_band(0.8), shown_band(1.0)
    ('0.00-0.45', '0.70-0.85', '0.97+')
    """
    return _band(visible, SHOWN_BANDS, "not a visible fraction")


def part_band(part_visible: float) -> str:
    """The :data:`PART_BANDS` band of how much of a pip or rank shows, as ``"0.50-0.90"`` or ``"0.90+"``.

    >>> part_band(0.2), part_band(1.0)
    ('0.00-0.50', '0.90+')
    """
    return _band(part_visible, PART_BANDS, "not a visible fraction")


def wrong_part(read: str, card: str) -> str:
    """Which part of the reading ``read`` of the index of ``card`` is wrong: ``"rank"``,
    ``"suit"``, ``"both"`` or ``"neither"``.

    >>> wrong_part("QS", "QC"), wrong_part("10C", "7C"), wrong_part("2H", "KS"), wrong_part("AD", "AD")
    ('suit', 'rank', 'both', 'neither')
    """
    rank_ok, suit_ok = read[:-1] == card[:-1], read[-1] == card[-1]
    return {(True, True): "neither", (True, False): "suit", (False, True): "rank"}.get((rank_ok, suit_ok), "both")


def band_line(label: str, band: Counter) -> str:
    """One line of a table of misses by band: cards, missed, and the stage that lost them."""
    return (f"    {label:<10} cards {band['cards']:5d}  missed {band['missed']:4d} "
            f"({100 * band['missed'] / max(1, band['cards']):.1f}%): " + " / ".join(str(band[why]) for why in MISS_REASONS))


def shown_line(label: str, band: Counter) -> str:
    """One line of a table of readings by band: read, wrong, and the part read wrong."""
    return (f"    {label:<14} read {band['read']:5d}  wrong {band['wrong']:4d} "
            f"({100 * band['wrong'] / max(1, band['read']):.1f}%): {band['rank']} / {band['suit']} / {band['both']}")


def height_band(height: float) -> str:
    """The :data:`HEIGHT_BANDS` band a height in pixels falls in, as ``"40-50 px"`` or ``"70+ px"``."""
    for lo, hi in zip(HEIGHT_BANDS, HEIGHT_BANDS[1:]):
        if lo <= height < hi:
            return f"{lo}+ px" if math.isinf(hi) else f"{lo}-{hi} px"
    raise ValueError(f"not a height: {height!r}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=160)
    seed_group = ap.add_mutually_exclusive_group()
    seed_group.add_argument("--seed", type=int, default=99, help="the scenes' seed (default 99)")
    seed_group.add_argument("--seeds", type=seed_list, default=None, metavar="S,S,...",
                            help="several seeds' scenes (--n of each) counted as one sample")
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--threshold", type=float, default=None)
    ap.add_argument("--cache", action="store_true",
                    help=f"read (or keep) the scenes under {CACHE_DIR}, as bench_recognition.py --cache does")
    args = ap.parse_args(argv)

    cv2.setNumThreads(1)
    build_face_cache(log=lambda m: None)
    rec = Recogniser(args.model, accept_threshold=args.threshold, threads=1)
    decks = [d for d in rec.meta.get("held_out", list(HELD_OUT)) if d in available_decks()]
    if not decks:
        print("held-out deck designs are not installed: run scripts/fetch-art.sh", file=sys.stderr)
        return 2
    seeds = args.seeds or [args.seed]
    draw = cached_scenes if args.cache else render_scenes
    scenes = (scene for seed in seeds for scene in draw(seed, args.n, decks))
    ix_stats = Counter()
    card_stats = Counter()
    right_conf = []
    geometry = {"detected": [], "refined": []}   # (position / index height, degrees, |log size ratio|)
    per_deck = {}
    doubt = Counter()                      # missed cards found in place: which part was in doubt
    by_height = {}                         # band -> Counter(cards, missed, and a count per MISS_REASONS)
    by_visible = {}                        # the same by the most visible index's visible fraction
    by_count = {}                          # the same by how many of the card's indices are readable
    by_shown = {}                          # readings at the threshold: band -> Counter(read, and each wrong part)
    by_pip = {}                            # the same of the covered indices' by how much of the pip shows
    by_rank = {}                           # ... and of the rank
    for image, ann in scenes:
        # The stages of Recogniser.read_indices one by one, to see the geometry before refining.
        peaks = rec.detect_peaks(image)
        found = [p for p in peaks if p.heat >= rec.heat_threshold]
        as_detected = [(f.centre, f.angle, f.height) for f in found]
        rec.refine(image, found)
        rec.classify(image, found)
        rec.look_turned(image, found)
        rec.look_weak(image, found, [p for p in peaks if p.heat < rec.heat_threshold])
        H, W = image.shape[:2]
        score = score_image(rec.assemble([copy.copy(f) for f in found], W, H), ann)
        missed = set(score.missed_cards)
        base = rec.accept_threshold
        rec.accept_threshold = 0.0
        at_zero = {c.card for c in rec.assemble([copy.copy(f) for f in found], W, H).cards}
        rec.accept_threshold = base
        deck = ann.cards[0].deck
        lying = [(card.card, ix) for card in ann.cards for ix in card.indices]
        for f in found:
            label, p = f.best
            if f.p_index < 0.5 or p < base:
                continue                   # refused or unsure: not reported
            near = min(lying, key=lambda t: math.dist(t[1].centre, f.centre), default=None)
            if near is None or math.dist(near[1].centre, f.centre) > ON_AN_INDEX * near[1].height:
                band = by_shown.setdefault("off", Counter())
                band["read"] += 1
                band["wrong"] += 1
                continue
            bands = [by_shown.setdefault(shown_band(near[1].visible), Counter())]
            if near[1].visible < READABLE_FRACTION:
                bands.append(by_pip.setdefault(part_band(near[1].pip_visible), Counter()))
                bands.append(by_rank.setdefault(part_band(near[1].rank_visible), Counter()))
            part = wrong_part(label, near[0])
            for band in bands:
                band["read"] += 1
                if part != "neither":
                    band["wrong"] += 1
                    band[part] += 1
        for card in ann.cards:
            readable = [ix for ix in card.indices if ix.visible >= READABLE_FRACTION]
            stages = []
            in_place = []                  # readings found where a readable index of this card is
            for ix in readable:
                ix_stats["readable indices"] += 1
                near = [k for k, f in enumerate(found) if math.dist(f.centre, ix.centre) < 0.5 * ix.height]
                if not near:
                    ix_stats["not detected"] += 1
                    stages.append("not detected")
                    continue
                k = max(near, key=lambda k: found[k].heat)
                f = found[k]
                if math.dist(f.centre, ix.centre) < 0.2 * ix.height:
                    in_place.append(f)
                stages_geometry = [("refined", (f.centre, f.angle, f.height))]
                if k < len(as_detected):
                    stages_geometry.insert(0, ("detected", as_detected[k]))
                else:
                    # Found by the look at weak peaks (which keeps only what it reads surely):
                    # its geometry as detected is not kept.
                    ix_stats["detected by a weak peak (look_weak)"] += 1
                for stage, (centre, angle, height) in stages_geometry:
                    geometry[stage].append((math.dist(centre, ix.centre) / ix.height,
                                            abs((angle - ix.angle + 180) % 360 - 180),
                                            abs(math.log(height / ix.height))))
                label, p = f.best
                if f.p_index < 0.5:
                    ix_stats["detected, classifier says not an index"] += 1
                    stages.append("refused")
                elif label != card.card:
                    ix_stats["detected, misread"] += 1
                    stages.append("misread")
                else:
                    right_conf.append(p)
                    ix_stats["detected, read right"] += 1
                    stages.append("right")
            if not readable:
                continue
            card_stats["readable cards"] += 1
            d = per_deck.setdefault(deck, Counter())
            d["cards"] += 1
            bands = [by_height.setdefault(height_band(max(ix.height for ix in readable)), Counter()),
                     by_visible.setdefault(visible_band(max(ix.visible for ix in readable)), Counter()),
                     by_count.setdefault(len(readable), Counter())]
            for band in bands:
                band["cards"] += 1
            if card.card not in missed:
                continue
            d["missed"] += 1
            for band in bands:
                band["missed"] += 1
            if in_place:
                # The reading that gives the true card most: what was in doubt even there.
                best = max(in_place, key=lambda f: f.probs[CARD_INDEX[card.card]])
                doubt[doubtful_part(best.probs, card.card)] += 1
            if all(s == "not detected" for s in stages):
                why = MISS_REASONS[0]
            elif "right" not in stages:
                why = MISS_REASONS[1]
            elif card.card in at_zero:
                why = MISS_REASONS[2]
            else:
                why = MISS_REASONS[3]
            card_stats[why] += 1
            for band in bands:
                band[why] += 1
    which = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {', '.join(map(str, seeds))}, {args.n} of each"
    print(f"{args.n * len(seeds)} scenes ({which}), held-out designs {', '.join(decks)}, "
          f"accept threshold {rec.accept_threshold}\n")
    total = ix_stats["readable indices"]
    for key, v in ix_stats.most_common():
        print(f"  {key:<44} {v:6d}  {100 * v / max(1, total):6.2f}%")
    for stage, errors in geometry.items():
        if errors:
            e = np.array(errors)
            print(f"  geometry {stage:<8} (position / index height, degrees, |log size|): " + ", ".join(
                f"p{q} " + " / ".join(f"{v:.3g}" for v in np.percentile(e, q, axis=0)) for q in (50, 90, 98)))
    if right_conf:
        c = np.array(right_conf)
        print("  confidence of right readings (one index):",
              ", ".join(f">= {t}: {100 * (c >= t).mean():.1f}%" for t in (0.5, 0.8, 0.9, 0.95)))
    print()
    cards = card_stats["readable cards"]
    for key, v in card_stats.most_common():
        print(f"  {key:<56} {v:6d}  {100 * v / max(1, cards):6.2f}%")
    print()
    for deck, d in sorted(per_deck.items()):
        print(f"  {deck:<20} cards {d['cards']:5d}  missed {d['missed']:4d} ({100 * d['missed'] / d['cards']:.1f}%)")
    print(f"\n  missed cards with an index found in place ({sum(doubt.values())}), the part in doubt "
          f"(true rank or suit under 0.9 of the reading):")
    for part in ("rank", "suit", "both", "neither"):
        print(f"    {part:<8} {doubt[part]:5d}")
    print("\n  missed by the height of the card's largest readable index "
          "(not detected / misread or refused / under the threshold / lost in assembly):")
    for lo in HEIGHT_BANDS[:-1]:
        print(band_line(height_band(lo), by_height.get(height_band(lo), Counter())))
    print("\n  missed by how much of the card's most visible readable index shows (the rest under another card, "
          "a hand or the picture's edge):")
    for lo in VISIBLE_BANDS:
        print(band_line(visible_band(lo), by_visible.get(visible_band(lo), Counter())))
    print("\n  missed by how many of the card's indices are readable:")
    for n in sorted(by_count):
        print(band_line(f"{n} index" if n == 1 else f"{n} indices", by_count[n]))
    print(f"\n  indices read at the accept threshold, by how much of the nearest index shows "
          f"(wrong: rank / suit / both):")
    for lo in SHOWN_BANDS:
        print(shown_line(shown_band(lo), by_shown.get(shown_band(lo), Counter())))
    off = by_shown.get("off", Counter())
    print(f"    on no index (farther than {ON_AN_INDEX} of an index height from every one): read {off['read']}")
    print(f"\n  of those, the indices under {READABLE_FRACTION} visible by how much of their suit pip shows "
          f"(wrong: rank / suit / both):")
    for lo in PART_BANDS:
        print(shown_line("pip " + part_band(lo), by_pip.get(part_band(lo), Counter())))
    print(f"\n  the same by how much of their rank shows (wrong: rank / suit / both):")
    for lo in PART_BANDS:
        print(shown_line("rank " + part_band(lo), by_rank.get(part_band(lo), Counter())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
