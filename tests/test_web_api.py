"""The JSON API through Flask's test client, on a real SQLite file: every error case."""

from __future__ import annotations

import json

import pytest

from cardtable.session import Session
from cardtable.store import Store
from web import create_app

from web_fixtures import PIN, app, client, session  # noqa: F401  (fixtures)
H = {"X-Table-Pin": PIN}
NEW = {"event": "new_game", "game": "big-two", "players": ["Ann", "Bo", "Cy"], "dealer": 0}


def post(client, event, headers=H, **kw):
    return client.post("/api/events", data=json.dumps(event), content_type="application/json", headers=headers, **kw)


def test_state_before_any_game(client):
    state = client.get("/api/state").get_json()
    assert state["game"] is None and state["game_id"] is None and state["players"] == []


def test_a_game_through_the_api(client, session):
    assert post(client, NEW).get_json()["ok"] is True
    v = post(client, {"event": "play", "seat": 1, "cards": ["3c"]}).get_json()
    assert v["ok"] and v["words"] == "Bo leads 3C" and v["index"] == 1 and v["game_id"] == session.game_id
    state = client.get("/api/state").get_json()
    assert state["to_act"] == 2 and state["game"] == "big-two" and state["game_id"] == session.game_id
    # the API stores what it accepted, with where it came from
    assert session.store.events(session.game_id)[1]["source"] == "api"


def test_an_illegal_move_is_judged_and_kept_in_the_log(client, session):
    post(client, NEW)
    post(client, {"event": "play", "seat": 1, "cards": ["3c"]})
    r = post(client, {"event": "play", "seat": 0, "cards": ["4c"]})       # Cy's turn, not Ann's
    assert r.status_code == 200
    v = r.get_json()
    assert v["ok"] is False and v["code"] == "not_your_turn"
    assert v["words"].startswith("Refused (played out of turn)")
    assert len(session.store.events(session.game_id)) == 3


def test_amend_answers_with_what_changed(client):
    post(client, NEW)
    post(client, {"event": "play", "seat": 1, "cards": ["3c"]})
    post(client, {"event": "play", "seat": 2, "cards": ["5c"]})
    post(client, {"event": "pass", "seat": 0})
    v = post(client, {"event": "pass", "seat": 1}).get_json()
    assert v["trick_winner"] == 2
    # Bo's lead was misread: it was 6C, which Cy's 5C does not beat, so nobody won that trick
    v = post(client, {"event": "amend", "index": 1, "with": {"event": "play", "seat": 1, "cards": ["6c"]}}).get_json()
    assert v["ok"] and v["event"] == "amend"
    whats = {c["what"] for c in v["changed"]}
    assert "verdict" in whats and "trick_winner" in whats
    assert any("does not beat" in w for w in v["change_words"])
    assert any("no longer wins a trick" in w for w in v["change_words"])


def test_undo(client):
    post(client, NEW)
    post(client, {"event": "play", "seat": 1, "cards": ["3c"]})
    v = post(client, {"event": "undo"}).get_json()
    assert v["ok"] and v["undid"] == 1
    assert client.get("/api/state").get_json()["to_act"] is None


@pytest.mark.parametrize("headers, status, error", [
    ({}, 401, "pin_required"),
    ({"X-Table-Pin": "0000"}, 403, "wrong_pin"),
    ({"X-Table-Pin": ""}, 401, "pin_required"),
    ({"X-CSRF-Token": "x"}, 401, "pin_required"),          # a locked browser session
    ({**H, "Origin": "http://evil.example"}, 403, "cross_origin"),
    ({**H, "Referer": "http://evil.example/page"}, 403, "cross_origin"),
    ({**H, "Origin": "null"}, 403, "cross_origin"),
])
def test_changes_need_the_pin_from_this_site(client, session, headers, status, error):
    r = post(client, NEW, headers=headers)
    assert r.status_code == status
    body = r.get_json()
    assert body["ok"] is False and body["error"] == error and body["message"]
    assert session.game_id is None and session.store.games() == []


def test_same_origin_browser_request_is_allowed(client):
    r = post(client, NEW, headers={**H, "Origin": "http://localhost"})
    assert r.status_code == 200 and r.get_json()["ok"]


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"])
def test_changes_must_be_json(client, session, content_type):
    r = client.post("/api/events", data=json.dumps(NEW), content_type=content_type, headers=H)
    assert r.status_code == 415 and r.get_json()["error"] == "json_required"
    assert session.game_id is None


