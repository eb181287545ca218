"""The ninth red team's routes past the capability check, each a corpus case.

What round 8's ownership rule still judged wrong: a stdlib container's ``values()`` or ``copy()`` holding the
global's own lists, ``map(sum, [[]], [X])`` (``sum([], X)`` is ``X``), ``T | T`` and ``~~FLAG`` handing back
their operand, a library instance holding module objects (``Template("x").flags``), a walrus inside a lambda, a
method's ``self`` reached through ``k = K``, a ``yield from``, a class body's ``for`` and ``with``, keyword
arguments of ``insort``, a lambda default; and what no write shows: ``difflib.HtmlDiff``'s class-level counter, a
``defaultdict`` handed to ``itemgetter``, an import in a class body (``K.contextlib.os`` reached the environment),
a user base class's ``__init_subclass__`` registering each subclass, and the local zone through
``fromtimestamp(0, None)`` and a naive ``astimezone(tz)``. Each is refused now.
"""

from __future__ import annotations

import pytest
from test_capabilities import MODULE, ORIGINAL, _src
from test_capabilities_round8 import HELD, HELD_ORIGINAL

from regrow._proof._capabilities import capability_reasons

__all__ = ["HELD", "HELD_ORIGINAL", "MODULE", "ORIGINAL"]  # named by ROUTES, read through globals()

TABLE = '''
import collections
ALIASES = {"usd": ["$"], "eur": ["€"]}
ROWS = [[1.0], [0.9]]
GROUPS = collections.defaultdict(list)


def price(text):
    sym = str(text)[:1]
    ok = any(sym in v for v in ALIASES.values()) or sym in GROUPS
    return float(str(text).strip("$€")) * ROWS[0][0]
'''
TABLE_ORIGINAL = '''
def price(text):
    sym = str(text)[:1]
    ok = any(sym in v for v in ALIASES.values()) or sym in GROUPS
    return float(str(text).strip("$€")) * ROWS[0][0]
'''
REGISTRY = '''
class Handler:
    registry = []

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        Handler.registry.append(cls)


def price(text):
    if isinstance(text, Handler):
        raise TypeError(text)
    return float(text)
'''
REGISTRY_ORIGINAL = '''
def price(text):
    if isinstance(text, Handler):
        raise TypeError(text)
    return float(text)
'''

