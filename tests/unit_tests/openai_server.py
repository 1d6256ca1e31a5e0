"""A local OpenAI-compatible chat server for tests that drive the real ``ChatOpenAI`` client.

The server (stdlib ``http.server``, one thread per request, 127.0.0.1, a free
port) answers ``POST /v1/chat/completions`` from a scripted queue and records
every request body, so a test asserts both what the package sent
(``response_format``, ``tools``, messages) and what it did with each answer.

Replies:

* :func:`tool_call` - the assistant calls a tool with these arguments (the tool
  the request forces with ``tool_choice``, unless named); ``arguments`` may
  also be raw text (malformed JSON).
* :func:`content` - message text; a ``dict`` or ``list`` is sent as JSON text
  (what ``json_schema`` and ``json_mode`` answers look like).
* :func:`error` - an HTTP status with an OpenAI-style error body.
* :func:`delay` - wait, then send another reply (a client timeout fires first).
* a callable ``(request body) -> reply`` - for answers that depend on the prompt.

Running out of replies answers 500 with a body saying so (and the test's
assertions on ``requests``/``remaining`` point at the script).

Example:
    >>> with ScriptedOpenAIServer() as server:
    ...     server.script(content("Hello [1]."))
    ...     model = server.chat_model()
    ...     model.invoke("hi").content
    'Hello [1].'
    >>> server.requests[0]["messages"][0]["content"]
    'hi'

"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from langchain_openai import ChatOpenAI

__all__ = ["ScriptedOpenAIServer", "content", "delay", "error", "tool_call"]

USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a status and a JSON body, sent after ``wait`` seconds."""

    status: int = 200
    message: dict[str, Any] = field(default_factory=dict)
    finish_reason: str = "stop"
    body: dict[str, Any] | None = None  # a whole error body instead of a completion
    wait: float = 0.0


def tool_call(arguments: dict[str, Any] | str, name: str | None = None) -> Callable[[dict[str, Any]], Reply]:
    """The assistant calls ``name`` (default: the tool the request forces) with ``arguments``."""
    def reply(request: dict[str, Any]) -> Reply:
        tool = name or _forced_tool(request)
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return Reply(message={"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": tool, "arguments": text}}]},
            finish_reason="tool_calls")
    return reply


def content(value: Any, finish_reason: str = "stop") -> Reply:
    """Assistant text; a ``dict``/``list`` is sent as JSON text."""
    text = value if isinstance(value, str) else json.dumps(value)
    return Reply(message={"role": "assistant", "content": text}, finish_reason=finish_reason)


def error(status: int, message: str = "scripted error", kind: str = "server_error",
          code: str | None = None) -> Reply:
    """An HTTP error with OpenAI's body: ``{"error": {"message", "type", "param", "code"}}``."""
    return Reply(status=status, body={"error": {"message": message, "type": kind, "param": None, "code": code}})


def delay(seconds: float, then: Reply | None = None) -> Reply:
    """Wait ``seconds`` before answering ``then`` (default: an empty text answer)."""
    reply = then or content("")
    return Reply(reply.status, reply.message, reply.finish_reason, reply.body, wait=seconds)


def _forced_tool(request: dict[str, Any]) -> str:
    choice = request.get("tool_choice")
    if isinstance(choice, dict):
        return str(choice["function"]["name"])
    tools = request.get("tools") or []
    return str(tools[0]["function"]["name"]) if tools else "unknown_tool"


class ScriptedOpenAIServer:
    """An OpenAI-compatible ``/v1/chat/completions`` endpoint answering from a script.

    Attributes:
        requests: every request body received, in order (parsed JSON).

    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._replies: deque[Any] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="openai-test-server",
                                        daemon=True)

    @property
    def base_url(self) -> str:
        """What ``ChatOpenAI(base_url=...)`` takes."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def remaining(self) -> int:
        """Scripted replies not used yet."""
        return len(self._replies)

    def script(self, *replies: Any) -> None:
        """Queue replies (see the module docs for the kinds)."""
        with self._lock:
            self._replies.extend(replies)

    def chat_model(self, method: str | None = None, **kwargs: Any) -> Any:
        """A real ``ChatOpenAI`` on this server, no client retries; ``method`` fixes its structured output.

        ``method`` (``"function_calling"``, ``"json_schema"``, ``"json_mode"``) replaces
        ``ChatOpenAI``'s default in ``with_structured_output``, which the package calls
        without a method; ``None`` keeps the default (``json_schema``).
        """
        options = {"model": "gpt-4.1-mini", "base_url": self.base_url, "api_key": "test", "max_retries": 0,
                   "temperature": 0.0, **kwargs}
        if method is None:
            return ChatOpenAI(**options)
        return _MethodChatOpenAI(structured_method=method, **options)

    def start(self) -> ScriptedOpenAIServer:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (pending delays are cut short) and close the socket."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_reply(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(request)
            number = len(self.requests)
            reply = self._replies.popleft() if self._replies else None
        if reply is None:
            return error(500, f"ScriptedOpenAIServer: no scripted reply left for request {number}")
        try:
            while callable(reply):  # a reply that depends on the request (it may return another callable)
                reply = reply(request)
        except Exception as exc:  # a broken script answers 500 naming it, instead of a dropped connection
            return error(500, f"ScriptedOpenAIServer: the reply to request {number} raised {exc!r}")
        return reply

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - the http.server hook's name
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(error(404, f"no route {self.path}", "invalid_request_error"), body)
                    return
                reply = server._next_reply(body)
                if reply.wait and server._stopping.wait(reply.wait):
                    return
                self._send(reply, body)

            def _send(self, reply: Reply, request: dict[str, Any]) -> None:
                payload = reply.body if reply.body is not None else {
                    "id": f"chatcmpl-{len(server.requests)}", "object": "chat.completion", "created": 0,
                    "model": request.get("model", "test"), "usage": USAGE,
                    "choices": [{"index": 0, "message": reply.message, "finish_reason": reply.finish_reason,
                                 "logprobs": None}]}
                data = json.dumps(payload).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    pass

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet test output
                pass

        return Handler


class _MethodChatOpenAI(ChatOpenAI):
    """``ChatOpenAI`` whose ``with_structured_output`` uses ``structured_method`` unless told otherwise."""

    structured_method: str = "json_schema"

    def with_structured_output(self, schema: Any = None, *, method: Any = None, **kwargs: Any) -> Any:
        return super().with_structured_output(schema, method=method or self.structured_method, **kwargs)
