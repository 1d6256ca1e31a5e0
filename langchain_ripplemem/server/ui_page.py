"""``ripplemem ui``: a local web page to look at a memory (Starlette and uvicorn, one self-contained page).

The page (``assets/ui``: HTML, CSS and script inlined into one response, nothing
fetched from elsewhere) lists the namespaces, one namespace's memories on a timeline
(filtered by person, place, conversation and text, paged on the server), one memory
with its links by type, a recall box that draws the recollection, and forgetting
(refused with ``read_only``). It reads the memory only through the JSON routes of
:mod:`langchain_ripplemem.server.ui_api`, and the memory is held as
:mod:`langchain_ripplemem.server.ui_access` says (an embedded store only while
requests come).

Security: the server binds 127.0.0.1 unless told otherwise, and then needs a token
(:func:`serve` makes one). With a token, the first URL (``/?token=...``) sets a
cookie for the page, and every API request must carry the token in the
``X-RippleMem-Token`` header (the page has it; another site cannot read it). Without
one, requests must name a loopback host (``Host``), which a page of another site
reached through a rebound DNS name does not. A forget is a ``POST`` with a JSON body
(another site's form cannot send one), that repeats what it forgets as
``confirm``. Every refusal is a 4xx whose JSON ``error`` names the problem.

Example:
    >>> from starlette.testclient import TestClient
    >>> from langchain_ripplemem.memory import RippleMem
    >>> app = create_app(MemoryAccess.held(RippleMem()), read_only=True)
    >>> client = TestClient(app, base_url="http://127.0.0.1")
    >>> client.get("/api/namespaces").json()
    {'namespaces': []}
    >>> answer = client.post("/api/forget", json={"namespace": "a", "what": "memory", "target": "x", "confirm": "x"})
    >>> answer.status_code, answer.json()["error"]
    (403, 'the page was started read-only (--read-only): forgetting is refused')
"""

from __future__ import annotations

import contextlib
import functools
import hmac
import ipaddress
import json
import secrets
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from html import escape
from importlib import resources
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from langchain_ripplemem.errors import RippleMemError
from langchain_ripplemem.server import ui_api
from langchain_ripplemem.server.ui_access import MemoryAccess
from langchain_ripplemem.storage.locks import StoreLockedError

if TYPE_CHECKING:
    from langchain_ripplemem.memory import RippleMem

__all__ = ["COOKIE", "TOKEN_HEADER", "MemoryAccess", "create_app", "is_loopback", "serve"]

COOKIE, TOKEN_HEADER = "ripplemem_ui_token", "X-RippleMem-Token"
MAX_BODY = 64 * 1024  # bytes a POST body may hold
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}
# Nothing but the page itself: inline style and script, the API, and the recall picture in a sandboxed frame.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                               "connect-src 'self'; img-src data:; frame-src 'self'; base-uri 'none'; "
                               "form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
}

Route_ = Callable[["RippleMem", Mapping[str, Any]], dict[str, Any]]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is this machine's loopback."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=SECURITY_HEADERS)


def _asset(name: str) -> str:
    return (resources.files("langchain_ripplemem") / "assets" / "ui" / name).read_text("utf-8")


@functools.lru_cache(maxsize=1)
def _page_template() -> str:
    return (_asset("page.html").replace("/*STYLE*/", _asset("page.css")).replace("/*SCRIPT*/", _asset("page.js")))


def render_page(*, token: str | None, read_only: bool, store: str) -> str:
    """The page: one HTML document with its style and script inlined."""
    return (_page_template().replace("{{token}}", escape(token or "")).replace("{{read_only}}", "1" if read_only
                                                                              else "0")
            .replace("{{store}}", escape(store)))


class _Guard:
    """The checks every request passes: the host it names, the token, a POST's shape."""

    def __init__(self, token: str | None) -> None:
        self.token = token

    def has_token(self, given: str | None) -> bool:
        return given is not None and self.token is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def refuse(self, request: Request, *, api: bool) -> JSONResponse | None:
        """Why ``request`` is refused (a 4xx response), or ``None`` when it may go on."""
        host = request.url.hostname or ""
        if self.token is None and not is_loopback(host):
            return _error(400, f"Host {host!r} is not a loopback name: this server answers only requests to "
                          "127.0.0.1 or localhost (start it with --host and a token to serve other names)")
        if self.token is not None:
            given = request.headers.get(TOKEN_HEADER) if api else request.cookies.get(COOKIE)
            if not self.has_token(given):
                where = f"the {TOKEN_HEADER} header" if api else "the URL that `ripplemem ui` printed (with ?token=)"
                return _error(401, f"missing or wrong token: open the page from {where}")
        if request.method == "POST":
            origin = request.headers.get("origin")
            if origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
                return _error(403, f"cross-site request from {origin!r} refused")
            if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
                return _error(415, "a POST body must be JSON (Content-Type: application/json)")
        return None


