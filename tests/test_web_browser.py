"""The dashboard in a real headless Chromium (Debian's, through playwright) on a phone-sized screen.

These tests need ``/usr/bin/chromium`` (``make test`` installs it from
scripts/apt-packages.txt); without it they fail loudly rather than skip.
Every wait is on something the page shows (playwright's ``expect``), never on time.
"""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect, sync_playwright

from cardtable.session import Session
from cardtable.store import Store
from web import create_app, serve

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run"]
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
PIN = "2468"
expect.set_options(timeout=15_000)


@pytest.fixture(scope="module")
def browser():
    assert os.path.exists(CHROMIUM), f"{CHROMIUM} is missing: apt-get install chromium (see scripts/apt-packages.txt)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Table:
    """A store, a session and a real server; :meth:`restart` brings up a new process-like instance."""

    def __init__(self, tmp_path):
        self.path = str(tmp_path / "table.sqlite")
        self.key = "s" * 64
        self.store = Store(self.path)
        self.session = Session(self.store)
        self.server = serve(create_app(self.session, pin=PIN, secret_key=self.key), "127.0.0.1", 0)
        self.url = self.server.url

    def stop(self):
        self.server.close()
        self.store.close()

    def start_again(self):
        """Like a restart of `cardtable serve`: a new store handle, the session resumed from disk, same port."""
        self.store = Store(self.path)
        self.session = Session.resume(self.store)
        self.server = serve(create_app(self.session, pin=PIN, secret_key=self.key), "127.0.0.1",
                            int(self.url.rsplit(":", 1)[1]))


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path)
    yield t
    t.stop()


def unlocked_phone(browser, table):
    ctx = browser.new_context(**PHONE)
    page = ctx.new_page()
    page.goto(table.url + "/unlock")
    page.fill("#pin", PIN)
    page.click("#unlock-submit")
    expect(page.locator("#entry")).to_be_visible()
    return ctx, page


def play(page, seat, cards=(), kind="play", line=None):
    """Enter one event by hand, as a person would; with ``line``, wait until the log shows it."""
    page.select_option("#entry-seat", str(seat))
    for card in cards:
        page.click(f'#entry-picker [data-card="{card}"]')
    page.click(f'#entry .actions button[data-kind="{kind}"]')
    if line is not None:
        expect(page.locator(f'#log li[data-index="{line}"]')).to_have_count(1)


def score(page, seat):
    return page.locator(f'#scores tbody tr[data-seat="{seat}"] td.score')


