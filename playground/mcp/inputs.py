"""Strict tool inputs: an argument that is not exactly what the schema says is a tool error naming it.

The SDK builds each tool's argument model from the function signature with
pydantic's defaults: lax coercion (``true`` becomes ``1.0`` for a number,
so ``timeout: true`` ran with a one-second limit and ``memory: true`` with
one byte) and unknown fields ignored (``"limits": {"wall_time": "1s"}``
was dropped without a word, so an agent believed a limit applied that did
not). :func:`strict_tool` registers a tool whose argument model is the
SDK's, made strict:

* ``extra="forbid"``: an unknown argument is an error naming it, and the
  published input schema says ``additionalProperties: false``;
* ``strict=True``: no coercion between types at any depth (a boolean is
  not a number, a number is not a string, ``["a", 1]`` is not a list of
  strings);
* ``allow_inf_nan=False``: NaN and infinities are not numbers;
* no ``null`` for optional arguments: leaving an argument out means "the
  default"; an explicit ``null`` is refused. This is also what makes a NaN
  from a client an error: JSON has no NaN, so clients send it as ``null``.

Limit values (:data:`Duration`, :data:`Size`) have their own validators:
a positive, finite number, or a non-empty string that the server then
parses with the same unit parser as the CLI. Errors come back through the
SDK as ``Error executing tool <name>: ... <field> ...``.

The tool body is also wrapped so that every ``ToolError`` message is
valid Unicode (guest text quoted in a message is escaped, see
:mod:`playground.core.guest_text`) and the error always reaches the agent.
"""

from __future__ import annotations

import functools
import math
import types
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, ParamSpec, TypeVar, Union, get_args, get_origin

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp_types import ToolAnnotations
from pydantic import ConfigDict, Field, PlainValidator, create_model

from playground.core.guest_text import escape, is_clean

P = ParamSpec("P")
R = TypeVar("R")


class StrictArguments(ArgModelBase):
    """Base of every tool's argument model: nothing coerced, nothing unknown, no NaN (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, arbitrary_types_allowed=True)


def _what(value: object) -> str:
    """How a refused value is named in a message (JSON terms, since that is what the agent sent)."""
    if value is None:
        return "null (leave the argument out to get the server default)"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return repr(value) if len(repr(value)) <= 40 else "a number too large to use"
    if isinstance(value, str):
        return "an empty string"
    if isinstance(value, dict):
        return "an object"
    return "an array" if isinstance(value, list) else type(value).__name__


def _duration(value: object) -> str | float:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            seconds = float(value)
        except OverflowError:
            seconds = math.inf
        if math.isfinite(seconds) and seconds > 0:
            return seconds
        raise ValueError(f"must be a positive, finite number of seconds (or a string such as '5s'), got {_what(value)}")
    raise ValueError(f"expected a duration such as '5s', '500ms' or a positive number of seconds, got {_what(value)}")


def _size(value: object) -> str | int:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        if value > 0:
            return value
        raise ValueError(f"must be a positive number of bytes (or a string such as '64M'), got {_what(value)}")
    raise ValueError(f"expected a size such as '64M', '512K' or a positive whole number of bytes, got {_what(value)}")


#: A duration argument: ``"5s"``, ``"500ms"``, ``2.5`` (seconds). Validated here for type, parsed by the server.
Duration = Annotated[
    str | float | None,
    PlainValidator(_duration, json_schema_input_type=Union[  # noqa: UP007 - a type expression for the schema
        Annotated[str, Field(min_length=1)], Annotated[float, Field(gt=0)]]),
]
#: A size argument: ``"64M"``, ``"512K"``, ``1048576`` (bytes). Validated here for type, parsed by the server.
Size = Annotated[
    str | int | None,
    PlainValidator(_size, json_schema_input_type=Union[  # noqa: UP007 - a type expression for the schema
        Annotated[str, Field(min_length=1)], Annotated[int, Field(gt=0)]]),
]


def strict_tool(
    fn: Callable[P, Awaitable[R]], *, title: str, annotations: ToolAnnotations
) -> Tool:
    """The SDK's ``Tool`` for ``fn`` with the strict argument model and clean error messages described above.

    Pass the result to ``MCPServer(tools=[...])``.
    """
    tool = Tool.from_function(_clean_errors(fn), name=fn.__name__, title=title, annotations=annotations)
    strict = strict_arguments(tool.fn_metadata.arg_model)
    metadata = tool.fn_metadata.model_copy(update={"arg_model": strict})
    return tool.model_copy(update={"fn_metadata": metadata, "parameters": input_schema(strict)})


def strict_arguments(loose: type[ArgModelBase]) -> type[ArgModelBase]:
    """``loose`` rebuilt on :class:`StrictArguments`, with ``None`` taken out of every optional argument's type.

    The default (``None``, meaning "not given") is kept and never validated,
    so leaving an argument out still works; sending ``null`` does not.
    """
    fields: dict[str, Any] = {}
    for name, info in loose.model_fields.items():
        annotation = info.annotation
        if info.default is None and not info.is_required():
            annotation = _without_none(annotation)
        fields[name] = (annotation, info)
    model: type[ArgModelBase] = create_model(loose.__name__, __base__=StrictArguments, **fields)
    return model


def input_schema(model: type[ArgModelBase]) -> dict[str, Any]:
    """The published JSON schema of ``model``, without the ``"default": null`` an agent must not send back."""
    schema = model.model_json_schema(by_alias=True)
    for prop in schema.get("properties", {}).values():
        if "default" in prop and prop["default"] is None:
            del prop["default"]
    return schema


def _without_none(annotation: Any) -> Any:
    if get_origin(annotation) is Annotated:
        inner, *extra = get_args(annotation)
        return Annotated[(_without_none(inner), *extra)]
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        return functools.reduce(lambda a, b: a | b, members)
    return annotation


def _clean_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """``fn`` whose ``ToolError`` messages are always valid Unicode (guest text in them escaped).

    A message that cannot be encoded would make the error reply itself
    fail to send, and the agent would be left without any answer.
    """

    @functools.wraps(fn)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except ToolError as exc:
            if is_clean(str(exc)):
                raise
            raise ToolError(escape(str(exc))) from None

    return call
