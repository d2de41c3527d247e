"""Server-Sent Events over a real waitress server on loopback, and clean shutdown."""

from __future__ import annotations

import http.client
import json
import queue
import socket

import pytest

from cardtable.session import Session
from cardtable.store import Store
from web import create_app, serve
from web.broker import Broker

PIN = "4821"
NEW = {"event": "new_game", "game": "big-two", "players": ["Ann", "Bo", "Cy"], "dealer": 0}
TIMEOUT = 10      # seconds a socket may stay silent before the test fails instead of hanging


class SSEClient:
    """A minimal EventSource: yields (event, id, data) from /api/stream."""

    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        self.conn.request("GET", "/api/stream", headers={"Accept": "text/event-stream"})
        self.resp = self.conn.getresponse()
        assert self.resp.status == 200
        assert self.resp.getheader("Content-Type").startswith("text/event-stream")

    def next_event(self) -> dict | None:
        fields: dict[str, str] = {}
        while True:
            line = self.resp.readline()
            if not line:
                return None                   # the server ended the stream
            line = line.decode().rstrip("\n")
            if not line:
                if "data" in fields:
                    return {"event": fields.get("event"), "id": fields.get("id"), "data": json.loads(fields["data"])}
                fields = {}
                continue
            if line.startswith(":"):
                continue
            key, _, value = line.partition(": ")
            fields[key] = value

    def close(self):
        self.conn.close()


def post(port, event, pin=PIN):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    conn.request("POST", "/api/events", body=json.dumps(event),
                 headers={"Content-Type": "application/json", "X-Table-Pin": pin})
    resp = conn.getresponse()
    body = json.loads(resp.read())
    conn.close()
    return resp.status, body


@pytest.fixture
def table(tmp_path):
    store = Store(str(tmp_path / "table.sqlite"))
    session = Session(store)
    app = create_app(session, pin=PIN)
    server = serve(app, "127.0.0.1", 0)
    yield server, session
    server.close()
    store.close()


def test_connect_gets_the_whole_state_then_every_change(table):
    server, session = table
    session.submit(NEW)
    client = SSEClient(server.port)
    first = client.next_event()
    assert first["event"] == "state" and first["data"]["state"]["players"] == ["Ann", "Bo", "Cy"]
    assert first["id"] == str(first["data"]["seq"])
    status, verdict = post(server.port, {"event": "play", "seat": 1, "cards": ["3c"]})
    assert status == 200 and verdict["ok"]
    second = client.next_event()
    assert second["data"]["state"]["to_act"] == 2
    assert second["data"]["last"]["verdict"]["words"] == "Bo leads 3C"
    assert int(second["id"]) > int(first["id"])
    client.close()


def test_twenty_clients_all_get_the_new_state(table):
    server, session = table
    session.submit(NEW)
    clients = [SSEClient(server.port) for _ in range(20)]
    for c in clients:
        assert c.next_event()["data"]["state"]["log_length"] == 1
    status, _ = post(server.port, {"event": "play", "seat": 1, "cards": ["3c"]})
    assert status == 200
    for c in clients:
        assert c.next_event()["data"]["state"]["log_length"] == 2
    for c in clients:
        c.close()


def test_a_reconnect_starts_from_the_current_state(table):
    server, session = table
    session.submit(NEW)
    first = SSEClient(server.port)
    first.next_event()
    first.close()
    session.submit({"event": "play", "seat": 1, "cards": ["3c"]})
    session.submit({"event": "play", "seat": 2, "cards": ["4c"]})
    again = SSEClient(server.port)
    snap = again.next_event()["data"]
    assert snap["state"]["log_length"] == 3 and snap["state"]["to_act"] == 0
    again.close()


def test_close_ends_open_streams_and_frees_the_port(tmp_path):
    store = Store(str(tmp_path / "t.sqlite"))
    session = Session(store)
    app = create_app(session, pin=PIN)
    server = serve(app, "127.0.0.1", 0)
    port = server.port
    clients = [SSEClient(port) for _ in range(3)]
    for c in clients:
        c.next_event()
    server.close()
    for c in clients:
        try:
            assert c.next_event() is None
        except (ConnectionError, http.client.IncompleteRead, socket.timeout) as exc:   # cut mid-chunk
            assert not isinstance(exc, socket.timeout), "the stream was left open"
        c.close()
    # the same port serves again at once (a restart)
    app2 = create_app(Session.resume(store), pin=PIN)
    again = serve(app2, "127.0.0.1", port)
    c = SSEClient(port)
    assert c.next_event()["data"]["state"]["game"] is None
    c.close()
    again.close()
    store.close()


def test_stream_ends_after_its_maximum_life(tmp_path):
    store = Store(str(tmp_path / "t.sqlite"))
    app = create_app(Session(store), pin=PIN, stream_max_s=0.0, keepalive_s=0.05)
    with serve(app, "127.0.0.1", 0) as server:
        c = SSEClient(server.port)
        assert c.next_event() is not None          # the snapshot first
        assert c.next_event() is None              # then the server closes; EventSource reconnects
        c.close()
    store.close()


def test_broker_drops_a_client_that_falls_behind():
    broker = Broker(queue_size=3)
    q = broker.subscribe()
    for i in range(5):
        broker.publish({"n": i})
    assert broker.subscribers == 0
    items = list(broker.messages(q, timeout=0.01))
    # whatever it still held, the stream ends (the phone reconnects and gets the whole state)
    assert all(isinstance(i, tuple) for i in items)


def test_broker_merge_keeps_the_newest_snapshot():
    broker = Broker()
    broker.publish({"state": {"n": 1}})
    broker.publish({"state": {"n": 2}})
    broker.merge(signals={"lit": True})
    assert json.loads(broker.current) == {"state": {"n": 2}, "signals": {"lit": True}, "seq": 3}


def test_subscribe_after_close_ends_at_once():
    broker = Broker()
    broker.close()
    q = broker.subscribe()
    assert list(broker.messages(q, timeout=0.01)) == []
    with pytest.raises(queue.Empty):
        q.get_nowait()
