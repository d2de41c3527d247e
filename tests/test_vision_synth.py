"""The scene renderer and its inputs (deck art, table textures): vision/synth/."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision import index_geometry as geometry
from vision.index_geometry import crop_index
from vision.synth.decks import CARDS, FACE_HEIGHT, HELD_OUT, available_decks, load_deck
from vision.synth.scene import (CardPlacement, Camera, Hand, Lighting, SceneSpec, random_scene_spec,
                                render_scene)
from vision.synth.textures import TABLE_KINDS, make_table


@pytest.fixture(scope="module")
def decks():
    have = available_decks()
    needed = ["letele", *HELD_OUT]
    missing = [d for d in needed if d not in have]
    if missing:
        pytest.fail(f"card art not rendered ({', '.join(missing)}): run scripts/fetch-art.sh")
    return have


def test_every_design_has_52_upright_faces_and_a_top_left_index(decks):
    assert len(decks) >= 12
    for name in decks:
        deck = load_deck(name)
        assert sorted(deck.faces) == sorted(CARDS)
        for face in deck.faces.values():
            assert face.shape[0] == FACE_HEIGHT and face.shape[2] == 4
            assert 0.6 < face.shape[1] / face.shape[0] < 0.8
        x0, y0, x1, y1 = deck.index_box
        assert 0 <= x0 < x1 < 0.3 and 0 <= y0 < y1 < 0.45, (name, deck.index_box)
        h, w = deck.faces["AS"].shape[:2]
        assert (y1 - y0) * h > 1.3 * (x1 - x0) * w > 0, "an index is a rank above a suit: taller than wide"


def test_render_is_deterministic_for_a_seed(decks):
    spec = random_scene_spec(np.random.default_rng(5), ["letele"], 320, 240)
    a, ann_a = render_scene(spec, np.random.default_rng(9))
    b, ann_b = render_scene(spec, np.random.default_rng(9))
    assert a.shape == (240, 320, 3) and a.dtype == np.uint8
    assert np.array_equal(a, b)
    assert [c.card for c in ann_a.cards] == [c.card for c in ann_b.cards]


def test_one_upright_card_lands_where_asked_with_both_indices(decks):
    spec = SceneSpec(400, 300, [CardPlacement("7S", centre=(200, 150), angle=0, height=200, deck="letele")],
                     table="felt", lighting=Lighting(shadow=0))
    img, ann = render_scene(spec, np.random.default_rng(0))
    (card,) = ann.cards
    x1, y1, x2, y2 = card.box
    assert abs(y1 - 50) <= 2 and abs(y2 - 250) <= 2
    assert abs((x1 + x2) / 2 - 200) <= 2 and 0.6 < (x2 - x1) / (y2 - y1) < 0.8
    tl, br = card.indices
    assert tl.centre[0] < 200 and tl.centre[1] < 150 and abs(tl.angle) < 1
    assert br.centre[0] > 200 and br.centre[1] > 150 and abs(abs(br.angle) - 180) < 1
    assert tl.visible > 0.99 and br.visible > 0.99 and card.readable
    # Card paper in the middle of the card, dark felt outside it.
    assert img[150, 200].mean() > 180 or img[100, 150].mean() > 180
    assert img[10, 10].mean() < 150


def test_rotated_card_index_crop_matches_the_unmirrored_face(decks):
    """Never mirrored: the upright crop of a turned card looks like the face's
    own corner, not like its mirror image."""
    deck = load_deck("gnome-anglo")
    spec = SceneSpec(400, 400, [CardPlacement("7H", (200, 200), angle=137, height=300, deck="gnome-anglo")],
                     table="plain", lighting=Lighting(shadow=0))
    img, ann = render_scene(spec, np.random.default_rng(0))
    for ix in ann.cards[0].indices:
        crop = crop_index(img, ix.centre, ix.angle, ix.height).astype(np.float32).mean(axis=2)
        face = deck.faces["7H"]
        h, w = face.shape[:2]
        x0, y0, x1, y1 = deck.index_box
        ref_img = np.zeros((h, w, 3), np.uint8) + 255
        a = face[:, :, 3:4].astype(np.float32) / 255
        ref_img = (ref_img * (1 - a) + face[:, :, :3] * a).astype(np.uint8)
        centre = ((x0 + x1) / 2 * w, (y0 + y1) / 2 * h)
        ref = crop_index(ref_img, centre, 0, (y1 - y0) * h).astype(np.float32).mean(axis=2)
        same = np.corrcoef(crop.ravel(), ref.ravel())[0, 1]
        mirrored = np.corrcoef(crop.ravel(), ref[:, ::-1].ravel())[0, 1]
        assert same > 0.8 and same > mirrored + 0.1, (same, mirrored)


def test_a_crop_blurs_only_its_own_region_yet_matches_the_whole_image_blurred():
    """A large index is blurred before it is shrunk into its crop, and only around
    itself (the blur is much of the recogniser's time): the crop must be the
    same, bit for bit, as one cut from the whole image blurred, up to the
    picture's edges, for the classifier's window and the refiner's."""
    rng = np.random.default_rng(5)
    img = cv2.GaussianBlur((rng.random((360, 640, 3)) * 255).astype(np.uint8), (0, 0), 1.0)
    img = np.clip(img.astype(np.int16) + rng.integers(-40, 40, img.shape), 0, 255).astype(np.uint8)
    windows = [((geometry.WINDOW_W, geometry.WINDOW_H), (geometry.PATCH_W, geometry.PATCH_H)),
               ((geometry.REFINE_WINDOW_W, geometry.REFINE_WINDOW_H),
                (geometry.REFINE_PATCH_W, geometry.REFINE_PATCH_H))]
    blurred = 0
    for _ in range(300):
        centre, angle, h = (rng.uniform(0, 640), rng.uniform(0, 360)), rng.uniform(-180, 180), rng.uniform(10, 150)
        for window, patch in windows:
            shrink = window[1] * h / patch[1]
            if shrink <= 1.6:
                continue
            blurred += 1
            whole = geometry.antialias(img, 0.45 * shrink)
            expected = cv2.warpAffine(whole, geometry.crop_matrix(centre, angle, h, window, patch), patch,
                                      flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
            assert np.array_equal(crop_index(img, centre, angle, h, window, patch), expected), (centre, angle, h)
    assert blurred > 300


def test_the_views_of_an_index_are_its_crops_cut_one_by_one():
    """crop_views cuts an index's views of one size from one blurred region (the
    union of theirs): the same crops, bit for bit, as crop_index cuts one by one,
    at every size, up to the picture's edges and beyond."""
    from vision.index_geometry import crop_views

    rng = np.random.default_rng(8)
    img = cv2.GaussianBlur((rng.random((360, 640, 3)) * 255).astype(np.uint8), (0, 0), 1.0)
    img = np.clip(img.astype(np.int16) + rng.integers(-40, 40, img.shape), 0, 255).astype(np.uint8)
    views = [(0.0, 1.0), (7.0, 1.0), (-7.0, 1.0), (0.0, 0.88), (0.0, 1.12)]
    shared = 0
    for _ in range(200):
        centre = (rng.uniform(-20, 660), rng.uniform(-20, 380))
        angle, h = rng.uniform(-180, 180), rng.uniform(10, 150)
        got = crop_views(img, centre, angle, h, views)
        assert len(got) == len(views)
        for (da, ds), crop in zip(views, got):
            assert np.array_equal(crop, crop_index(img, centre, angle + da, h * ds)), (centre, angle, h, da, ds)
        shared += geometry.WINDOW_H * h / geometry.PATCH_H > 1.6
    assert shared > 100   # (most of them blurred, three views from one region)


def test_a_card_on_top_hides_the_index_below(decks):
    under = CardPlacement("2D", (150, 150), 0, 200, "letele")
    # The second card covers the top-left index of the first.
    over = CardPlacement("KC", (100, 60), 0, 200, "letele")
    _, ann = render_scene(SceneSpec(400, 300, [under, over], table="wood"), np.random.default_rng(1))
    tl, br = ann.cards[0].indices
    assert tl.visible < 0.05 and br.visible > 0.99
    assert ann.cards[0].readable  # one index is enough to read a card
    assert ann.cards[1].visible > 0.5


def test_an_edge_over_one_end_of_an_index_hides_its_pip_or_its_rank(decks):
    under = CardPlacement("QC", (150, 150), 0, 200, "letele")
    _, alone = render_scene(SceneSpec(400, 300, [under], table="wood"), np.random.default_rng(1))
    tl = alone.cards[0].indices[0]
    assert tl.visible > 0.99 and tl.pip_visible > 0.99
    # A second card whose top edge crosses the index 0.3 of its height above its bottom:
    # about 0.3 of the index hidden, and 0.3 of the 0.35 that is the pip's (PIP_SHARE).
    x0, y0, y1 = float(tl.quad[:, 0].min()), float(tl.quad[:, 1].min()), float(tl.quad[:, 1].max())
    over = CardPlacement("3S", (x0 + 60, y1 - 0.3 * (y1 - y0) + 100), 0, 200, "letele")
    _, ann = render_scene(SceneSpec(400, 300, [under, over], table="wood"), np.random.default_rng(1))
    tl = ann.cards[0].indices[0]
    assert 0.65 < tl.visible < 0.8
    assert tl.pip_visible < 0.3
    assert tl.rank_visible > 0.99  # the rank, above, shows whole
    # The other way round: an edge over the top 0.3 of the index hides half the rank's 0.6, no pip.
    over = CardPlacement("3S", (x0 + 60, y0 + 0.3 * (y1 - y0) - 100), 0, 200, "letele")
    _, ann = render_scene(SceneSpec(400, 300, [under, over], table="wood"), np.random.default_rng(1))
    tl = ann.cards[0].indices[0]
    assert 0.65 < tl.visible < 0.8
    assert 0.4 < tl.rank_visible < 0.6 and tl.pip_visible > 0.99
    import doctest

    from vision.synth import scene
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(scene._slice, "_slice", globs={"np": np, "_slice": scene._slice}):
        runner.run(test)
    assert runner.failures == 0 and runner.tries == 1


def test_a_hand_occludes_and_effects_keep_the_image_valid(decks):
    spec = SceneSpec(480, 360, [CardPlacement("QH", (240, 180), 30, 220, "letele")], table="newspaper",
                     hands=[Hand(centre=(240, 180), angle=0, length=600)],
                     lighting=Lighting(temperature=0.8, gradient=0.5, glare=[(200, 150, 40, 20, 0.6)]),
                     camera=Camera(blur=1.0, motion=5, noise=4, jpeg=60, downscale=0.6))
    img, ann = render_scene(spec, np.random.default_rng(2))
    assert img.shape == (360, 480, 3)
    assert ann.cards[0].visible < 0.9


def test_a_leaning_camera_sees_the_far_side_smaller_and_a_barrel_lens_bows_straight_lines():
    from vision.synth import view
    rng = np.random.default_rng(4)
    for lean in (15.0, 30.0, 45.0, 60.0):
        v = view.CameraView(1280, 720, lean=lean, direction=float(rng.uniform(0, 360)), barrel=0.1)
        pts = rng.uniform([0, 0], [1280, 720], (50, 2))
        assert np.allclose(v.to_table(v.to_picture(pts)), pts, atol=1e-6)
        # Zoomed in just enough: every corner of the picture looks at the table drawn, and a
        # little less zoom would look past it.
        corners = np.array([[0, 0], [1279, 0], [1279, 719], [0, 719]], float)
        seen = v.to_table(corners)
        assert v.zoom > 1 and np.all(seen >= -0.5) and np.all(seen <= [1279.5, 719.5])
        assert not np.all(np.abs(v._to_table(corners, v.zoom * 0.97) - [639.5, 359.5]) <= [640, 360])
    # Leaning towards the top: a table square at the top comes out smaller than one at the bottom,
    # and squeezed along the line of sight (shorter than wide).
    v = view.CameraView(1280, 720, lean=40.0)
    def size(x, y):
        q = v.to_picture(np.array([[x, y], [x + 40, y], [x + 40, y + 40], [x, y + 40]], float))
        return np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[3] - q[0])
    (tw, th), (bw, bh) = size(620, 80), size(620, 600)
    assert tw < bw and th < bh and th < tw
    # Leaning to the left (90 degrees counter-clockwise from the top): the left side is far.
    v = view.CameraView(1280, 720, lean=40.0, direction=90.0)
    left = v.to_picture(np.array([[100.0, 340], [100, 380]]))
    right = v.to_picture(np.array([[1180.0, 340], [1180, 380]]))
    assert np.linalg.norm(left[1] - left[0]) < np.linalg.norm(right[1] - right[0])
    # A barrel lens: a straight row near the top bows out, its middle nearer the picture's edge.
    v = view.CameraView(1280, 720, barrel=0.2)
    row = v.to_picture(np.array([[99.0, 120], [639.5, 120], [1180, 120]]))
    assert row[1, 1] < row[0, 1] - 5 and abs(row[0, 1] - row[2, 1]) < 1e-6
    assert view.CameraView(1280, 720).identity and not v.identity
    for bad, match in (({"lean": 61}, "lean"), ({"lean": -1}, "lean"), ({"barrel": -0.1}, "barrel"),
                       ({"barrel": 0.6}, "barrel"), ({"fov": 5}, "field of view")):
        with pytest.raises(ValueError, match=match):
            view.CameraView(640, 480, **bad)


def test_a_card_seen_by_a_leaning_camera_is_annotated_where_it_is_drawn(decks):
    card = CardPlacement("7S", centre=(320, 240), angle=0, height=200, deck="letele")
    spec = SceneSpec(640, 480, [card], table="felt", lighting=Lighting(shadow=0),
                     camera=Camera(lean=40.0, barrel=0.1))
    img, ann = render_scene(spec, np.random.default_rng(0))
    (seen,) = ann.cards
    tl, tr, br, bl = seen.corners
    assert np.linalg.norm(tr - tl) < np.linalg.norm(br - bl)  # the far (top) edge is shorter
    assert abs(seen.angle) < 1 and seen.height != 200
    assert seen.visible > 0.99 and all(ix.visible > 0.99 for ix in seen.indices)
    for ix in seen.indices:
        assert all(cv2.pointPolygonTest(seen.corners.reshape(-1, 1, 2), tuple(map(float, p)), False) > 0
                   for p in ix.quad)
    # The card's paper lies inside its annotated corners, the dark felt just outside them.
    inside = np.zeros(img.shape[:2], np.uint8)
    cv2.fillPoly(inside, [np.round(seen.corners).astype(np.int32)], 1)
    ring = cv2.dilate(inside, np.ones((9, 9), np.uint8)) - cv2.dilate(inside, np.ones((5, 5), np.uint8))
    core = cv2.erode(inside, np.ones((9, 9), np.uint8))
    grey = img.mean(axis=2)
    assert np.median(grey[core > 0]) > 180 and np.median(grey[ring > 0]) < 120
    # The same card at the near edge: the lean and its zoom carry half of it out of the picture,
    # and the index down there with it (seen overhead, both indices show whole).
    low = CardPlacement("7S", centre=(320, 350), angle=0, height=200, deck="letele")
    _, overhead = render_scene(SceneSpec(640, 480, [low], table="felt"), np.random.default_rng(0))
    _, leaned = render_scene(SceneSpec(640, 480, [low], table="felt", camera=Camera(lean=40.0)),
                             np.random.default_rng(0))
    assert min(ix.visible for ix in overhead.cards[0].indices) > 0.99
    assert leaned.cards[0].indices[0].visible > 0.99 and leaned.cards[0].indices[1].visible < 0.05
    assert leaned.cards[0].visible < 0.7
    with pytest.raises(ValueError, match="lean"):
        render_scene(SceneSpec(640, 480, [card], camera=Camera(lean=75.0)))


def test_bad_specs_are_refused(decks):
    with pytest.raises(ValueError, match="unknown card"):
        render_scene(SceneSpec(100, 100, [CardPlacement("1X", (50, 50))]))
    with pytest.raises(ValueError, match="unknown table kind"):
        render_scene(SceneSpec(100, 100, [], table="marble"))
    with pytest.raises(FileNotFoundError, match="not rendered"):
        render_scene(SceneSpec(100, 100, [CardPlacement("AS", (50, 50), deck="no-such-deck")]))


@pytest.mark.parametrize("kind", TABLE_KINDS)
def test_table_textures(kind):
    img = make_table(kind, 200, 120, np.random.default_rng(3), clutter=3)
    assert img.shape == (120, 200, 3) and img.dtype == np.float32
    assert 0 <= img.min() and img.max() <= 1 and img.std() > 0.005


def test_random_specs_seen_from_leaning_cameras_and_in_dim_rooms_leave_other_seeds_alone(decks):
    from vision.synth import scene

    # At 0 (the default) nothing more is drawn: the same seed, the same scenes as before.
    a, b = np.random.default_rng(6), np.random.default_rng(6)
    plain = [random_scene_spec(a, ["letele"], 640, 480) for _ in range(20)]
    assert plain == [random_scene_spec(b, ["letele"], 640, 480, views=0.0, dim=0.0) for _ in range(20)]
    rng = np.random.default_rng(6)
    leaned = [random_scene_spec(rng, ["letele"], 640, 480, views=1.0, dim=1.0) for _ in range(40)]
    leans = [s.camera.lean for s in leaned]
    assert all(scene.VIEW_LEAN[0] <= x <= scene.VIEW_LEAN[1] for x in leans) and np.ptp(leans) > 20
    barrels = [s.camera.barrel for s in leaned]
    assert 10 < sum(x == 0 for x in barrels) < 30 and max(barrels) <= scene.VIEW_BARREL
    assert np.median([s.lighting.brightness for s in leaned]) < 0.6 * np.median([s.lighting.brightness for s in plain])
    assert min(s.camera.noise for s in leaned) >= scene.DIM_NOISE[0]
    # Seen from a leaning camera, a layout is drawn smaller by the view's zoom about the centre.
    spec = plain[0]
    seen = scene.seen_from(spec, 40.0, 10.0, 0.1)
    zoom = scene.CameraView(640, 480, 40.0, 10.0, barrel=0.1).zoom
    for before, after in zip(spec.cards, seen.cards):
        assert after.height == pytest.approx(before.height / zoom)
        assert np.allclose(np.subtract(after.centre, (320, 240)), np.subtract(before.centre, (320, 240)) / zoom)
    assert spec.camera.lean == 0.0 and seen.camera.lean == 40.0


def test_random_specs_cover_one_to_eight_cards_of_one_design(decks):
    rng = np.random.default_rng(4)
    counts = set()
    for _ in range(40):
        spec = random_scene_spec(rng, ["letele", "gnome-anglo"], 640, 480)
        counts.add(len(spec.cards))
        assert len({p.deck for p in spec.cards}) == 1
        assert len({p.card for p in spec.cards}) == len(spec.cards)  # one deck: no card twice
    assert counts == set(range(1, 9))