def test_a_game_refereed_from_a_phone_is_followed_live_and_corrected(browser, table):
    ref_ctx, ref = unlocked_phone(browser, table)
    # start a game from the form: three players, Ann deals, two cards each so a hand ends quickly
    ref.goto(table.url + "/new")
    ref.select_option("#game", "big-two")
    ref.fill("#players", "Ann\nBo\nCy")
    ref.select_option("#dealer", "0")
    ref.fill('input[name="opt.big-two.hand_size"]', "2")
    ref.click("#start")
    expect(ref.locator("#game-title")).to_have_text("Big Two (Polish 10-card variant)")

    watch_ctx = browser.new_context(**PHONE)
    watcher = watch_ctx.new_page()
    watcher.goto(table.url + "/")
    expect(watcher.locator("#conn")).to_have_text("live")
    expect(watcher.locator("#entry")).to_have_count(0)              # watching only
    expect(watcher.locator(".seat .dealer-chip")).to_have_count(1)
    expect(watcher.locator('.seat[data-seat="0"] .name')).to_contain_text("Ann")

    play(ref, 1, ["3C"])
    expect(ref.locator("#action-result")).to_have_text("Bo leads 3C; Bo has one card left")
    expect(watcher.locator('#trick [data-card="3C"]')).to_be_visible()
    expect(watcher.locator('.seat[data-seat="1"] .badge.warn')).to_have_text("LAST CARD!")
    expect(watcher.locator('.seat[data-seat="2"]')).to_have_class("seat turn")
    play(ref, 2, ["5C"], line=2)
    play(ref, 0, ["7C"], line=3)
    expect(watcher.locator("#trick .card")).to_have_count(3)
    # tapping a card on the table opens the correction for exactly that line
    ref.click('#trick button[data-card="7C"]')
    expect(ref.locator("#fix-index")).to_have_text("3")
    expect(ref.locator("#fix-cards")).to_have_value("7C")
    ref.click('#fix button[value="cancel"]')
    play(ref, 1, kind="pass", line=4)
    play(ref, 2, kind="pass", line=5)
    expect(watcher.locator("#trick-winner")).to_have_text("Trick won by Ann (line 5)")
    for seat in range(3):
        expect(score(watcher, seat)).to_have_text("0")
    play(ref, 0, ["9H"])                                   # Ann's last card: she wins the hand
    expect(watcher.locator("#last-verdict")).to_contain_text("Ann is out of cards and wins the hand")
    expect(score(watcher, 1)).to_have_text("1")
    expect(score(watcher, 2)).to_have_text("1")
    expect(watcher.locator("#game-meta")).to_contain_text("hand 2")

    # the camera misread Ann's 4C as 7C: correct line 3 from the log
    ref.click('#log li[data-index="3"] button')
    expect(ref.locator("#fix-index")).to_have_text("3")
    ref.click('#fix-picker [data-card="7C"]')               # deselect the misread card
    ref.click('#fix-picker [data-card="4C"]')
    expect(ref.locator("#fix-cards")).to_have_value("4C")
    ref.click("#fix-ok")
    expect(ref.locator("#action-result")).to_contain_text("line 3 corrected")
    # every phone sees what the correction changed, and the outcome it changed
    correction = watcher.locator("#correction")
    expect(correction).to_contain_text("Correction of line 3")
    expect(correction).to_contain_text("line 3: accepted → does not beat the table")
    expect(correction).to_contain_text("line 5: no longer wins a trick (was Ann)")
    expect(correction).to_contain_text("scores: Bo 1→0, Cy 1→0")
    expect(score(watcher, 1)).to_have_text("0")
    expect(score(watcher, 2)).to_have_text("0")
    expect(watcher.locator("#trick-winner")).to_have_text("")
    expect(watcher.locator("#game-meta")).to_contain_text("hand 1")

    # undo from the phone retracts the latest event still in effect (Ann's 9H, line 6)
    ref.click("#undo")
    expect(ref.locator("#action-result")).to_contain_text("line 6 (play) undone")
    expect(watcher.locator('#log li[data-index="6"]')).to_have_class("undone")

    # Cy did not play the 5C after all but passed: an empty correction turns the play into a pass,
    # and Ann's 4C (refused above) now beats Bo's 3C
    ref.click('#log li[data-index="2"] button')
    expect(ref.locator("#fix-hint")).to_have_text("No card: it was a pass.")
    ref.fill("#fix-cards", "")
    ref.click("#fix-ok")
    expect(correction).to_contain_text("Correction of line 2")
    expect(correction).to_contain_text("line 3: does not beat the table → accepted")
    expect(watcher.locator('#log li[data-index="2"] .verdict')).to_have_text("Cy passes")
    ref_ctx.close()
    watch_ctx.close()


