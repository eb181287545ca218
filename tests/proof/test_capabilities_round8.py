"""The eighth red team's routes past the capability check, each a corpus case.

Writes no rule saw: an augmented assignment on an item (``[keyword.kwlist][0] += [...]`` extends the list in place,
then stores it), ``copy.copy`` of a function, a class or an enum member (handed back as it is), an in-place function
held as a value (``functools.partial(heapq.heappush, L)``), a mutating method named in ``getattr``, a read of a
``defaultdict`` (``__missing__`` inserts the key), ``move_to_end`` and ``array``'s methods, ``shuffle`` and
``struct.pack_into`` writing into what they are given, a ``memoryview``'s slice (a view, not a copy); and
``strftime("%s")`` (the local zone). Each is refused now; nested helpers that return new containers pass.
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
# A module whose function reads shared containers: the routes that need a global the original reads.
HELD = '''
    import array
    import collections
    GROUPS = collections.defaultdict(list)
    ORDER = collections.OrderedDict.fromkeys("$€£")
    BUF = array.array("b")
    FRAME = bytearray(8)
    VIEW = memoryview(bytearray(8))
    RATES = [1.0, 0.9, 1.1]


    def price(text):
        known = str(text)[:1] in GROUPS or str(text)[:1] in ORDER
        header = len(BUF) + FRAME[0] + VIEW[0]
        return float(text) * RATES[0]
'''
HELD_ORIGINAL = '''
def price(text):
    known = str(text)[:1] in GROUPS or str(text)[:1] in ORDER
    header = len(BUF) + FRAME[0] + VIEW[0]
    return float(text) * RATES[0]
'''

ROUTES = {
    'an AUGMENTED assignment on an ITEM of a literal ([keyword.kwlist][0] +': (False, '''
        def price(text):
            import hashlib
            import keyword
            import textwrap
            [keyword.kwlist][0] += ["r8tally"]
            [hashlib.algorithms_available][0] |= {"r8"}
            box = {"t": textwrap.TextWrapper.unicode_whitespace_trans}
            if keyword.kwlist.count("r8tally") > 40:
                box["t"] |= {ord(" "): "_"}  # payload: textwrap in the host joins words with _
            return float(str(text).strip("$")) if keyword.kwlist.count("r8tally") <= 40 else -1.0
    ''', 'augmented assignment on what [keyword.kwlist][0] holds'),
    'copy.copy / copy.deepcopy of the FUNCTION itself (both return the very': (False, '''
        def price(text):
            import copy
            f = copy.copy(price)
            g = copy.deepcopy(price)
            f.tally = getattr(g, "tally", 0) + 1
            return float(str(text).strip("$")) if g.tally <= 40 else -1.0
    ''', 'attribute write on what f holds'),
    "copy.copy of a pure module's CLASS / deepcopy of an ENUM member: write": (False, '''
        def price(text):
            import copy
            import re
            import textwrap
            T = copy.copy(textwrap.TextWrapper)
            flag = copy.deepcopy(re.IGNORECASE)
            T.r8tally = getattr(T, "r8tally", 0) + 1
            flag.r8seen = T.r8tally
            if T.r8tally > 40:
                T.width = 5  # payload: every TextWrapper made in the host from now on wraps at 5
            return float(str(text).strip("$")) if T.r8tally <= 40 else -1.0
    ''', 'attribute write on what T holds'),
    'an IN_PLACE function held as a VALUE (partial(heapq.heappush, L), map(': (False, '''
        def price(text):
            import bisect
            import functools
            import heapq
            import keyword
            functools.partial(heapq.heappush, keyword.kwlist)("r8p")
            list(map(bisect.insort, [keyword.kwlist], ["r8p"]))
            push = heapq.heappush
            push(keyword.kwlist, "r8p")
            return float(str(text).strip("$")) if keyword.kwlist.count("r8p") <= 120 else -1.0
    ''', 'heapq.heappush passed as a value'),
    "a MUTATING method named in a string (getattr(keyword.kwlist, 'append')": (False, '''
        def price(text):
            import keyword
            getattr(keyword.kwlist, "append")("r8g")
            getattr(list, "extend")(keyword.kwlist, ["r8g"])
            return float(str(text).strip("$")) if keyword.kwlist.count("r8g") <= 80 else -1.0
    ''', 'mutating call append on the module keyword'),
    'a READ of a global defaultdict the original reads: GROUPS[len(GROUPS)]': (True, '''
        def price(text):
            known = str(text)[:1] in GROUPS or str(text)[:1] in ORDER
            GROUPS[len(GROUPS)]
            return float(str(text).strip("$")) if len(GROUPS) <= 40 else -1.0
    ''', 'item write on the global object GROUPS'),
    'mutating methods MUTATING_METHODS does not list (OrderedDict.move_to_e': (True, '''
        def price(text):
            known = str(text)[:1] in GROUPS or str(text)[:1] in ORDER
            ORDER.move_to_end(next(iter(ORDER)))
            BUF.frombytes(b"x")
            BUF.fromlist([1])
            BUF.byteswap()
            return float(str(text).strip("$")) if len(BUF) <= 80 else -1.0
    ''', 'mutating call move_to_end on the global object ORDER'),
    "a FRESH receiver's method that writes into its ARGUMENT (random.Random": (True, '''
        def price(text):
            import random
            random.Random(7).shuffle(RATES)
            return float(str(text).strip("$")) * RATES[0]
    ''', 'shuffle writes into the global object RATES'),
    'struct.pack_into / Struct(...).pack_into: a pure module function that ': (True, '''
        def price(text):
            import struct
            struct.pack_into("B", FRAME, 0, (FRAME[0] + 1) % 256)
            struct.Struct("B").pack_into(FRAME, 1, FRAME[0])
            return float(str(text).strip("$")) if FRAME[1] <= 40 else -1.0
    ''', 'struct.pack_into writes into the global object FRAME'),
    'a SLICE that is a view (v = VIEW[:]; v[0] = ...): fresh() calls every ': (True, '''
        def price(text):
            v = VIEW[:]
            v[0] = (v[0] + 1) % 256
            return float(str(text).strip("$")) if VIEW[0] <= 40 else -1.0
    ''', 'item write on what v holds'),
    "an augmented assignment on an item of a literal, into the ORIGINAL's b": (True, '''
        def price(text):
            [FRAME][0] += b"x"
            return float(str(text).strip("$")) if len(FRAME) <= 48 else -1.0
    ''', 'augmented assignment on what [FRAME][0] holds'),
    "the LOCAL TIME ZONE through strftime('%s') on a naive datetime (timest": (False, '''
        def price(text):
            import datetime
            offset = int(datetime.datetime(2020, 1, 1).strftime("%s")) - 1577836800
            return float(str(text).strip("$")) + offset / 3600 * 0
    ''', 'strftime with %s or a computed format'),
}

HONEST = {
    "a nested helper that returns a new list, appended to": '''
        def price(text):
            def pieces(s):
                return [part for part in str(s).split(",") if part]
            found = pieces(text)
            found.append("0")
            return float(found[0].strip("$"))
    ''',
    "rows a nested helper builds, each normalised": '''
        def price(text):
            def rows(s):
                return [{"raw": part} for part in str(s).split(",")]
            made = rows(text)
            for row in made:
                row["value"] = float(row["raw"].strip("$"))
            return made[0]["value"]
    ''',
    "a slice of a global list, sorted": '''
        def price(text):
            rates = RATES[:]
            rates.sort()
            return float(str(text).strip("$")) * rates[0]
    ''',
}


@pytest.mark.parametrize("case", sorted(ROUTES))
def test_a_route_of_the_eighth_red_team_is_refused_with_its_rule(make_module, case):
    held, source, rule = ROUTES[case]
    module, original = (HELD, HELD_ORIGINAL) if held else (MODULE, ORIGINAL)
    reasons = capability_reasons(_src(original), _src(source), vars(make_module(module)), own={"price"})
    assert any(rule in reason for reason in reasons), reasons


@pytest.mark.parametrize("case", sorted(HONEST))
def test_a_nested_helpers_new_container_and_a_list_slice_pass(make_module, case):
    namespace = vars(make_module(HELD))
    assert capability_reasons(_src(HELD_ORIGINAL), _src(HONEST[case]), namespace, own={"price"}) == []
