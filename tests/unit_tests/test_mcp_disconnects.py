"""A client leaving a streamable-HTTP session logs no ERROR; a real transport error still does (issue 52)."""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the [mcp] extra (part of [test])")

import anyio  # noqa: E402

from langchain_ripplemem.server.disconnects import SDK_TRANSPORT_LOGGER, quiet_client_disconnects  # noqa: E402


def _log_from_the_sdk(message: str, error: Exception) -> None:
    try:
        raise error
    except Exception:
        logging.getLogger(SDK_TRANSPORT_LOGGER).exception(message)  # as mcp/server/streamable_http.py does


@pytest.fixture
def quieted():
    logger = logging.getLogger(SDK_TRANSPORT_LOGGER)
    before = list(logger.filters)
    quiet_client_disconnects()
    quiet_client_disconnects()  # once is enough; twice changes nothing
    yield logger
    logger.filters[:] = before


def test_a_closed_session_stream_is_no_error_but_a_real_error_is(quieted, caplog):
    assert len(quieted.filters) == len(set(map(id, quieted.filters)))
    with caplog.at_level(logging.DEBUG):
        _log_from_the_sdk("Error in standalone SSE writer", anyio.ClosedResourceError())
        _log_from_the_sdk("Error in SSE writer", anyio.BrokenResourceError())
        _log_from_the_sdk("Error in standalone SSE writer", RuntimeError("a bug"))
        _log_from_the_sdk("Error in message router", anyio.ClosedResourceError())
    assert [(r.levelname, r.getMessage(), type(r.exc_info[1]).__name__) for r in caplog.records] == [
        ("ERROR", "Error in standalone SSE writer", "RuntimeError"),
        ("ERROR", "Error in message router", "ClosedResourceError"),
    ]
