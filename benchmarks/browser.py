"""Headless Chromium driven over the DevTools protocol: the page's browser test and its first-paint benchmark.

Debian's ``chromium`` runs with a fresh profile and ``--remote-debugging-port=0``; the
port it picks is read from the profile's ``DevToolsActivePort`` file, and one
websocket (``websockets``' synchronous client) carries every command. A
:class:`Tab` navigates, evaluates script, clicks with real mouse events at an
element's centre, types, takes screenshots, and records every request the page
makes (``Network.requestWillBeSent``), so a test can check that nothing left the
machine.

    with Chromium() as browser:
        tab = browser.tab("http://127.0.0.1:8765/")
        tab.wait_for("document.body.dataset.ready === '1'")
        tab.click("#timeline li.item")
"""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.processes import free_port

__all__ = ["CHROMIUM_FLAGS", "BrowserError", "Chromium", "Tab", "find_chromium", "serving"]

# As root Chromium needs --no-sandbox; without the background-networking flags it
# tries to reach Google's hosts at every start, which an offline machine refuses.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
                  "--hide-scrollbars"]
START_SECONDS = 60.0  # hang guard for the browser's start on a loaded machine


class BrowserError(RuntimeError):
    """The browser did not start, a command failed, or a wait ran out."""


def find_chromium() -> str | None:
    """Debian's chromium (or another Chromium/Chrome on PATH)."""
    return next((path for name in ("chromium", "chromium-browser", "google-chrome")
                 if (path := shutil.which(name))), None)