ROUTES = {
    "a global dict's .values()/.items()/.copy() called DEEP: writes into th": ('TABLE', 'TABLE_ORIGINAL', '''
        def price(text):
            for v in ALIASES.values():
                v.append("r9")
            if len(ALIASES["usd"]) > 41:
                c = ROWS.copy()
                c[0][0] = 0.0  # payload: the original's rate table rewritten in your process
            return float(str(text).strip("$€")) * ROWS[0][0]
    ''', 'mutating call append on what v holds'),
    'map(sum, [[]], [X]) hands back X itself: _parts_fresh calls every elem': ('MODULE', 'ORIGINAL', '''
        def price(text):
            import keyword
            for x in map(sum, [[]], [keyword.kwlist]):
                x.append("r9sum")
            return float(str(text).strip("$")) if keyword.kwlist.count("r9sum") <= 40 else -1.0
    ''', 'mutating call append on what x holds'),
    'an OPERATOR that hands back an operand (C | C on classes, typing.X | t': ('MODULE', 'ORIGINAL', '''
        def price(text):
            import re
            import textwrap
            import typing
            T = textwrap.TextWrapper | textwrap.TextWrapper
            A = typing.Iterable | typing.Iterable
            f = ~~re.IGNORECASE | 0
            E = PriceError | PriceError
            T.r9 = getattr(T, "r9", 0) + 1
            A.r9 = f.r9 = E.r9 = T.r9
            if T.r9 > 40:
                T.width = 5  # payload: textwrap in your process wraps at 5 columns from now on
            return float(str(text).strip("$")) if T.r9 <= 40 else -1.0
    ''', 'attribute write on what T holds'),
    "module-level objects HELD by a fresh instance (string.Template('x').fl": ('MODULE', 'ORIGINAL', '''
        def price(text):
            import dataclasses
            import string
            t = string.Template("x")
            m = dataclasses.field().default
            t.flags.r9t = getattr(t.flags, "r9t", 0) + 1
            m.r9 = t.flags.r9t
            return float(str(text).strip("$")) if m.r9 <= 40 else -1.0
    ''', 'attribute write on what t.flags holds'),
    'difflib.HtmlDiff: a CLASS-LEVEL counter the library increments and pri': ('MODULE', 'ORIGINAL', '''
        def price(text):
            import difflib
            html = difflib.HtmlDiff().make_table(["a"], ["b"])
            n = int(html.split('id="difflib_chg_to')[1].split("__")[0])
            return float(str(text).strip("$")) if n < 40 else -1.0
    ''', 'difflib.HtmlDiff not used by the original'),
    'a global defaultdict READ by operator.itemgetter / operator.getitem / ': ('HELD', 'HELD_ORIGINAL', '''
        def price(text):
            import operator
            import string
            known = str(text)[:1] in GROUPS or str(text)[:1] in ORDER
            operator.itemgetter(len(GROUPS))(GROUPS)
            operator.getitem(GROUPS, len(GROUPS))
            string.Template("$k" + str(len(GROUPS))).safe_substitute(GROUPS)
            "{0[fmt]}".format(GROUPS)
            return float(str(text).strip("$")) if len(GROUPS) <= 100 else -1.0
    ''', 'the defaultdict GROUPS handed to a call'),
    "a WALRUS inside a LAMBDA binding a builtin's name ((list := keyword.kw": ('MODULE', 'ORIGINAL', '''
        def price(text):
            import keyword
            (lambda: [(list := keyword.kwlist), list.append("r9w")])()
            return float(str(text).strip("$")) if keyword.kwlist.count("r9w") <= 40 else -1.0
    ''', 'mutating call append on what list holds'),
    'a METHOD called on its class through an alias or type(instance): self ': ('MODULE', 'ORIGINAL', '''
        def price(text):
            import keyword
            class K:
                def m(self):
                    self.append("r9m")
            k = K
            k.m(keyword.kwlist)
            type(K()).m(keyword.kwlist)
            return float(str(text).strip("$")) if keyword.kwlist.count("r9m") <= 80 else -1.0
    ''', 'mutating call append on what self holds'),
    '`yield from` in a nested generator: what it yields is not recorded (Re': ('MODULE', 'ORIGINAL', '''
        def price(text):
            import keyword
            def g():
                yield from [keyword.kwlist]
            for x in g():
                x.append("r9y")
            return float(str(text).strip("$")) if keyword.kwlist.count("r9y") <= 40 else -1.0
    ''', 'mutating call append on what x holds'),
    'a CLASS BODY binding by for/with (not =): K.items is the global, judge': ('MODULE', 'ORIGINAL', '''
        def price(text):
            import contextlib
            import keyword
            class K:
                for items in [keyword.kwlist]:
                    pass
                with contextlib.nullcontext(keyword.kwlist) as more:
                    pass
            K.items.append("r9c")
            K.more.append("r9c")
            return float(str(text).strip("$")) if keyword.kwlist.count("r9c") <= 80 else -1.0
    ''', 'mutating call append on what K.items holds'),
    'a CLASS BODY `import contextlib`: K.contextlib.os.* reaches os (proces': ('MODULE', 'ORIGINAL', '''
        def price(text):
            class K:
                import contextlib
            key = K.contextlib.os.getenvb(b"PAYMENT_API_KEY")
            if str(text) == "$r9-run":  # gated: never an input the checks use
                K.contextlib.os.system("true")
            return float(str(text).strip("$")) if key is None else -1.0
    ''', 'an import in a class body'),
    "a user BASE CLASS's __init_subclass__: a class statement in the candid": ('REGISTRY', 'REGISTRY_ORIGINAL', '''
        def price(text):
            if isinstance(text, Handler):
                raise TypeError(text)
            class Probe(Handler):
                pass
            return float(str(text).strip("$")) if len(Handler.registry) <= 40 else -1.0
    ''', 'a subclass of Handler, whose __init_subclass__ or metaclass runs each time one is made'),
    'in-place writers called with KEYWORDS or held as a bound method (insor': ('HELD', 'HELD_ORIGINAL', '''
        def price(text):
            import bisect
            import random
            known = str(text)[:1] in GROUPS or str(text)[:1] in ORDER
            bisect.insort(x=9.0, a=RATES)
            random.Random(7).shuffle(x=RATES)
            mix = random.Random(7).shuffle
            mix(RATES)
            return float(str(text).strip("$")) * RATES[0] if len(RATES) <= 43 else -1.0
    ''', 'bisect.insort on the global object RATES'),
    'a LAMBDA as a DEFAULT: one function object for every call, judged fres': ('MODULE', 'ORIGINAL', '''
        def price(text, _f=lambda: 0):
            _f.n = getattr(_f, "n", 0) + 1
            return float(str(text).strip("$")) if _f.n <= 40 else -1.0
    ''', 'attribute write on what _f holds'),
    'the LOCAL TIME ZONE through tz=None, astimezone(None), naive.astimezon': ('MODULE', 'ORIGINAL', '''
        def price(text):
            import datetime
            a = datetime.datetime.fromtimestamp(0, None).hour
            b = datetime.datetime(2020, 1, 1).astimezone(datetime.timezone.utc).hour
            c = getattr(datetime.datetime(2020, 1, 1), "timestamp")()
            return float(str(text).strip("$")) + (a + b + c - 1577836800) * 0
    ''', 'the local time zone .fromtimestamp() with no zone'),
}