@pytest.mark.parametrize("body, status, error", [
    ("{not json", 400, "bad_json"),
    ("[" * 30000 + "]" * 30000, 400, "bad_json"),
    ('{"event": "bid", "seat": 0, "tricks": NaN}', 400, "bad_json"),
    ('{"event": "bid", "seat": 0, "tricks": 1e400}', 400, "bad_json"),
    ('\xff\xfe', 400, "bad_json"),
    ("[1, 2]", 400, "not_an_object"),
    ('"undo"', 400, "not_an_object"),
    ('{"seat": 1}', 400, "malformed_event"),
    ('{"event": "dance"}', 400, "unknown_event"),
    ('{"event": "play", "seat": "one", "cards": ["3C"]}', 400, "malformed_event"),
    ('{"event": "play", "seat": 1, "cards": ["3X"]}', 400, "unknown_card"),
    ('{"event": "amend", "index": 1}', 400, "malformed_event"),
    ('{"event": "new_game", "game": "big-two", "players": ["A"], "dealer": 0, "options": []}', 400, "bad_option"),
])
def test_things_that_are_not_events_never_reach_the_log(client, session, body, status, error):
    post(client, NEW)
    r = client.post("/api/events", data=body, content_type="application/json", headers=H)
    assert r.status_code == status
    assert r.get_json()["error"] == error
    assert len(session.store.events(session.game_id)) == 1


def test_body_too_large(client):
    big = {"event": "undo", "padding": "x" * 70_000}
    r = post(client, big)
    assert r.status_code == 413 and r.get_json()["error"] == "request_entity_too_large"


def test_wrong_pins_are_limited(tmp_path):
    store = Store(str(tmp_path / "t.sqlite"))
    app = create_app(Session(store), pin=PIN, pin_attempts_per_minute=3)
    client = app.test_client()
    codes = [post(client, NEW, headers={"X-Table-Pin": "1111"}).status_code for _ in range(4)]
    assert codes == [403, 403, 403, 429]
    # even the right PIN waits now
    assert post(client, NEW).status_code == 429
    app.extensions["cardtable"].close()


def test_methods_and_unknown_paths_are_json_errors(client):
    r = client.get("/api/events")
    assert r.status_code == 405 and r.get_json()["error"] == "method_not_allowed"
    r = client.get("/api/nothing")
    assert r.status_code == 404 and r.get_json()["ok"] is False
    r = client.delete("/api/state")
    assert r.status_code == 405


def test_games_listing_and_one_game(client, session):
    post(client, NEW)
    post(client, {"event": "play", "seat": 1, "cards": ["3c"]})
    post(client, {"event": "play", "seat": 2, "cards": ["2c"]})
    post(client, {"event": "pass", "seat": 0})
    post(client, {"event": "pass", "seat": 1})
    games = client.get("/api/games").get_json()["games"]
    assert [g["id"] for g in games] == [session.game_id] and games[0]["players"] == ["Ann", "Bo", "Cy"]
    one = client.get(f"/api/games/{session.game_id}").get_json()
    assert one["game"]["game"] == "big-two" and len(one["log"]) == 5
    assert one["log"][1]["event"]["cards"] == ["3C"] and one["log"][1]["verdict"]["ok"]
    trick = one["hands"][0]["tricks"][0]
    assert trick["winner"] == 2 and [p["seat"] for p in trick["plays"]] == [1, 2, 0, 1]


@pytest.mark.parametrize("path, status, error", [
    ("/api/games/999", 404, "no_such_game"),
    ("/api/games/abc", 404, "not_found"),
    ("/api/games?limit=0", 400, "bad_limit"),
    ("/api/games?limit=x", 400, "bad_limit"),
    ("/api/games?limit=5000", 400, "bad_limit"),
    ("/api/camera.jpg", 404, "no_camera"),
])
def test_reading_errors(client, path, status, error):
    r = client.get(path)
    assert r.status_code == status and r.get_json()["error"] == error


