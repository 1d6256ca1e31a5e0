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
from pydantic import ValidationError

__all__ = ["describe_validation_error", "strict_tool"]


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
        try:  # as the SDK validates next, to say what was wrong without pydantic's model name and URL
            self.arg_model.model_validate(self.pre_parse_json(arguments_to_validate))
        except ValidationError as err:
            raise ValueError(describe_validation_error(err)) from None
        return await super().call_fn_with_arg_validation(fn, fn_is_async, arguments_to_validate,
                                                         arguments_to_pass_directly)


def describe_validation_error(error: ValidationError) -> str:
    """Each bad argument as ``name: what was wrong (got value)``, without pydantic's type codes and URL.

    Example:
        >>> from pydantic import BaseModel
        >>> class Arguments(BaseModel):
        ...     k: int
        >>> try:
        ...     Arguments(k="many")
        ... except ValidationError as err:
        ...     print(describe_validation_error(err))
        k: Input should be a valid integer, unable to parse string as an integer (got 'many')
    """
    return "; ".join(
        f"{'.'.join(map(str, item['loc'])) or 'arguments'}: {item['msg']}"
        + (f" (got {item['input']!r})" if item["type"] != "missing" else "")
        for item in error.errors(include_url=False))


def strict_tool(fn: Callable[..., Any], description: str, annotations: ToolAnnotations) -> Tool:
    """The SDK's tool for ``fn``, refusing (and advertising that it refuses) arguments it does not take."""
    tool = Tool.from_function(fn, name=fn.__name__, description=description, annotations=annotations,
                              structured_output=True)
    meta = tool.fn_metadata
    fields = {name: getattr(meta, name) for name in FuncMetadata.model_fields}
    return tool.model_copy(update={"fn_metadata": _KnownArguments(**fields, tool=tool.name),
                                   "parameters": {**tool.parameters, "additionalProperties": False}})
