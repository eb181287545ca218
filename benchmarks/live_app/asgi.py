"""Starlette under uvicorn: ``GET /qty?text=...`` answers ``parse_qty(text)``; with regrow, behind ASGIMiddleware."""

from events import ENABLED, options
from liveshop import parse  # a module reference: the 3.10/3.11 watch wraps module names
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route


async def qty(request):
    return PlainTextResponse(str(parse.parse_qty(request.query_params.get("text", ""))))


async def health(request):
    return PlainTextResponse("ok")


app = Starlette(routes=[Route("/qty", qty), Route("/", health)])
if ENABLED:
    from regrow.web import ASGIMiddleware

    app = ASGIMiddleware(app, "liveshop", **options())
