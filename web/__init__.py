"""The phone dashboard and JSON API (Flask, served in-process by waitress).

``create_app(session, pin=...)`` builds the application around a live
:class:`cardtable.session.Session`; :func:`serve` runs it in a background
thread (``cardtable run``), :mod:`web.cli` in the foreground (``cardtable serve``).
"""

from web.app import create_app
from web.server import Server, serve

__all__ = ["create_app", "serve", "Server"]