def test_games_available_declares_options(client):
    games = client.get("/api/games-available").get_json()["games"]
    big_two = next(g for g in games if g["name"] == "big-two")
    assert big_two["min_players"] == 2 and big_two["max_players"] == 5
    hand_size = next(o for o in big_two["options"] if o["name"] == "hand_size")
    assert hand_size == {"name": "hand_size", "type": "int", "default": 10, "help": "Cards dealt to each player",
                         "min": 1, "max": 13}


def test_signals_and_camera_absent(client):
    assert client.get("/api/signals").get_json() == {"available": False}
    assert client.get("/api/camera").get_json()["message"] == "no camera"


class FakeSignals:
    def __init__(self):
        self.when_changed = None
        self.lit = False

    def describe(self):
        return {"simulated": True, "seats": [{"seat": 0, "role": "dealer",
                                              "led": {"pin": 17, "lit": self.lit, "state": "on" if self.lit else "off",
                                                      "pattern": None}, "dealer_led": None}]}


class FakeCamera:
    def __init__(self, jpeg=b"\xff\xd8fake\xff\xd9", fail=False):
        self.jpeg, self.fail = jpeg, fail

    def status(self):
        if self.fail:
            raise RuntimeError("pipeline stopped")
        return {"state": "running", "fps": 9.5, "detections": [{"card": "QS", "box": [1, 2, 3, 4]}]}

    def latest_jpeg(self):
        if self.fail:
            raise RuntimeError("pipeline stopped")
        return self.jpeg


def test_signals_are_described_and_pushed_when_they_change(session):
    sig = FakeSignals()
    app = create_app(session, pin=PIN, signals=sig)
    client = app.test_client()
    assert client.get("/api/signals").get_json()["seats"][0]["led"]["state"] == "off"
    dash = app.extensions["cardtable"]
    before = dash.broker.seq
    sig.lit = True
    sig.when_changed()          # what hardware.Signals calls from its pattern threads
    assert dash.broker.seq == before + 1
    snap = json.loads(dash.broker.current)
    assert snap["signals"]["seats"][0]["led"]["state"] == "on"
    dash.close()
    assert sig.when_changed is None


def test_camera_status_and_frame(session):
    app = create_app(session, pin=PIN, camera=FakeCamera())
    client = app.test_client()
    st = client.get("/api/camera").get_json()
    assert st["available"] and st["fps"] == 9.5 and st["detections"][0]["card"] == "QS"
    r = client.get("/api/camera.jpg")
    assert r.status_code == 200 and r.mimetype == "image/jpeg" and r.data.startswith(b"\xff\xd8")
    app.extensions["cardtable"].close()


def test_camera_without_frame_or_failing(session):
    app = create_app(session, pin=PIN, camera=FakeCamera(jpeg=None))
    assert app.test_client().get("/api/camera.jpg").get_json()["error"] == "no_frame"
    app.extensions["cardtable"].close()
    app = create_app(session, pin=PIN, camera=FakeCamera(fail=True))
    client = app.test_client()
    st = client.get("/api/camera").get_json()
    assert st["state"] == "error" and "pipeline stopped" in st["message"]
    assert client.get("/api/camera.jpg").status_code == 503
    assert client.get("/camera").status_code == 200
    app.extensions["cardtable"].close()


def test_snapshot_follows_every_event(client, app):
    dash = app.extensions["cardtable"]
    post(client, NEW)
    post(client, {"event": "play", "seat": 1, "cards": ["3c"]})
    snap = client.get("/api/snapshot").get_json()
    assert snap["seq"] == dash.broker.seq
    assert snap["state"]["to_act"] == 2 and snap["last"]["index"] == 1
    assert snap["last"]["verdict"]["words"] == "Bo leads 3C"
    assert snap["title"].startswith("Big Two")


def test_events_from_elsewhere_reach_the_snapshot(client, session):
    # the camera pipeline talks to the session directly, not through HTTP
    session.submit(NEW)
    session.submit({"event": "play", "seat": 1, "cards": ["4d"]})
    snap = client.get("/api/snapshot").get_json()
    assert snap["state"]["trick"][0]["cards"] == ["4D"]


