"""A client leaving a streamable-HTTP MCP session is no server error.

When a client ends its session (or its connection drops), the SDK's SSE writer for
that session finds its stream closed: ``anyio.ClosedResourceError`` (or
``BrokenResourceError``, the other end gone mid-send). The SDK (``mcp`` 1.30) logs
that with ``logger.exception``: an ERROR line and a 40-line traceback on every normal
disconnect. :data:`CLIENT_LEFT` drops exactly those records (those messages with
those exceptions); any other error of the transport is logged as before.

Example:
    >>> import logging, anyio
    >>> def logged(error):
    ...     return logging.makeLogRecord({"msg": "Error in standalone SSE writer",
    ...                                   "exc_info": (type(error), error, None)})
    >>> CLIENT_LEFT.filter(logged(anyio.ClosedResourceError())), CLIENT_LEFT.filter(logged(RuntimeError("a bug")))
    (False, True)
"""

from __future__ import annotations

import logging

import anyio

__all__ = ["CLIENT_LEFT", "SDK_TRANSPORT_LOGGER", "ClientLeftFilter", "quiet_client_disconnects"]

#: The SDK's logger of the streamable-HTTP transport.
SDK_TRANSPORT_LOGGER = "mcp.server.streamable_http"
# What the SDK logs when a session's SSE stream is found closed (mcp/server/streamable_http.py).
_WRITER_ERRORS = frozenset({"Error in standalone SSE writer", "Error in SSE writer"})
_STREAM_GONE = (anyio.ClosedResourceError, anyio.BrokenResourceError)


class ClientLeftFilter(logging.Filter):
    """Drops the SDK's "Error in ... SSE writer" records whose exception is a closed or broken stream."""

    def filter(self, record: logging.LogRecord) -> bool:
        """``False`` (drop) for a client that left; ``True`` for everything else."""
        error = record.exc_info[1] if record.exc_info else None
        return not (record.getMessage() in _WRITER_ERRORS and isinstance(error, _STREAM_GONE))


CLIENT_LEFT = ClientLeftFilter()


def quiet_client_disconnects() -> None:
    """Install :data:`CLIENT_LEFT` on the SDK's transport logger (once; calling again changes nothing)."""
    logging.getLogger(SDK_TRANSPORT_LOGGER).addFilter(CLIENT_LEFT)
