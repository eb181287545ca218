"""LangChain / LangGraph tools that heal themselves (the ``regrow[langchain]`` extra, langchain-core 1.x).

``@healing_tool`` stacks :func:`regrow.heal` under langchain-core's own ``@tool``: the tool's name,
description and argument schema come from the function as with ``@tool`` alone; a failure of the
function is healed (proven by ``tests=``, ``verify=`` or recorded calls) and the call run again, and
an error that remains after healing becomes a :class:`~langchain_core.tools.ToolException` whose
text the agent reads as the tool's output (``handle_tool_error=True``), instead of a crashed agent::

    from regrow.langchain import healing_tool

    @healing_tool(tests=[check_prices])
    def price_of(sku: str) -> float:
        \"\"\"The price of a product, by its SKU.\"\"\"
        ...

Importing this module imports langchain-core; ``import regrow`` alone never does.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, overload

from langchain_core.tools import BaseTool, ToolException, tool

from ._heal._decorator import heal
from ._heal._ledger import ledger_of

__all__ = ["healing_tool", "tool_error"]


def tool_error(exc: BaseException, limit: int = 1500) -> ToolException:
    """What the agent reads when a tool's error remains after healing: the error, and what regrow tried."""
    ledger = ledger_of(exc)
    text = f"{type(exc).__name__}: {exc}" + (f"\n{ledger}" if ledger else "")
    return ToolException(text if len(text) <= limit else text[: limit - 3] + "...")


@overload
def healing_tool(func: Callable[..., Any], /) -> BaseTool: ...
@overload
def healing_tool(*, name: str | None = None, description: str | None = None, return_direct: bool = False,
                 parse_docstring: bool = False, **heal_options: Any) -> Callable[[Callable[..., Any]], BaseTool]: ...
def healing_tool(func: Callable[..., Any] | None = None, /, *, name: str | None = None,
                 description: str | None = None, return_direct: bool = False, parse_docstring: bool = False,
                 **heal_options: Any) -> BaseTool | Callable[[Callable[..., Any]], BaseTool]:
    """``@tool`` over ``@regrow.heal(**heal_options)`` over the function (sync or async).

    ``name``, ``description``, ``return_direct`` and ``parse_docstring`` go to langchain's ``@tool``
    (by default the name is the function's, the description its docstring); every other keyword goes
    to :func:`regrow.heal`. The tool's ``handle_tool_error`` is on, so an error that remains after
    healing is the tool's output, not an exception through the agent.
    """

    def build(fn: Callable[..., Any]) -> BaseTool:
        healed = heal(**heal_options)(fn)
        made = tool(_raising_tool_errors(healed), description=description, return_direct=return_direct,
                    parse_docstring=parse_docstring)
        if name is not None:
            made.name = name
        made.handle_tool_error = True
        return made

    return build(func) if func is not None else build


def _raising_tool_errors(healed: Callable[..., Any]) -> Callable[..., Any]:
    """``healed``, its remaining errors raised as :class:`ToolException` (the signature and docstring kept)."""
    if inspect.iscoroutinefunction(healed):

        @functools.wraps(healed)
        async def acall(*args: Any, **kwargs: Any) -> Any:
            try:
                return await healed(*args, **kwargs)
            except ToolException:
                raise
            except Exception as exc:
                raise tool_error(exc) from exc

        return acall

    @functools.wraps(healed)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return healed(*args, **kwargs)
        except ToolException:
            raise
        except Exception as exc:
            raise tool_error(exc) from exc

    return call
