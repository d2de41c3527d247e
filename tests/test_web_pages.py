"""The HTML pages and their forms: PIN, CSRF, the new-game form, history, camera, join."""

from __future__ import annotations

import re

import pytest

from web import create_app

from web_fixtures import PIN, app, client, session  # noqa: F401  (fixtures)


def csrf(client, path="/new"):
    html = client.get(path).get_data(as_text=True)
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


def unlock(client):
    token = csrf(client, "/unlock")
    r = client.post("/unlock", data={"csrf_token": token, "pin": PIN, "next": "/history"})
    assert r.status_code == 302 and r.headers["Location"].endswith("/history")
    return token


FORM = {"game": "big-two", "players": "Ann\nBo\nCy", "dealer": "1"}


def test_every_page_renders_without_a_game(client):
    for path in ("/", "/history", "/new", "/camera", "/join", "/unlock"):
        r = client.get(path)
        assert r.status_code == 200, path
        assert "text/html" in r.content_type
    assert "no camera" in client.get("/camera").get_data(as_text=True)


def test_unlock_with_wrong_pin_and_bad_token(client):
    token = csrf(client, "/unlock")
    r = client.post("/unlock", data={"csrf_token": token, "pin": "1111"})
    assert r.status_code == 403 and "that is not the table PIN" in r.get_data(as_text=True)
    r = client.post("/unlock", data={"csrf_token": "forged", "pin": PIN})
    assert r.status_code == 403 and "reload the page" in r.get_data(as_text=True)
    # still locked: the live page offers to unlock and has no entry panel
    html = client.get("/").get_data(as_text=True)
    assert 'id="unlock-link"' in html and 'id="entry"' not in html


def test_unlock_never_redirects_off_site(client):
    token = csrf(client, "/unlock")
    r = client.post("/unlock", data={"csrf_token": token, "pin": PIN, "next": "//evil.example/x"})
    assert r.status_code == 302 and r.headers["Location"] == "/"


def test_unlocked_phone_sends_events_with_its_csrf_token(client, session):
    token = unlock(client)
    assert 'id="entry"' in client.get("/").get_data(as_text=True)
    r = client.post("/api/events", json={"event": "new_game", "game": "big-two", "players": ["A", "B"],
                                         "dealer": 0}, headers={"X-CSRF-Token": token})
    assert r.status_code == 200 and r.get_json()["ok"]
    assert session.store.events(session.game_id)[0]["source"] == "phone"
    r = client.post("/api/events", json={"event": "undo"}, headers={"X-CSRF-Token": "wrong"})
    assert r.status_code == 403 and r.get_json()["error"] == "bad_csrf_token"


def test_lock_forgets_the_pin(client):
    token = unlock(client)
    assert client.post("/lock", data={"csrf_token": token}).status_code == 302
    r = client.post("/api/events", json={"event": "undo"}, headers={"X-CSRF-Token": token})
    assert r.status_code == 401


def test_changing_the_pin_locks_unlocked_phones(session, tmp_path):
    key = "k" * 64
    first = create_app(session, pin=PIN, secret_key=key)
    client = first.test_client()
    token = unlock(client)
    first.extensions["cardtable"].close()
    second = create_app(session, pin="9999", secret_key=key)
    client2 = second.test_client()
    client2.set_cookie("session", client.get_cookie("session").value)
    r = client2.post("/api/events", json={"event": "undo"}, headers={"X-CSRF-Token": token})
    assert r.status_code == 401 and r.get_json()["error"] == "pin_required"
    second.extensions["cardtable"].close()


def test_new_game_form_with_pin_field(client, session):
    token = csrf(client)
    r = client.post("/new", data={**FORM, "csrf_token": token, "pin": PIN,
                                  "opt.big-two.hand_size": "8", "opt.big-two.end_at": "50",
                                  "opt.big-two.bombs.present": "1", "opt.big-two.bombs": "on",
                                  "opt.big-two.allow_negative.present": "1"})
    assert r.status_code == 302
    event = session.store.events(session.game_id)[0]
    # only options that differ from the defaults are written into the log
    assert event["options"] == {"hand_size": 8, "bombs": True, "allow_negative": False}
    assert event["players"] == ["Ann", "Bo", "Cy"] and event["dealer"] == 1
    state = session.state()
    assert state["options"]["hand_size"] == 8 and state["dealer"] == 1


def test_new_game_with_draw_for_dealer(client, session):
    unlock(client)
    r = client.post("/new", data={**FORM, "dealer": "draw", "csrf_token": csrf(client)})
    assert r.status_code == 302 and session.state()["phase"] == "draw"


