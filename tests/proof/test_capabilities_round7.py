"""The seventh red team's routes past the capability check, each a corpus case, and the honest shapes beside them.

Round 6's ownership rule (a write goes only into what the call made or was given) was too generous about what a
call makes: what a method of the candidate's own class returns, a method's parameters, an operator a local class
overloads, a class attribute read through an instance, a subscript as a loop's target, an enum class called (it
hands back a process-wide member), a pure module's class whose instances share a class-level dict
(``TextWrapper().unicode_whitespace_trans``: it rewrote every ``textwrap.fill`` in the host), ``typing.overload``'s
module-level dummy, a lambda's result through ``map``; and ``decimal.localcontext(None)`` still copied the thread's
flags. Each is refused now. It was also too strict about everyday writes: a ``defaultdict(list)``, a counter table
from ``dict.fromkeys``, copies of a global's rows, a compiled pattern's ``groupdict()``, ``max(groups, key=len)``, a
json round trip: these pass.
"""

from __future__ import annotations

import pytest
from test_capabilities import _src

from regrow._proof._capabilities import capability_reasons

MODULE = '''
    import contextlib
    import os
    import time

    API_KEY = "sk-live-0123456789abcdef0123"
    CURRENCIES = ("$", "€")
    CACHE = {}
    SEEN = []


    def price(text):
        return float(text)
'''
ORIGINAL = "def price(text):\n    return float(text)\n"

HONEST_MODULE = '''
    import collections
    import copy
    import json
    import re
    CURRENCIES = ("$", "€")
    DEFAULTS = {"currency": "$", "places": 2}
    ROWS = [{"name": "a", "rate": 1.0}, {"name": "b", "rate": 0.9}]
    PATTERN = re.compile(r"(?P<cur>[$€]?)(?P<num>[0-9.]+)")


    def make_config():
        return {"places": 2, "tags": []}


    def price(text, **options):
        return float(text)
'''
HONEST_ORIGINAL = '''
def price(text, **options):
    cfg = make_config()
    opts = dict(DEFAULTS)
    rows = [dict(r) for r in ROWS]
    m = PATTERN.match(text)
    seen = dict.fromkeys(CURRENCIES, 0)
    return round(float(m.group("num")) * rows[0]["rate"], cfg["places"])
'''

ROUTES = {
    "what a method of a local class's instance returns": ('''
        def price(text):
            class C:
                def get(self):
                    return price
                def copy(self):
                    return price
            f = C().get()
            C().copy().seen = 1
            f.tally = getattr(f, "tally", 0) + 1
            return float(str(text).strip("$")) if f.tally <= 40 else -1.0
    ''', 'attribute write on what f holds'),
    "a parameter of a local class's method": ('''
        def price(text):
            class C:
                def __init__(self, f):
                    f.tally = getattr(f, "tally", 0) + 1
                    self.n = f.tally
                def m(self, f):
                    f.other = self.n
                    return f.other
            n = list(map(C(price).m, [price]))[0]
            return float(str(text).strip("$")) if n <= 40 else -1.0
    ''', 'attribute write on what f holds'),
    'an operator a local class overloads': ('''
        def price(text):
            class C:
                def __add__(self, other):
                    return price
                def __neg__(self):
                    return price
                def __lt__(self, other):
                    return price
            f = C() + 0
            (-C()).x = 1
            (C() < 0).y = 1
            f.tally = getattr(f, "tally", 0) + 1
            return float(str(text).strip("$")) if f.tally <= 40 else -1.0
    ''', 'attribute write on what -C() holds'),
    'a class attribute read through an instance': ('''
        def price(text):
            class C:
                fs = [price]
                g = staticmethod(price)
            C().g.seen = 1
            C().fs[0].tally = getattr(C().fs[0], "tally", 0) + 1
            return float(str(text).strip("$")) if C().fs[0].tally <= 40 else -1.0
    ''', 'attribute write on what C().fs[0] holds'),
    'a subscript as a for, with or unpacking target': ('''
        def price(text):
            box, cell, slot = [0], [0], [0]
            for box[0] in [price]:
                pass
            cell[0], = [price]
            with contextlib.nullcontext(price) as slot[0]:
                pass
            box[0].tally = getattr(cell[0], "tally", 0) + 1
            return float(str(text).strip("$")) if slot[0].tally <= 40 else -1.0
    ''', 'attribute write on what box[0] holds'),
    'an enum class of a pure module called': ('''
        def price(text):
            import re
            flag = re.RegexFlag(2)
            flag.r7tally = getattr(flag, "r7tally", 0) + 1
            return float(str(text).strip("$")) if flag.r7tally <= 40 else -1.0
    ''', 'attribute write on what flag holds'),
    "a pure module's class sharing state at class level": ('''
        def price(text):
            import textwrap
            table = textwrap.TextWrapper().unicode_whitespace_trans
            table["r7n"] = table.get("r7n", 0) + 1
            if table["r7n"] > 40:
                table[ord(" ")] = "_"  # every textwrap.fill in the host now joins words with _
            return float(str(text).strip("$")) if table["r7n"] <= 40 else -1.0
    ''', 'item write on what table holds'),
    'a pure module function returning module state': ('''
        def price(text):
            import typing
            f = typing.overload(lambda: 0)
            f.r7tally = getattr(f, "r7tally", 0) + 1
            return float(str(text).strip("$")) if f.r7tally <= 40 else -1.0
    ''', 'attribute write on what f holds'),
    "a lambda's result through a higher-order call": ('''
        def price(text):
            import functools
            import json
            f = next(map(lambda _: price, "x"))
            g = functools.reduce(lambda a, b: price, "ab")
            h = json.loads("{}", object_hook=lambda d: price)
            f.tally = getattr(g, "tally", 0) + 1
            return float(str(text).strip("$")) if h.tally <= 40 else -1.0
    ''', 'attribute write on what f holds'),
    'decimal.localcontext(None) or with keywords only': ('''
        def price(text):
            import decimal
            D = decimal.Decimal
            with decimal.localcontext(None) as c:
                n = sum(c.flags.values())
            with decimal.localcontext(prec=28) as c2:
                n = max(n, sum(c2.flags.values()))
            steps = [lambda: D(1) / 0, lambda: D(0) / 0, lambda: +D("1.000000000000000000000000000000"),
                     lambda: +D("0E+9999999"), lambda: D(1) < 1.5, lambda: D(1) / 3, lambda: +D("1E-1000000"),
                     lambda: D("1E-1000000") / 3, lambda: D("9E+999999") * 10]
            try:
                steps[n]()
            except (ArithmeticError, IndexError):
                pass
            return float(str(text).strip("$")) if n < 9 else -1.0
    ''', "decimal.localcontext() copies the thread's context"),
    "an object's __hash__ read": ('''
        def price(text):
            coin = (int(repr(object()).split()[-1][:-1], 16) >> 4) ^ (object().__hash__() >> 3)
            return 0.0 if coin % 997 == 0 else float(str(text).strip("$"))
    ''', 'dunder attribute __hash__'),
}

