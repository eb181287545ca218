"""Candidates that make a test vacuous (``s.startswith("")``, ``label[2:3] == "--"``, ``s.replace("-", "-")``)
remove it while seeming to change it: they rank below a rival that keeps every test live, and are no
rival to abstain over (docs/engine.md, "When the engine abstains")."""

from __future__ import annotations

from regrow._proposers._engine._rank import unread_bindings, vacuous_tests


def test_vacuous_tests_are_counted_and_live_ones_are_not() -> None:
    assert vacuous_tests("def f(s):\n    return s.startswith('') or s.endswith(b'') or '' in s\n") == 3
    assert vacuous_tests("def f(s):\n    return s[2:3] == '--' or '--' != s[1:1]\n") == 2
    assert vacuous_tests("def f(s):\n    return s.replace('-', '-')\n") == 1
    live = "def f(s):\n    return s.startswith('0x') or s[1:3] == '--' or s[1:] == '--' or s.replace('-', '_')\n"
    assert vacuous_tests(live) == 0
    assert vacuous_tests("def f(s):\n    return s[0:3] == '--' or 'x' in s or s[i:3] == '--'\n") == 0  # can hold
    assert vacuous_tests("not python (") == 0 and unread_bindings("def f(s):\n    return s.startswith('')\n") == set()

