"""regrow in a web service: WSGI and ASGI middleware that repair a failing request's code (docs/production.md).

``app.wsgi_app = WSGIMiddleware(app.wsgi_app, "shop", wait=5.0)`` (Flask, Django, any WSGI app) or
``app = ASGIMiddleware(app, "shop", wait=5.0)`` (Starlette, FastAPI, any ASGI app): a request that fails
in a function of the package ``shop`` is repaired per policy; a safe request (GET, HEAD, OPTIONS) is run
again once the fix is installed, any other request never is (its fix serves the next request).
"""

from ._service._middleware import SAFE_METHODS, ASGIMiddleware, WSGIMiddleware

__all__ = ["SAFE_METHODS", "ASGIMiddleware", "WSGIMiddleware"]