def create_app(access: MemoryAccess, *, read_only: bool = False, token: str | None = None,
               store: str = "") -> Starlette:
    """The page and its JSON API over the memory ``access`` opens.

    Args:
        access: how the memory is held (:class:`~langchain_ripplemem.server.ui_access.MemoryAccess`).
        read_only: refuse every forget (403).
        token: required of every request when given (see the module docs).
        store: what the page names as the store (a directory, a server).
    """
    guard = _Guard(token)

    async def page(request: Request) -> Response:
        given = request.query_params.get("token")
        if token is not None and given is not None:
            if not guard.has_token(given):
                return _error(401, "wrong token in the URL: use the one `ripplemem ui` printed")
            response = RedirectResponse("/", status_code=303)
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
            return response
        refused = guard.refuse(request, api=False)
        if refused is not None:
            return refused
        return HTMLResponse(render_page(token=token, read_only=read_only, store=store), headers=SECURITY_HEADERS)

    def api(route: Route_, *, writes: bool = False) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            refused = guard.refuse(request, api=True)
            if refused is not None:
                return refused
            if writes and read_only:
                return _error(403, "the page was started read-only (--read-only): forgetting is refused")
            if request.method == "POST":
                body = await request.body()
                if len(body) > MAX_BODY:
                    return _error(413, f"the request body holds {len(body)} bytes, more than {MAX_BODY}")
                try:
                    given = json.loads(body or b"{}")
                except ValueError as err:
                    return _error(400, f"the request body is not JSON: {err}")
                if not isinstance(given, dict):
                    return _error(400, "the request body must be a JSON object of arguments")
            else:
                given = dict(request.query_params)
            try:
                return JSONResponse(await run_in_threadpool(_answer, access, route, given), headers=SECURITY_HEADERS)
            except ui_api.ApiError as err:
                return _error(err.status, err.message)
            except StoreLockedError as err:
                return _error(409, f"the page opens the embedded store only while it answers, and another process "
                              f"holds it now: {err}")
            except (RippleMemError, ValueError) as err:
                return _error(400, str(err))
        return endpoint

    async def not_found(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        if status == 405:
            return _error(405, f"{request.url.path} does not take {request.method}")
        return _error(status, f"no page or API route at {request.url.path}" if status == 404 else str(exc))

    routes = [Route("/", page, methods=["GET"]),
              Route("/api/namespaces", api(ui_api.namespaces), methods=["GET"]),
              Route("/api/overview", api(ui_api.namespace_overview), methods=["GET"]),
              Route("/api/timeline", api(ui_api.timeline), methods=["GET"]),
              Route("/api/memory", api(ui_api.memory_detail), methods=["GET"]),
              Route("/api/recall", api(ui_api.recall), methods=["POST"]),
              Route("/api/forget", api(ui_api.forget, writes=True), methods=["POST"])]
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        access.close()  # the server stops: a per-use memory may still be open for its idle time

    return Starlette(routes=routes, exception_handlers={HTTPException: not_found}, lifespan=lifespan)


def _answer(access: MemoryAccess, route: Route_, given: Mapping[str, Any]) -> dict[str, Any]:
    with access.use() as memory:
        return route(memory, given)


def serve(access: MemoryAccess, *, host: str = "127.0.0.1", port: int = 8765, read_only: bool = False,
          token: str | None = None, store: str = "") -> None:
    """Serve the page on ``host:port`` until interrupted; a host other than loopback gets a token if none is given.

    Raises:
        ValueError: naming ``port`` when it is not a port number.
    """
    import uvicorn

    if not 0 < port < 65536:
        raise ValueError(f"port must be a port number (1-65535), got {port}")
    if token is None and not is_loopback(host):
        token = secrets.token_urlsafe(24)
    app = create_app(access, read_only=read_only, token=token, store=store)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/" + (f"?token={token}" if token else "")
    print(f"ripplemem ui: {store} at {url}" + (" (read-only)" if read_only else ""), file=sys.stderr, flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
