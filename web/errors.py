"""Errors as clear messages: JSON under ``/api``, a page elsewhere, never a bare 500."""

from __future__ import annotations

import logging

from flask import Flask, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

log = logging.getLogger(__name__)


class ApiError(Exception):
    """A request we refuse, with an HTTP status, a stable code and a sentence."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _wants_json() -> bool:
    return request.path.startswith("/api/") or request.accept_mimetypes.best == "application/json"


def _respond(status: int, code: str, message: str):
    if _wants_json():
        return jsonify({"ok": False, "error": code, "message": message}), status
    return render_template("error.html", status=status, code=code, message=message), status


def register(app: Flask) -> None:
    @app.errorhandler(ApiError)
    def api_error(err: ApiError):
        return _respond(err.status, err.code, err.message)

    @app.errorhandler(HTTPException)
    def http_error(err: HTTPException):
        code = (err.name or "error").lower().replace(" ", "_")
        messages = {404: "there is nothing at this address", 405: f"{request.method} is not allowed here",
                    413: "the request is too large"}
        return _respond(err.code or 500, code, messages.get(err.code, err.description or err.name))

    @app.errorhandler(Exception)
    def unexpected(err: Exception):
        # A bug, not bad input: keep the traceback in the log, tell the phone plainly.
        log.exception("unexpected error on %s %s", request.method, request.path)
        return _respond(500, "internal_error", "something went wrong on the table computer; it was logged")
