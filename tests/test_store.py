"""Durable storage: every acknowledged event survives SIGKILL, and the resumed
state equals a replay of the stored log."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap

import pytest

from cardtable.session import Session
from cardtable.store import Store, StoreError
from helpers import new_game, play
from referee.log import replay

WRITER = textwrap.dedent("""
    import json, random, sys
    from cardtable.session import Session
    from cardtable.store import Store
    from referee.simulate import random_game

    db, seed = sys.argv[1], int(sys.argv[2])
    session = Session.resume(Store(db))
    rng = random.Random(seed)
    while True:
        for event in random_game("big-two", 4, rng, max_events=3000):
            if event["event"] == "deal":
                continue        # as a camera sees it: hands unknown
            verdict = session.submit(event)
            # acknowledged: the event is durable before this line is printed
            print(json.dumps({"game": session.game_id, "index": verdict["index"]}), flush=True)
""")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sigkill_loses_no_acknowledged_event(tmp_path, seed):
    db = str(tmp_path / "table.sqlite")
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    proc = subprocess.Popen([sys.executable, str(script), db, str(seed)], stdout=subprocess.PIPE, text=True, env=env)
    acked: list[tuple[int, int]] = []
    target = random.Random(seed).randint(40, 400)
    import json
    while len(acked) < target:
        line = proc.stdout.readline()
        assert line, "writer died early"
        d = json.loads(line)
        acked.append((d["game"], d["index"]))
    os.kill(proc.pid, signal.SIGKILL)
    rest = proc.stdout.read()       # acknowledgements printed before the kill landed
    for line in rest.splitlines():
        if line.strip():
            try:
                d = json.loads(line)
            except ValueError:
                continue            # a line cut by the kill was never acknowledged
            acked.append((d["game"], d["index"]))
    proc.wait()
    store = Store(db)
    for game, index in acked:
        events = store.events(game)
        assert index < len(events), f"acknowledged line {index} of game {game} is lost"
    resumed = Session.resume(store)
    assert resumed.referee.state() == replay(store.events(resumed.game_id)).state()
    assert resumed.game_id == acked[-1][0]
    # and the table carries on: the next event is judged against the resumed state
    before = len(resumed.referee.raw)
    resumed.submit({"event": "undo"})
    assert len(store.events(resumed.game_id)) == before + 1


def test_games_are_listed_and_the_last_one_resumed(tmp_path):
    store = Store(str(tmp_path / "t.sqlite"))
    session = Session(store)
    session.submit(new_game("big-two", 2))
    session.submit(play(0, "3C"))
    first = session.game_id
    session.submit(new_game("big-two", 3))
    session.submit(play(1, "4C"))
    games = store.games()
    assert [g["id"] for g in games] == [session.game_id, first]
    assert [g["lines"] for g in games] == [2, 2]
    again = Session.resume(Store(store.path))
    assert again.game_id == session.game_id and again.state()["to_act"] == 2
    old = Session.resume(store, first)
    assert old.state()["players"] == ["P1", "P2"]


def test_rejected_new_game_is_kept_in_the_current_log(tmp_path):
    store = Store(str(tmp_path / "t.sqlite"))
    session = Session(store)
    session.submit(new_game("big-two", 2))
    v = session.submit(new_game("big-two", 9))
    assert v["code"] == "bad_players"
    assert len(store.games()) == 1 and len(store.events(session.game_id)) == 2


def test_a_gap_in_a_stored_log_is_an_error(tmp_path):
    store = Store(str(tmp_path / "t.sqlite"))
    gid = store.create_game(new_game("big-two", 2))
    store.append(gid, 2, play(0, "3C"))
    with pytest.raises(StoreError, match="line 1 is missing"):
        store.events(gid)
    with pytest.raises(StoreError, match="already has a line 2"):
        store.append(gid, 2, play(0, "3C"))


def test_wal_and_full_sync_are_on(tmp_path):
    store = Store(str(tmp_path / "t.sqlite"))
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 2   # FULL