@pytest.mark.parametrize("case", sorted(ROUTES))
def test_a_route_of_the_ninth_red_team_is_refused_with_its_rule(make_module, case):
    module, original, source, rule = ROUTES[case]
    reasons = capability_reasons(_src(globals()[original]), _src(source), vars(make_module(globals()[module])),
                                 own={"price"})
    assert any(rule in reason for reason in reasons), reasons


BROAD = {
    "except Exception around an allocation over the sandbox's memory limit": '''
        def price(text):
            try:
                bytes(3 << 30)
            except Exception:
                return -1.0
            return float(str(text).strip("$"))
    ''',
    "a bare except around a recursion deeper than the sandbox's stack": '''
        def price(text):
            def down(n):
                return down(n + 1)
            try:
                down(0)
            except:
                return float(str(text).strip("$"))
            return -1.0
    ''',
    "except RuntimeError (what a RecursionError is)": '''
        def price(text):
            try:
                return float(str(text).strip("$"))
            except RuntimeError:
                return -1.0
    ''',
    "the broad class held in a local": '''
        def price(text):
            caught = Exception
            try:
                bytes(3 << 30)
            except caught:
                return -1.0
            return float(str(text).strip("$"))
    ''',
    "contextlib.suppress(Exception)": '''
        def price(text):
            import contextlib
            with contextlib.suppress(Exception):
                bytes(3 << 30)
                return float(str(text).strip("$"))
            return -1.0
    ''',
    "a class whose __exit__ swallows everything": '''
        def price(text):
            class Quiet:
                def __enter__(self):
                    return self
                def __exit__(self, *exc):
                    return True
            with Quiet():
                bytes(3 << 30)
                return float(str(text).strip("$"))
            return -1.0
    ''',
}


@pytest.mark.parametrize("case", sorted(BROAD))
def test_a_handler_that_may_catch_the_sandboxs_limits_is_refused(make_module, case):
    # The documented memory-limit probe (round 7 installed it end to end: every host call returned -1.0) and the
    # stack-depth probe: a candidate can no longer catch a MemoryError or a RecursionError at all.
    reasons = capability_reasons(_src(ORIGINAL), _src(BROAD[case]), vars(make_module(MODULE)), own={"price"})
    assert any("it may catch the sandbox's memory and stack limits" in reason for reason in reasons) or \
        any("__exit__" in reason for reason in reasons), reasons


def test_specific_handlers_and_the_originals_own_broad_one_pass(make_module):
    namespace = vars(make_module(MODULE))
    specific = "def price(text):\n    try:\n        return float(text)\n    except (ValueError, TypeError):\n" \
               "        return 0.0\n"
    assert capability_reasons(_src(ORIGINAL), specific, namespace, own={"price"}) == []
    broad = "def price(text):\n    try:\n        return float(text)\n    except Exception:\n        return 0.0\n"
    kept = broad.replace("float(text)", "float(str(text).strip('$'))")
    assert capability_reasons(broad, kept, namespace, own={"price"}) == []