def test_breaches_are_in_plain_words(client):
    # Bo leads the first hand with 3D; when Cy later shows 3C (the lowest card), Bo's lead is proven wrong
    events = [NEW, {"event": "play", "seat": 1, "cards": ["3d"]}, {"event": "pass", "seat": 2},
              {"event": "pass", "seat": 0}, {"event": "play", "seat": 1, "cards": ["4d"]},
              {"event": "play", "seat": 2, "cards": ["5d"]}, {"event": "play", "seat": 0, "cards": ["6h"]},
              {"event": "pass", "seat": 1}, {"event": "pass", "seat": 2},
              {"event": "play", "seat": 0, "cards": ["7h"]}, {"event": "play", "seat": 1, "cards": ["8h"]},
              {"event": "play", "seat": 2, "cards": ["9h"]}, {"event": "pass", "seat": 0},
              {"event": "pass", "seat": 1}]
    for event in events:
        assert post(client, event).get_json()["ok"], event
    v = post(client, {"event": "play", "seat": 2, "cards": ["3c"]}).get_json()
    assert v["ok"] and v["flags"][0]["code"] == "not_lowest_holder" and v["flags"][0]["refers_to"] == 1
    assert v["flag_words"] == ["Breach flagged: Bo led the first hand without the lowest card (line 1)"]
    snap = client.get("/api/snapshot").get_json()
    assert snap["breaches"] == v["flag_words"]


def test_a_dashboard_failure_never_reaches_the_table(session, monkeypatch, caplog):
    """The camera pipeline calls session.submit; the dashboard's listener must not break it."""
    app = create_app(session, pin=PIN)
    dash = app.extensions["cardtable"]

    def broken():
        raise RuntimeError("snapshot bug")
    monkeypatch.setattr(dash, "snapshot", broken)
    verdict = session.submit(NEW)
    assert verdict["ok"] and session.state()["game"] == "big-two"
    assert "could not push the new table state" in caplog.text
    dash.close()


def test_state_fields_json_cannot_hold_are_shown_as_text():
    from web.broker import Broker

    class Card:
        def __str__(self):
            return "QS"
    broker = Broker()
    broker.publish({"state": {"top": Card(), "seen": {"7H"}}})
    assert json.loads(broker.current)["state"] == {"top": "QS", "seen": "{'7H'}"}


def test_a_retried_change_is_judged_once(client, session):
    post(client, NEW)
    key = {**H, "Idempotency-Key": "phone-1-change-7"}
    first = post(client, {"event": "play", "seat": 1, "cards": ["3c"]}, headers=key)
    again = post(client, {"event": "play", "seat": 1, "cards": ["3c"]}, headers=key)
    assert first.get_json() == again.get_json() and first.get_json()["ok"]
    assert again.headers["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first.headers
    assert len(session.store.events(session.game_id)) == 2
    other = post(client, {"event": "play", "seat": 2, "cards": ["4c"]}, headers={**H, "Idempotency-Key": "k2"})
    assert other.get_json()["index"] == 2
    r = post(client, {"event": "undo"}, headers={**H, "Idempotency-Key": "x" * 101})
    assert r.status_code == 400 and r.get_json()["error"] == "bad_idempotency_key"


def test_log_download_replays_to_the_same_state(client, session, tmp_path):
    from referee.log import replay
    post(client, NEW)
    post(client, {"event": "play", "seat": 1, "cards": ["3c"]})
    post(client, {"event": "amend", "index": 1, "with": {"event": "play", "seat": 1, "cards": ["4c"]}})
    r = client.get(f"/api/games/{session.game_id}/log.jsonl")
    assert r.status_code == 200 and r.mimetype == "application/x-ndjson"
    lines = [json.loads(line) for line in r.get_data(as_text=True).splitlines()]
    assert len(lines) == 3 and lines[2]["event"] == "amend"
    assert replay(lines).state() == session.referee.state()
    assert client.get("/api/games/77/log.jsonl").get_json()["error"] == "no_such_game"


def test_a_damaged_stored_log_is_said_plainly(client, session):
    post(client, NEW)
    post(client, {"event": "play", "seat": 1, "cards": ["3c"]})
    session.store._db.execute("DELETE FROM events WHERE game_id = ? AND idx = 0", (session.game_id,))
    for path in (f"/api/games/{session.game_id}", f"/api/games/{session.game_id}/log.jsonl"):
        r = client.get(path)
        assert r.status_code == 500 and r.get_json()["error"] == "damaged_log"
        assert "line 0 is missing" in r.get_json()["message"]