class Chromium:
    """A headless Chromium process and its DevTools connection; a context manager that ends both.

    Args:
        executable: the browser (default :func:`find_chromium`).
        width: the window's width in CSS pixels.
        height: its height.
    """

    def __init__(self, executable: str | None = None, *, width: int = 1280, height: int = 900) -> None:
        from websockets.sync.client import connect

        exe = executable or find_chromium()
        if exe is None:
            raise BrowserError("no chromium on PATH: apt-get install chromium")
        self._profile = tempfile.mkdtemp(prefix="chromium-")
        self.process = subprocess.Popen(
            [exe, *CHROMIUM_FLAGS, f"--user-data-dir={self._profile}", "--remote-debugging-port=0",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.width, self.height = width, height
        self._ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []
        try:
            self._socket = connect(self._endpoint(), max_size=None, open_timeout=START_SECONDS).__enter__()
        except BaseException:
            self.close()
            raise

    def _endpoint(self) -> str:
        """The browser's websocket URL, from the port file Chromium writes into its profile."""
        port_file = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                error = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
                raise BrowserError(f"chromium exited with {self.process.returncode}: {error[-1500:]}")
            lines = port_file.read_text().split("\n") if port_file.exists() else []
            if len(lines) >= 2 and lines[0].isdigit():
                return f"ws://127.0.0.1:{lines[0]}{lines[1]}"
            time.sleep(0.05)
        raise BrowserError(f"chromium wrote no DevTools port within {START_SECONDS:g} s")

    def send(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None,
             timeout: float = 60.0) -> dict[str, Any]:
        """Run one DevTools command and return its result (events that arrive meanwhile are kept)."""
        message_id = next(self._ids)
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        self._socket.send(json.dumps(message))
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == message_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})

    def _receive(self, deadline: float) -> dict[str, Any]:
        left = deadline - time.monotonic()
        if left <= 0:
            raise BrowserError("the browser did not answer in time")
        try:
            message = json.loads(self._socket.recv(timeout=left))
        except TimeoutError:
            raise BrowserError("the browser did not answer in time") from None
        if "method" in message:
            self.events.append(message)
        return message  # type: ignore[no-any-return]

    def wait_event(self, method: str, session: str, timeout: float = 60.0, after: int = 0) -> dict[str, Any]:
        """The first event ``method`` of ``session`` among those received from index ``after`` on (waits for it)."""
        deadline = time.monotonic() + timeout
        seen = after
        while True:
            for event in self.events[seen:]:
                if event["method"] == method and event.get("sessionId") == session:
                    return event
            seen = len(self.events)
            self._receive(deadline)

    def tab(self, url: str, *, timeout: float = 60.0) -> Tab:
        """A new tab showing ``url`` once its load event fired."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        tab = Tab(self, session)
        for domain in ("Page", "Runtime", "Network"):
            self.send(f"{domain}.enable", session=session)
        self.send("Emulation.setDeviceMetricsOverride", {"width": self.width, "height": self.height,
                                                         "deviceScaleFactor": 1, "mobile": False}, session=session)
        tab.goto(url, timeout=timeout)
        return tab

    def close(self) -> None:
        """End the connection and the browser, and remove its profile."""
        socket = getattr(self, "_socket", None)
        if socket is not None:
            socket.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr is not None:
            self.process.stderr.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Tab:
    """One page of a :class:`Chromium`, driven as a user would: navigate, click, type, look."""

    def __init__(self, browser: Chromium, session: str) -> None:
        self.browser, self.session = browser, session

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60.0) -> dict[str, Any]:
        """A DevTools command to this tab."""
        return self.browser.send(method, params, session=self.session, timeout=timeout)

    def goto(self, url: str, *, timeout: float = 60.0) -> None:
        """Navigate to ``url`` and wait for its load event."""
        mark = len(self.browser.events)
        self.send("Page.navigate", {"url": url})
        self.browser.wait_event("Page.loadEventFired", self.session, timeout=timeout, after=mark)

    @property
    def requests(self) -> list[str]:
        """Every URL this tab requested, in order (pages, API calls, anything else)."""
        return [e["params"]["request"]["url"] for e in self.browser.events
                if e["method"] == "Network.requestWillBeSent" and e.get("sessionId") == self.session]

    def evaluate(self, expression: str, timeout: float = 60.0) -> Any:
        """The value of a script expression in the page (a promise is awaited).

        Raises:
            BrowserError: the script threw; the message is the page's.
        """
        result = self.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                                "returnByValue": True}, timeout=timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise BrowserError(f"script failed: {details.get('exception', {}).get('description') or details}")
        return result["result"].get("value")

    def wait_for(self, expression: str, *, timeout: float = 60.0) -> Any:
        """Evaluate ``expression`` until it is truthy; returns that value.

        Raises:
            BrowserError: it stayed falsy for ``timeout`` seconds (the message shows the page's notice).
        """
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                notice = self.evaluate("(document.getElementById('notice') || {}).textContent || ''")
                raise BrowserError(f"waited {timeout:g} s for {expression}" + (f"; the page says: {notice}"
                                                                               if notice else ""))
            time.sleep(0.05)

    def click(self, selector: str) -> None:
        """Click the first element matching ``selector`` with the mouse, at its centre (scrolled into view)."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2, r.width * r.height]; })()")
        if not box or not box[2]:
            raise BrowserError(f"nothing visible to click at {selector!r}")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left",
                                                   "clickCount": 0 if kind == "mouseMoved" else 1})

    def type(self, selector: str, text: str) -> None:
        """Focus ``selector``, empty it and type ``text`` as keyboard input."""
        self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                      " e.focus(); e.select(); })()")
        self.send("Input.insertText", {"text": text})

    def press_enter(self) -> None:
        """Press and release Enter in the focused element (submits its form)."""
        for kind in ("keyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", {"type": kind, "key": "Enter", "code": "Enter",
                                                 "windowsVirtualKeyCode": 13, "text": "\r" if kind == "keyDown"
                                                 else ""})

    def screenshot(self, path: str | Path) -> Path:
        """A PNG of the window as it shows now."""
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path


@contextmanager
def serving(app: Any, *, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve the ASGI ``app`` with uvicorn in a thread of this process on a free port; yields its URL.

    In-process, so the app may hold a memory made here (a test's fast embeddings).
    """
    import uvicorn

    port = free_port(host)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, name="ui-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_SECONDS
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise BrowserError(f"the server did not start on {host}:{port}")
        time.sleep(0.02)
    try:
        yield f"http://{host}:{port}/"
    finally:
        server.should_exit = True
        thread.join(timeout=START_SECONDS)
