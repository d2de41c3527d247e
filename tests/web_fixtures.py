"""Fixtures shared by the dashboard's tests: a session on a real SQLite file,
the app for it, and Flask's test client."""

from __future__ import annotations

import pytest

from cardtable.session import Session
from cardtable.store import Store
from web import create_app

PIN = "4821"


@pytest.fixture
def session(tmp_path):
    store = Store(str(tmp_path / "table.sqlite"))
    yield Session(store)
    store.close()


@pytest.fixture
def app(session):
    app = create_app(session, pin=PIN)
    yield app
    app.extensions["cardtable"].close()


@pytest.fixture
def client(app):
    return app.test_client()