@pytest.mark.parametrize("changes, message", [
    ({"game": "chess"}, "choose one of the games"),
    ({"players": "  "}, "one per line"),
    ({"players": "Ann\nann"}, "same name"),
    ({"players": "Ann", "dealer": "0"}, "is for 2-5 players, not 1"),
    ({"players": "A\nB\nC\nD\nE\nF"}, "is for 2-5 players, not 6"),
    ({"dealer": "7"}, "the dealer must be one of the 3 players"),
    ({"dealer": "x"}, "the dealer must be one of the 3 players"),
    ({"opt.big-two.hand_size": "ten"}, "must be a whole number"),
    ({"opt.big-two.hand_size": "20"}, "must be at most 13"),
    ({"opt.big-two.direction": "sideways"}, "must be one of clockwise, counterclockwise"),
])
def test_new_game_form_errors_are_clear_and_change_nothing(client, session, changes, message):
    unlock(client)
    session.submit({"event": "new_game", "game": "big-two", "players": ["X", "Y"], "dealer": 0})
    before = session.store.games()
    r = client.post("/new", data={**FORM, **changes, "csrf_token": csrf(client)})
    assert r.status_code == 400
    html = r.get_data(as_text=True)
    assert message in html
    # the form keeps what was typed
    assert "Ann" in html or changes.get("players", "").strip() == "" or "ann" in html
    assert session.store.games() == before
    assert len(session.store.events(session.game_id)) == 1


def test_new_game_form_refuses_without_pin_or_token(client, session):
    r = client.post("/new", data={**FORM, "csrf_token": csrf(client)})
    assert r.status_code == 401 and "need the table PIN" in r.get_data(as_text=True)
    r = client.post("/new", data={**FORM, "pin": PIN})
    assert r.status_code == 403
    r = client.post("/new", data={**FORM, "csrf_token": csrf(client), "pin": PIN},
                    headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and "own pages" in r.get_data(as_text=True)
    assert session.store.games() == []


def test_new_game_form_renders_every_option_with_help(client):
    html = client.get("/new").get_data(as_text=True)
    from referee.games import GAMES
    for cls in GAMES.values():
        for option in cls.options:
            assert f'name="opt.{cls.name}.{option.name}' in html
            assert option.help.replace("'", "&#39;").replace('"', "&#34;") in html


def test_history_pages(client, session):
    for event in [{"event": "new_game", "game": "big-two", "players": ["Ann", "Bo"], "dealer": 0,
                   "options": {"hand_size": 2}},
                  {"event": "play", "seat": 1, "cards": ["3c"]}, {"event": "play", "seat": 0, "cards": ["5c"]},
                  {"event": "pass", "seat": 1}, {"event": "play", "seat": 0, "cards": ["9h"]}]:
        assert session.submit(event)["ok"], event
    listing = client.get("/history").get_data(as_text=True)
    assert f"/history/{session.game_id}" in listing and "Ann, Bo" in listing and "now playing" in listing
    page = client.get(f"/history/{session.game_id}").get_data(as_text=True)
    assert "Hand 1" in page and "Ann wins" in page and 'data-card="3C"' in page and 'data-card="9H"' in page
    assert "Points this hand" in page
    r = client.get("/history/42")
    assert r.status_code == 404 and "there is no game 42" in r.get_data(as_text=True).lower()


def test_names_are_escaped_everywhere(client, session):
    evil = "</script><script>alert(1)</script>"
    session.submit({"event": "new_game", "game": "big-two", "players": [evil, "Bo"], "dealer": 0})
    for path in ("/", "/history", f"/history/{session.game_id}"):
        html = client.get(path).get_data(as_text=True)
        assert "<script>alert(1)" not in html, path


def test_join_page_has_a_qr_code(session):
    app = create_app(session, pin=PIN, public_url="http://cardtable.local")
    client = app.test_client()
    html = client.get("/join").get_data(as_text=True)
    assert "<svg" in html and "http://cardtable.local/" in html
    svg = client.get("/join.svg")
    assert svg.mimetype == "image/svg+xml" and b"<svg" in svg.data
    assert client.get("/api/join").get_json() == {"urls": ["http://cardtable.local/"]}
    app.extensions["cardtable"].close()


def test_unknown_page_is_a_page(client):
    r = client.get("/nowhere")
    assert r.status_code == 404 and "there is nothing at this address" in r.get_data(as_text=True).lower()


def test_new_game_form_tables_by_player_count(client, session):
    unlock(client)
    defaults = {"opt.khanhoo.hand_size.2": "20", "opt.khanhoo.hand_size.3": "16", "opt.khanhoo.hand_size.4": "15",
                "opt.khanhoo.hand_size.5": "12"}
    r = client.post("/new", data={"game": "khanhoo", "players": "A\nB\nC", "dealer": "draw",
                                  "csrf_token": csrf(client), **defaults, "opt.khanhoo.win_threshold.3": "12"})
    assert r.status_code == 302
    event = session.store.events(session.game_id)[0]
    assert event["options"] == {"win_threshold": {"3": 12}}
    assert session.state()["options"]["win_threshold"]["3"] == 12
    r = client.post("/new", data={"game": "khanhoo", "players": "A\nB\nC", "dealer": "0",
                                  "csrf_token": csrf(client), "opt.khanhoo.packets.3": "two"})
    assert r.status_code == 400 and "option &#39;packets&#39; for 3 players must be a whole number" in \
        r.get_data(as_text=True)


def test_dealer_choices_cover_the_largest_table(client):
    from referee.games import GAMES
    most = max(cls.max_players for cls in GAMES.values())
    html = client.get("/new").get_data(as_text=True)
    assert f'<option value="{most - 1}"' in html and f'<option value="{most}"' not in html
