"""Durable storage of table event logs in one SQLite file (no server).

Each game is one log: the ``new_game`` line and every line after it.  Every
line is written and committed (WAL journal, ``synchronous=FULL``) *before*
it is acknowledged, so a process killed at any moment loses no acknowledged
event; resuming replays the stored lines, which gives exactly the state the
process had.

>>> store = Store(":memory:")       # a file path in real use
>>> gid = store.create_game({"event": "new_game", "game": "big-two", "players": ["A", "B"], "dealer": 0})
>>> store.append(gid, 1, {"event": "play", "seat": 1, "cards": ["3C"]})
>>> [e["event"] for e in store.events(gid)]
['new_game', 'play']
>>> store.last_game()["id"] == gid
True
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at REAL NOT NULL,
    game TEXT NOT NULL,
    players TEXT NOT NULL,          -- JSON list of names
    summary TEXT                    -- JSON: last known scores/winners, for listings
);
CREATE TABLE IF NOT EXISTS events (
    game_id INTEGER NOT NULL REFERENCES games(id),
    idx INTEGER NOT NULL,           -- position in the game's log (0 = new_game)
    at REAL NOT NULL,               -- wall-clock time it was stored
    body TEXT NOT NULL,             -- the event object as JSON
    PRIMARY KEY (game_id, idx)
);
"""


class StoreError(RuntimeError):
    """The store cannot do what was asked (a gap in a log, an unknown game)."""


class Store:
    """The SQLite file holding every game's event log (thread-safe)."""

    def __init__(self, path: str):
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- writing ------------------------------------------------------------------------
    def create_game(self, new_game: dict) -> int:
        """Start a log with its ``new_game`` line; returns the game's id."""
        with self._lock:
            cur = self._db.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                cur.execute("INSERT INTO games (created_at, game, players) VALUES (?, ?, ?)",
                            (time.time(), str(new_game.get("game")), json.dumps(new_game.get("players", []))))
                gid = cur.lastrowid
                cur.execute("INSERT INTO events (game_id, idx, at, body) VALUES (?, 0, ?, ?)",
                            (gid, time.time(), json.dumps(new_game)))
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            return int(gid)

    def append(self, game_id: int, index: int, event: Any) -> None:
        """Write line ``index`` of a game's log and commit it durably."""
        with self._lock:
            try:
                self._db.execute("INSERT INTO events (game_id, idx, at, body) VALUES (?, ?, ?, ?)",
                                 (game_id, index, time.time(), json.dumps(event)))
            except sqlite3.IntegrityError:
                raise StoreError(f"game {game_id} already has a line {index}") from None

    def set_summary(self, game_id: int, summary: dict) -> None:
        with self._lock:
            self._db.execute("UPDATE games SET summary = ? WHERE id = ?", (json.dumps(summary), game_id))

    # -- reading ------------------------------------------------------------------------
    def events(self, game_id: int) -> list[Any]:
        with self._lock:
            rows = self._db.execute("SELECT idx, body FROM events WHERE game_id = ? ORDER BY idx",
                                    (game_id,)).fetchall()
        for expected, (idx, _) in enumerate(rows):
            if idx != expected:
                raise StoreError(f"game {game_id}: line {expected} is missing from the store")
        return [json.loads(body) for _, body in rows]

    def games(self, limit: int = 100, game_id: int | None = None) -> list[dict]:
        """The most recent games first (or the one ``game_id``), with their line counts."""
        where, params = ("WHERE g.id = ?", (game_id, limit)) if game_id is not None else ("", (limit,))
        with self._lock:
            rows = self._db.execute(
                "SELECT g.id, g.created_at, g.game, g.players, g.summary, COUNT(e.idx) "
                f"FROM games g LEFT JOIN events e ON e.game_id = g.id {where} "
                "GROUP BY g.id ORDER BY g.id DESC LIMIT ?", params).fetchall()
        return [{"id": gid, "created_at": created, "game": game, "players": json.loads(players),
                 "summary": json.loads(summary) if summary else None, "lines": count}
                for gid, created, game, players, summary, count in rows]

    def game(self, game_id: int) -> dict:
        found = self.games(limit=1, game_id=game_id)
        if found:
            return found[0]
        raise StoreError(f"no game {game_id} in {self.path}")

    def last_game(self) -> dict | None:
        games = self.games(limit=1)
        return games[0] if games else None