def test_the_page_reconnects_to_the_right_state_after_a_restart(browser, table):
    table.session.submit({"event": "new_game", "game": "big-two", "players": ["Ann", "Bo"], "dealer": 0})
    ctx = browser.new_context(**PHONE)
    page = ctx.new_page()
    page.goto(table.url + "/")
    expect(page.locator("#conn")).to_have_text("live")
    expect(page.locator("#last-verdict")).to_contain_text("Ann deals")
    table.server.close()
    table.store.close()
    expect(page.locator("#conn")).to_have_text("reconnecting")
    # while the page waits, the table goes on (e.g. the camera pipeline wrote to the same database)
    store = Store(table.path)
    Session.resume(store).submit({"event": "play", "seat": 1, "cards": ["3D"]})
    store.close()
    table.start_again()
    expect(page.locator("#conn")).to_have_text("live")
    expect(page.locator("#last-verdict")).to_have_text("Line 1: Bo leads 3D")
    expect(page.locator('#trick [data-card="3D"]')).to_be_visible()
    # and it keeps following the new server
    table.session.submit({"event": "play", "seat": 0, "cards": ["5D"]})
    expect(page.locator("#last-verdict")).to_have_text("Line 2: Ann plays 5D")
    ctx.close()


def test_a_change_without_the_pin_is_refused(browser, table):
    table.session.submit({"event": "new_game", "game": "big-two", "players": ["Ann", "Bo"], "dealer": 0})
    ctx = browser.new_context(**PHONE)
    page = ctx.new_page()
    page.goto(table.url + "/")
    expect(page.locator("#unlock-link")).to_be_visible()
    expect(page.locator("#entry")).to_have_count(0)
    # even a hand-made request from the page itself is refused without the PIN
    status = page.evaluate("""async () => {
        const token = document.querySelector('meta[name="csrf-token"]').content;
        const r = await fetch('/api/events', {method: 'POST', headers: {'Content-Type': 'application/json',
            'X-CSRF-Token': token}, body: JSON.stringify({event: 'play', seat: 1, cards: ['3C']})});
        return [r.status, (await r.json()).error];
    }""")
    assert status == [401, "pin_required"]
    # a wrong PIN is refused with a clear message
    page.click("#unlock-link")
    page.fill("#pin", "0000")
    page.click("#unlock-submit")
    expect(page.locator("#form-error")).to_have_text("that is not the table PIN")
    # starting a game without the PIN is refused too
    page.goto(table.url + "/new")
    page.fill("#players", "X\nY")
    page.click("#start")
    expect(page.locator("#form-error")).to_have_text("changes need the table PIN")
    assert table.session.state()["log_length"] == 1 and len(table.store.games()) == 1
    ctx.close()


@pytest.mark.parametrize("game, check", [
    ("twenty-two", "scoreboard"),
    ("khanhoo", "pot"),
    ("trumf", "trump"),
])
def test_every_game_is_drawn_from_its_own_state(browser, table, game, check):
    """A random game as the camera sees it (hands unknown): seats, scores and the game's own fields."""
    import random

    from referee.simulate import random_game
    log = [e for e in random_game(game, 4, random.Random(3), max_events=60) if e["event"] != "deal"]
    for event in log:
        table.session.submit(event)
    state = table.session.state()
    ctx = browser.new_context(**PHONE)
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(table.url + "/")
    expect(page.locator("#conn")).to_have_text("live")
    expect(page.locator(".seat")).to_have_count(4)
    for seat, points in enumerate(state["scores"]):
        expect(score(page, seat)).to_have_text(str(points))
    if check == "scoreboard":
        cards = [c for seat in state["scoreboard"] for c in seat]
        assert cards, "the chosen game should have a scoring card by now"
        for card in cards:
            expect(page.locator(f'#scores [data-card="{card}"]')).to_have_count(1)
    elif check == "pot":
        expect(page.locator(".table-info")).to_contain_text(f"Pot {state['pot']}")
        expect(page.locator("#scores thead")).to_contain_text("Chips")
    else:
        expect(page.locator(f'.table-info [data-card="{state["trump_card"]}"]')).to_be_visible()
    # the plays of the trick on the table, each card drawn
    trick = state.get("trick") or []
    shown = [c for p in trick for c in (p.get("cards") or [p.get("card")]) if c]
    for card in shown:
        expect(page.locator(f'#trick [data-card="{card}"]').first).to_be_visible()
    # the page fits a phone: nothing scrolls sideways
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert errors == []
    ctx.close()
