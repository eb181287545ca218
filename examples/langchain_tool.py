"""A LangChain tool that heals itself (pip install 'regrow[langchain]').

``@healing_tool`` is langchain-core's ``@tool`` over ``@regrow.heal``: the name, description and
argument schema come from the function, a failing call is repaired (proven by ``tests=``) and run
again, and an error that remains becomes the tool's output through ``ToolException``.
"""

from __future__ import annotations

from regrow.langchain import healing_tool


def check_initials(fn):
    assert fn(name="Ada Lovelace") == "A.L."
    assert fn(name="Grace Brewster Hopper") == "G.B.H."


@healing_tool(tests=[check_initials])
def initials(name: str) -> str:
    """The initials of a full name: 'Ada Lovelace' -> 'A.L.'."""
    parts = name.split()
    return "".join(parts[i][0] + "." for i in range(len(parts) + 1))  # the bug: one index too many


@healing_tool(name="forecast")
def weather(city: str) -> str:
    """Tomorrow's weather for a city."""
    known = {"Lisbon": "sunny, 24 °C", "Oslo": "rain, 9 °C"}
    if city not in known:
        raise LookupError(f"no forecast for {city!r}")  # deliberate: no fix may weaken it
    return known[city]


if __name__ == "__main__":
    print(initials.invoke({"name": "Ada Lovelace"}))  # A.L., after healing
    print(weather.invoke({"city": "Atlantis"}))  # the error, as the tool's output
