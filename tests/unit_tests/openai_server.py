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
* :func:`runaway` - a model that does not stop: words until the request's
  output limit (or :data:`RUNAWAY_TOKENS`), ``usage`` counting them.
* a callable ``(request body) -> reply`` - for answers that depend on the prompt.

``ScriptedOpenAIServer(like_llama_cpp=True)`` behaves as llama-cpp-python's
server (``python -m llama_cpp.server``) does: a ``json_schema`` response format
is answered with its HTTP 500 (no scripted reply used; it accepts only ``text``
and ``json_object``), and the output limit is ``max_tokens`` only
(``max_completion_tokens``, which ``ChatOpenAI`` sends, is ignored).

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

import functools
import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from langchain_openai import ChatOpenAI

__all__ = ["ScriptedOpenAIServer", "content", "delay", "error", "runaway", "tool_call"]

USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
RUNAWAY_TOKENS = 3000  # what a runaway answer runs to when nothing stops it (llama.cpp: the context's end)
# llama-cpp-python 0.3.36's answer to response_format {"type": "json_schema", ...}, as it sends it.
LLAMA_CPP_JSON_SCHEMA_ERROR = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"llama_cpp/server/app.py\", line 376, "
    "in create_chat_completion\n    POST /v1/chat/completions")


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a status and a JSON body, sent after ``wait`` seconds."""

    status: int = 200
    message: dict[str, Any] = field(default_factory=dict)
    finish_reason: str = "stop"
    body: dict[str, Any] | None = None  # a whole error body instead of a completion
    wait: float = 0.0
    usage: dict[str, int] = field(default_factory=lambda: dict(USAGE))
    runaway: bool = False  # the message's text repeated up to the honoured output limit


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


def runaway(word: str = "memory") -> Reply:
    """Text that runs to the output limit the server honours (``finish_reason`` "length"), a token a word."""
    return Reply(message={"role": "assistant", "content": word}, finish_reason="length", runaway=True)


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
        runaway_tokens: the length of each :func:`runaway` answer sent, in order.

    """

    def __init__(self, *, like_llama_cpp: bool = False) -> None:
        self.like_llama_cpp = like_llama_cpp
        self.requests: list[dict[str, Any]] = []
        self.runaway_tokens: list[int] = []
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
        ``ChatOpenAI``'s default in ``with_structured_output`` (the ``method`` parameter's
        default, which the package starts with); ``None`` keeps ``json_schema``.
        """
        options = {"model": "gpt-4.1-mini", "base_url": self.base_url, "api_key": "test", "max_retries": 0,
                   "temperature": 0.0, **kwargs}
        if method is None:
            return ChatOpenAI(**options)
        return _fixed_method_class(method)(**options)

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
        refused = self.like_llama_cpp and (request.get("response_format") or {}).get("type") == "json_schema"
        with self._lock:
            self.requests.append(request)
            number = len(self.requests)
            reply = self._replies.popleft() if self._replies and not refused else None
        if refused:
            return error(500, LLAMA_CPP_JSON_SCHEMA_ERROR, "internal_server_error")
        if reply is None:
            return error(500, f"ScriptedOpenAIServer: no scripted reply left for request {number}")
        try:
            while callable(reply):  # a reply that depends on the request (it may return another callable)
                reply = reply(request)
        except Exception as exc:  # a broken script answers 500 naming it, instead of a dropped connection
            return error(500, f"ScriptedOpenAIServer: the reply to request {number} raised {exc!r}")
        return self._run_away(reply, request) if reply.runaway else reply

    def _run_away(self, reply: Reply, request: dict[str, Any]) -> Reply:
        """``reply``'s word up to the limit this server honours (llama.cpp: ``max_tokens`` only)."""
        names = ("max_tokens",) if self.like_llama_cpp else ("max_completion_tokens", "max_tokens")
        limit = next((int(request[n]) for n in names if request.get(n) is not None), RUNAWAY_TOKENS)
        with self._lock:
            self.runaway_tokens.append(limit)
        text = " ".join([reply.message["content"]] * limit)
        return Reply(message={**reply.message, "content": text}, finish_reason=reply.finish_reason,
                     usage={"prompt_tokens": 100, "completion_tokens": limit, "total_tokens": 100 + limit})

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
                    "model": request.get("model", "test"), "usage": reply.usage,
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


@functools.cache
def _fixed_method_class(method: str) -> type[ChatOpenAI]:
    """A ``ChatOpenAI`` whose ``with_structured_output`` defaults to ``method`` (its signature says so)."""
    def with_structured_output(self: ChatOpenAI, schema: Any = None, *, method: str = method, **kwargs: Any) -> Any:
        return ChatOpenAI.with_structured_output(self, schema, method=method, **kwargs)  # type: ignore[arg-type]

    return type(f"ChatOpenAI_{method}", (ChatOpenAI,), {"with_structured_output": with_structured_output})