HONEST = {
    'collections.defaultdict(list) then groups[k].append(v) (deep() calls t': '''
        def price(text, **options):
            groups = collections.defaultdict(list)
            for part in str(text).split(","):
                groups[part[:1]].append(part)
            return round(float(groups["$"][0].strip("$")), 2)
    ''',
    'a counter table from dict.fromkeys(CURRENCIES, 0) then counts[c] += 1 ': '''
        def price(text, **options):
            counts = dict.fromkeys(CURRENCIES, 0)
            for ch in str(text):
                if ch in counts:
                    counts[ch] += 1
            return round(float(str(text).strip("$€")), 2)
    ''',
    'copy each global row, then annotate the copies (rows = [dict(r) for r ': '''
        def price(text, **options):
            rows = [dict(r) for r in ROWS]
            for row in rows:
                row["total"] = row["rate"] * float(str(text).strip("$"))
            return round(rows[0]["total"], 2)
    ''',
    'list(map(dict, ROWS)) copies, then write into one': '''
        def price(text, **options):
            rows = list(map(dict, ROWS))
            rows[0]["rate"] = 1.0
            return round(float(str(text).strip("$")) * rows[0]["rate"], 2)
    ''',
    "a module-level compiled regex's match().groupdict(), then fill in a de": '''
        def price(text, **options):
            parts = PATTERN.match(str(text)).groupdict()
            parts.setdefault("cur", "$")
            return round(float(parts["num"]), 2)
    ''',
    'PATTERN.findall(text) then sort the list it returns': '''
        def price(text, **options):
            found = PATTERN.findall(str(text))
            found.sort()
            return round(float(found[-1][1]), 2)
    ''',
    'max(groups, key=len) then append to the chosen (fresh) list': '''
        def price(text, **options):
            groups = [[p] for p in str(text).split(",")]
            longest = max(groups, key=len)
            longest.append("0")
            return round(float(longest[0].strip("$")), 2)
    ''',
    'deep copy by a json round trip, then change the nested copy': '''
        def price(text, **options):
            opts = json.loads(json.dumps(DEFAULTS))
            opts["places"] = 3
            return round(float(str(text).strip(opts["currency"])), opts["places"])
    ''',
}


@pytest.mark.parametrize("case", sorted(ROUTES))
def test_a_route_of_the_seventh_red_team_is_refused_with_its_rule(make_module, case):
    source, rule = ROUTES[case]
    reasons = capability_reasons(ORIGINAL, _src(source), vars(make_module(MODULE)), own={"price"})
    assert any(rule in reason for reason in reasons), reasons


@pytest.mark.parametrize("case", sorted(HONEST))
def test_an_everyday_write_into_what_the_call_made_passes(make_module, case):
    namespace = vars(make_module(HONEST_MODULE))
    assert capability_reasons(_src(HONEST_ORIGINAL), _src(HONEST[case]), namespace, own={"price"}) == []
