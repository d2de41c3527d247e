"""Screenshots of the main pages for docs/screenshots/ (``python -m web.screenshots [OUT_DIR]``).

Plays a short Big Two game into a temporary database, with simulated LEDs
(:class:`hardware.Signals` on mock pins) and a stand-in camera showing a
drawn table, then photographs each page in headless Chromium on a phone-sized
screen.  Needs Debian's ``chromium`` and the ``playwright`` package (the test
extra); neither is needed to run the dashboard.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

from cardtable.session import Session
from cardtable.store import Store
from web import create_app, serve

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run"]
PIN = "2468"


def _play(s, c):
    return {"event": "play", "seat": s, "cards": c}


def _pass(s):
    return {"event": "pass", "seat": s}


DEMO = [{"event": "new_game", "game": "big-two", "players": ["Ann", "Bo", "Cy", "Dee"], "dealer": 0,
         "options": {"hand_size": 4}},
        _play(1, ["3C"]), _play(2, ["5C"]), _play(3, ["8C"]), _pass(0), _pass(1), _pass(2),
        _play(3, ["9H", "9S"]), _play(0, ["10H", "10S"]), _pass(1), _pass(2), _pass(3),
        _play(0, ["KD"]), _play(1, ["AD"]), _pass(2), _pass(3), _pass(0),
        _play(1, ["4S"]), _play(2, ["6D"]), _play(3, ["QH"]),          # Dee wins hand 1
        _play(3, ["5H"]), _play(0, ["7H"]), _play(1, ["6S"]),          # 6S misread: does not beat
        {"event": "amend", "index": 22, "with": _play(1, ["8S"])}]


class DrawnCamera:
    """A stand-in for the live pipeline: a drawn table with four cards, zones and detections."""

    def __init__(self):
        import cv2
        import numpy as np
        w, h = 640, 480
        img = np.full((h, w, 3), (40, 110, 30), np.uint8)
        self.detections = []
        for i, (card, x, y) in enumerate([("5H", 280, 300), ("7H", 130, 200), ("8S", 280, 90), ("QS", 450, 200)]):
            cv2.rectangle(img, (x, y), (x + 70, y + 100), (245, 245, 245), -1)
            colour = (30, 30, 200) if card[-1] in "HD" else (20, 20, 20)
            cv2.putText(img, card, (x + 8, y + 40), cv2.FONT_HERSHEY_SIMPLEX, 0.9, colour, 2)
            self.detections.append({"card": card, "box": [x, y, 70, 100], "seat": i,
                                    "confidence": round(0.97 - 0.04 * i, 2)})
        self.zones = [{"seat": 0, "polygon": [[200, 280], [440, 280], [440, 470], [200, 470]]},
                      {"seat": 1, "polygon": [[10, 150], [200, 150], [200, 340], [10, 340]]},
                      {"seat": 2, "polygon": [[200, 10], [440, 10], [440, 200], [200, 200]]},
                      {"seat": 3, "polygon": [[440, 150], [630, 150], [630, 340], [440, 340]]}]
        self.jpeg = cv2.imencode(".jpg", img)[1].tobytes()

    def status(self):
        return {"state": "running", "message": "4 cards seen", "fps": 8.7, "frame_size": [640, 480],
                "source": "picamera", "zones": self.zones, "detections": self.detections}

    def latest_jpeg(self):
        return self.jpeg


def make_table(folder: str):
    store = Store(os.path.join(folder, "demo.sqlite"))
    session = Session(store)
    signals = None
    try:
        from hardware import Signals
        signals = Signals.from_config({"seat_leds": [17, 27, 22, 23], "buzzer": 18}, mock=True)
        session.listen(signals.update)
    except Exception as exc:           # the LEDs are a nicety on these pictures
        print(f"no simulated LEDs: {exc}", file=sys.stderr)
    for event in DEMO:
        session.submit(event)
    return store, session, signals


def _other_game(folder: str, game: str):
    import random

    from referee.simulate import random_game
    session = Session(Store(os.path.join(folder, f"{game}.sqlite")))
    for event in random_game(game, 4, random.Random(3), max_events=60):
        if event["event"] != "deal":
            session.submit(event)
    return create_app(session, pin=PIN)


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import expect, sync_playwright

    args = sys.argv[1:] if argv is None else argv
    out = os.path.abspath(args[0] if args else "docs/screenshots")
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        store, session, signals = make_table(folder)
        app = create_app(session, pin=PIN, camera=DrawnCamera(), signals=signals,
                         public_url="http://cardtable.local/")
        server = serve(app, "127.0.0.1", 0)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
                phone = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
                         "device_scale_factor": 2}
                watcher = browser.new_context(**phone).new_page()
                watcher.goto(server.url + "/")
                expect(watcher.locator("#conn")).to_have_text("live")
                watcher.screenshot(path=f"{out}/live-watching.png")
                ref = browser.new_context(**phone).new_page()
                ref.goto(server.url + "/unlock")
                ref.screenshot(path=f"{out}/unlock.png")
                ref.fill("#pin", PIN)
                ref.click("#unlock-submit")
                expect(ref.locator("#conn")).to_have_text("live")
                ref.screenshot(path=f"{out}/live-referee.png", full_page=True)
                ref.click('#trick button[data-card="7H"]')
                ref.screenshot(path=f"{out}/correct-card.png")
                ref.click('#fix button[value="cancel"]')
                for name, path in [("history", "/history"), ("game-history", f"/history/{session.game_id}"),
                                   ("new-game", "/new"), ("join", "/join")]:
                    ref.goto(server.url + path)
                    ref.screenshot(path=f"{out}/{name}.png", full_page=True)
                ref.goto(server.url + "/camera")
                expect(ref.locator("#overlay rect")).to_have_count(4)
                time.sleep(0.3)        # let the frame image finish decoding for the picture
                ref.screenshot(path=f"{out}/camera.png", full_page=True)
                # the other games, drawn from their own state fields (a random game, hands unknown)
                for game in ("twenty-two", "khanhoo", "trumf"):
                    other = _other_game(folder, game)
                    with serve(other, "127.0.0.1", 0) as other_server:
                        page = browser.new_context(**phone).new_page()
                        page.goto(other_server.url + "/")
                        expect(page.locator("#conn")).to_have_text("live")
                        page.screenshot(path=f"{out}/live-{game}.png")
                        page.context.close()
                    other.extensions["cardtable"].close()
                    other.extensions["cardtable"].session.store.close()
                laptop = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
                laptop.goto(server.url + "/")
                expect(laptop.locator("#conn")).to_have_text("live")
                laptop.screenshot(path=f"{out}/live-laptop.png", full_page=True)
                browser.close()
        finally:
            server.close()
            app.extensions["cardtable"].close()
            if signals is not None:
                signals.close()
            store.close()
    print(f"screenshots written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
