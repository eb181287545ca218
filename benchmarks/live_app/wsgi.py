"""Flask under gunicorn: ``GET /qty?text=...`` answers ``parse_qty(text)``; with regrow, behind WSGIMiddleware."""

from events import ENABLED, options
from flask import Flask, request
from liveshop import parse  # a module reference: the 3.10/3.11 watch wraps module names

app = Flask(__name__)


@app.get("/qty")
def qty():
    return str(parse.parse_qty(request.args.get("text", "")))


@app.get("/")
def health():
    return "ok"


if ENABLED:
    from regrow.web import WSGIMiddleware

    app.wsgi_app = WSGIMiddleware(app.wsgi_app, "liveshop", **options())  # type: ignore[method-assign]
