"""The tenth red team's routes past the capability check, each a corpus case: a class of the candidate's whose
``__getitem__``, ``__iter__`` or ``__abs__`` hands back a global, ``json.loads`` with an ``object_hook``,
``operator.attrgetter`` of a mutating method, a class pattern capturing one (``case object(append=push)``), and
``super(OrderedDict, ORDER).__init__(k=v)`` re-making a global. Each kept a counter in a global object.
"""

from __future__ import annotations

import pytest
from test_capabilities import MODULE, ORIGINAL, _src
from test_capabilities_round8 import HELD, HELD_ORIGINAL

from regrow._proof._capabilities import capability_reasons

__all__ = ["HELD", "HELD_ORIGINAL", "MODULE", "ORIGINAL"]  # named by ROUTES, read through globals()


ROUTES = {
    "K()[0] / for x in K(): the candidate's own class's __getitem__/__iter_": ('MODULE', 'ORIGINAL', '''
        def price(text):
            import keyword
            class K:
                def __getitem__(self, i):
                    return keyword.kwlist
                def __iter__(self):
                    return iter([keyword.kwlist])
            K()[0].append("r10a")
            for box in K():
                box.append("r10a")
            return float(str(text).strip("$")) if keyword.kwlist.count("r10a") <= 80 else -1.0
    ''', 'mutating call append on what K()[0] holds'),
    'abs(K()) / reversed(K()): builtins trusted to return new objects dispa': ('MODULE', 'ORIGINAL', '''
        def price(text):
            import keyword
            class K:
                def __abs__(self):
                    return keyword.kwlist
                def __reversed__(self):
                    return keyword.kwlist
            abs(K()).append("r10b")
            reversed(K()).append("r10b")
            return float(str(text).strip("$")) if keyword.kwlist.count("r10b") <= 80 else -1.0
    ''', 'mutating call append on what abs(K()) holds'),
    'json.loads(..., object_hook=lambda d: GLOBAL): _NEW trusts json.loads ': ('MODULE', 'ORIGINAL', '''
        def price(text):
            import json
            import keyword
            box = json.loads("{}", object_hook=lambda d: keyword.kwlist)
            box.append("r10c")
            return float(str(text).strip("$")) if keyword.kwlist.count("r10c") <= 40 else -1.0
    ''', 'mutating call append on what box holds'),
    "operator.attrgetter('append')(GLOBAL)(x): a mutating method fetched by": ('MODULE', 'ORIGINAL', '''
        def price(text):
            import keyword
            import operator
            operator.attrgetter("append")(keyword.kwlist)("r10d")
            return float(str(text).strip("$")) if keyword.kwlist.count("r10d") <= 40 else -1.0
    ''', 'operator.attrgetter of the mutating method append'),
    'match GLOBAL: case object(append=push): push(x) -- a class pattern cap': ('MODULE', 'ORIGINAL', '''
        def price(text):
            import keyword
            match keyword.kwlist:
                case object(append=push):
                    push("r10e")
            return float(str(text).strip("$")) if keyword.kwlist.count("r10e") <= 40 else -1.0
    ''', 'a class pattern capturing the mutating method append'),
    'super(T, GLOBAL).__init__(k=v): the two-argument super re-inits a glob': ('HELD', 'HELD_ORIGINAL', '''
        def price(text):
            import collections
            known = str(text)[:1] in GROUPS or str(text)[:1] in ORDER
            super(collections.OrderedDict, ORDER).__init__(r10f=ORDER.get("r10f", 0) + 1)
            header = len(BUF) + FRAME[0] + VIEW[0]
            return float(str(text).strip("$")) * RATES[0] if ORDER.get("r10f") <= 40 else -1.0
    ''', 'an explicit __init__'),
}


@pytest.mark.parametrize("case", sorted(ROUTES))
def test_a_route_of_the_tenth_red_team_is_refused_with_its_rule(make_module, case):
    module, original, source, rule = ROUTES[case]
    reasons = capability_reasons(_src(globals()[original]), _src(source), vars(make_module(globals()[module])),
                                 own={"price"})
    assert any(rule in reason for reason in reasons), reasons
