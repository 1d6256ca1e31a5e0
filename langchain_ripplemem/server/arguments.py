"""MCP tools that refuse arguments they do not take (``mcp_server``'s tools are made here).

The SDK's FastMCP validates a call's arguments with a pydantic model that ignores
names it does not know, so a misspelt argument (``ids`` for ``memory_ids``) would
reach the tool as no argument at all, and its answer would be about something else
("got none"). These tools refuse such a call, naming the unknown arguments and the
ones the tool takes, and their input schema says ``additionalProperties: false``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.fastmcp.tools import Tool
from mcp.server.fastmcp.utilities.func_metadata import FuncMetadata
from mcp.types import ToolAnnotations

__all__ = ["strict_tool"]


class _KnownArguments(FuncMetadata):
    """A tool's argument handling that refuses arguments the tool does not take.

    The SDK drops unknown arguments silently, so a misspelt one (``ids`` for
    ``memory_ids``) would reach the tool as no argument at all.
    """

    tool: str

    async def call_fn_with_arg_validation(self, fn: Callable[..., Any], fn_is_async: bool,
                                          arguments_to_validate: dict[str, Any],
                                          arguments_to_pass_directly: dict[str, Any] | None) -> Any:
        """Refuse unknown argument names, then call as the SDK does."""
        takes = [field.alias or name for name, field in self.arg_model.model_fields.items()]
        unknown = [name for name in arguments_to_validate if name not in takes]
        if unknown:
            noun = "argument" if len(unknown) == 1 else "arguments"
            raise ValueError(f"unknown {noun} {', '.join(map(repr, unknown))}: {self.tool} takes "
                             + (", ".join(takes) or "no arguments"))
        return await super().call_fn_with_arg_validation(fn, fn_is_async, arguments_to_validate,
                                                         arguments_to_pass_directly)


def strict_tool(fn: Callable[..., Any], description: str, annotations: ToolAnnotations) -> Tool:
    """The SDK's tool for ``fn``, refusing (and advertising that it refuses) arguments it does not take."""
    tool = Tool.from_function(fn, name=fn.__name__, description=description, annotations=annotations,
                              structured_output=True)
    meta = tool.fn_metadata
    fields = {name: getattr(meta, name) for name in FuncMetadata.model_fields}
    return tool.model_copy(update={"fn_metadata": _KnownArguments(**fields, tool=tool.name),
                                   "parameters": {**tool.parameters, "additionalProperties": False}})
