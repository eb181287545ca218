"""The sixth red team's routes past the capability check, each a corpus case, and the honest shapes beside them.

Nine of the fourteen reached a global through a local the check did not trace (``None or price``, ``{"k":
price}["k"]``, ``sorted([price])[0]``, a list filled after it was made, a nested function's result, an exception's
``args``, a generator's ``send``, a local class's attribute) and wrote a counter on it: a write now goes only into
an object the call made or was given (``_ownership``), whether or not a route to a global is seen. The rest: the
decimal thread context's sticky flags read through ``localcontext()``, ``ABC.register`` on any class (a class
pattern then reads what a namedtuple's or a dataclass's ``__match_args__`` names on a foreign object),
``random.Random`` passed as a value, and a naive ``timestamp()``. The copies an honest fix makes of a global
(``DEFAULTS.copy()``, ``copy.deepcopy``, ``RATES[:]``, a dict filled in a loop) pass.
"""

from __future__ import annotations

import pytest
from test_capabilities import _src

from regrow._proof._capabilities import capability_reasons

MODULE = '''
    import datetime
    CURRENCIES = ("$", "€")
    DEFAULTS = {"currency": "$", "places": 2}
    RATES = [1.0, 0.9]


    def price(text, **options):
        opts = dict(DEFAULTS)
        opts.update(options)
        return round(float(text) * RATES[0], opts["places"])
'''
ORIGINAL = '''
def price(text, **options):
    opts = dict(DEFAULTS)
    opts.update(options)
    return round(float(text) * RATES[0], opts["places"])
'''

ROUTES = {
    'a local bound by `or` or a conditional expression to the function': ('''
        def price(text):
            f = None or price
            g = price if text else None
            f.tally = getattr(f, "tally", 0) + 1
            g.other = f.tally
            return float(str(text).strip("$")) if f.tally <= 40 else -1.0
    ''', 'attribute write on what f holds'),
    'a dict literal, a starred element or a comprehension holding the function': ('''
        def price(text):
            a = {"k": price}["k"]
            b = [*[price]][0]
            c = [g for g in [price]]
            a.x = getattr(a, "x", 0) + 1
            b.y = a.x
            c[0].z = b.y
            return float(str(text).strip("$")) if a.x <= 40 else -1.0
    ''', 'attribute write on what a holds'),
    'sorted() or tuple() of a list holding the function': ('''
        def price(text):
            f = sorted([price], key=str)[0]
            f.tally = getattr(f, "tally", 0) + 1
            return float(str(text).strip("$")) if f.tally <= 40 else -1.0
    ''', 'attribute write on what f holds'),
    'a local list filled with the function after it is made': ('''
        def price(text):
            box = []
            box.append(price)
            box[0].tally = getattr(box[0], "tally", 0) + 1
            return float(str(text).strip("$")) if box[0].tally <= 40 else -1.0
    ''', 'attribute write on what box[0] holds'),
    'what a local function or lambda returns': ('''
        def price(text):
            def get():
                return price
            f = (lambda: price)()
            get().a = getattr(f, "a", 0) + 1
            return float(str(text).strip("$")) if f.a <= 40 else -1.0
    ''', 'attribute write on what get() holds'),
    'an exception carrying the function': ('''
        def price(text):
            try:
                raise LookupError(price)
            except LookupError as e:
                f = e.args[0]
            f.tally = getattr(f, "tally", 0) + 1
            return float(str(text).strip("$")) if f.tally <= 40 else -1.0
    ''', 'attribute write on what f holds'),
    "a generator's send() handing it the function": ('''
        def price(text):
            def gen():
                f = yield
                f.tally = getattr(f, "tally", 0) + 1
                yield f.tally
            g = gen()
            next(g)
            n = g.send(price)
            return float(str(text).strip("$")) if n <= 40 else -1.0
    ''', 'attribute write on what f holds'),
    "a local class's attribute holding the function": ('''
        def price(text):
            class C:
                f = price
            C.f.tally = getattr(C.f, "tally", 0) + 1
            return float(str(text).strip("$")) if C.f.tally <= 40 else -1.0
    ''', 'attribute write on what C.f holds'),
    "decimal's thread flags as a counter": ('''
        def price(text):
            import decimal
            D = decimal.Decimal
            with decimal.localcontext() as c:
                n = sum(c.flags.values())
            steps = [lambda: D(1) / 0, lambda: D(0) / 0, lambda: +D("1.000000000000000000000000000000"),
                     lambda: +D("0E+9999999"), lambda: D(1) < 1.5, lambda: D(1) / 3, lambda: +D("1E-1000000"),
                     lambda: D("1E-1000000") / 3, lambda: D("9E+999999") * 10]
            try:
                steps[n]()
            except (ArithmeticError, IndexError):
                pass
            return float(str(text).strip("$")) if n < 9 else -1.0
    ''', "decimal.localcontext() copies the thread's context"),
    '__match_args__ inherited from a namedtuple, and register()': ('''
        def price(text):
            import collections
            import collections.abc
            def gen():
                yield 1
            g = gen()
            class F(collections.abc.Hashable, collections.namedtuple("F", "gi" + "_frame")):
                pass
            class G(collections.abc.Hashable, collections.namedtuple("G", "f" + "_globals")):
                pass
            F.register(type(g))
            match g:
                case F(fr):
                    pass
            G.register(type(fr))
            match fr:
                case G(gl):
                    pass
            return float(str(text).strip("$")) if gl["os"].system("true") == 0 else -1.0
    ''', "a class registered as another's virtual subclass"),
    'a dataclass field named like a clock, and register()': ('''
        def price(text):
            import collections.abc
            import dataclasses
            import datetime
            @dataclasses.dataclass
            class N(collections.abc.Hashable):
                now: int = 0
            N.register(type(datetime.datetime))
            match datetime.datetime:
                case N(clock):
                    pass
            return float(str(text).strip("$")) if clock().year < 2030 else -1.0
    ''', "a class registered as another's virtual subclass"),
    'random.Random called through partial or a subscript': ('''
        def price(text):
            import functools
            import random
            r = functools.partial(random.Random)()
            s = [random.Random][0]()
            return 0.0 if r.random() < 0.001 or s.random() < 0.001 else float(str(text).strip("$"))
    ''', 'random.Random passed as a value'),
    "a naive datetime's timestamp()": ('''
        def price(text):
            import datetime
            naive = datetime.datetime(2024, 1, 1).timestamp()
            utc = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc).timestamp()
            return float(str(text).strip("$")) if naive == utc else -1.0
    ''', 'the local time zone .timestamp()'),
    'a standard library ABC reached through `or`, registered': ('''
        def price(text):
            import collections.abc
            if str(text).startswith("!"):
                (None or collections.abc.Reversible).register(type(text))
            return float(str(text).strip("$!"))
    ''', "a class registered as another's virtual subclass"),
}

HONEST = {
    "a global dict copied with .copy(), the copy updated": '''
        def price(text, **options):
            opts = DEFAULTS.copy()
            opts.update(options)
            return round(float(text.strip(opts["currency"])), opts["places"])
    ''',
    "a global deep-copied, the copy changed": '''
        def price(text, **options):
            import copy
            opts = copy.deepcopy(DEFAULTS)
            opts.update(options)
            return round(float(text.strip(opts["currency"])), opts["places"])
    ''',
    "dict.fromkeys over a global tuple": '''
        def price(text, **options):
            opts = dict(DEFAULTS)
            opts.update(options)
            marks = dict.fromkeys(CURRENCIES, "")
            return round(float(text.translate(str.maketrans(marks))), opts["places"])
    ''',
    "a slice copy of a global list, sorted": '''
        def price(text, **options):
            opts = dict(DEFAULTS)
            opts.update(options)
            rates = RATES[:]
            rates.sort()
            return round(float(text.strip("$")) * rates[-1], opts["places"])
    ''',
    "a local dict filled in a loop over a global's items": '''
        def price(text, **options):
            opts = {}
            for key, value in DEFAULTS.items():
                opts[key] = value
            opts.update(options)
            return round(float(text.strip("$")), opts["places"])
    ''',
    "an aware datetime's timestamp": '''
        def price(text, **options):
            opts = dict(DEFAULTS)
            when = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc).timestamp()
            return round(float(text.strip("$")), opts["places"]) if when > 0 else 0.0
    ''',
}


@pytest.fixture
def module(make_module):
    return make_module(MODULE)


@pytest.mark.parametrize("case", sorted(ROUTES))
def test_a_route_of_the_sixth_red_team_is_refused_with_its_rule(module, case):
    source, rule = ROUTES[case]
    reasons = capability_reasons(_src(ORIGINAL), _src(source), vars(module), own={"price"})
    assert any(rule in reason for reason in reasons), reasons


@pytest.mark.parametrize("case", sorted(HONEST))
def test_an_honest_copy_of_a_global_and_its_kin_pass(module, case):
    assert capability_reasons(_src(ORIGINAL), _src(HONEST[case]), vars(module), own={"price"}) == []


def test_a_method_reads_its_own_private_attributes_but_not_a_sunder_or_another_objects(module):
    # Refused though honest (round 5's list): a method's fix reading ``self._items`` where the original read
    # ``self.items``. An enum's ``_convert_`` (round 4: it rewrote a module's globals) and another object's private
    # attributes stay refused.
    original = "def total(self):\n    return sum(self.items)\n"
    own = "def total(self):\n    return sum(self._items)\n"
    sunder = "def total(self):\n    return self._convert_('X', 'os', None)\n"
    other = "def total(self, other):\n    return sum(other._items)\n"
    rebound = "def total(self):\n    self = self.items\n    return sum(self._items)\n"
    assert capability_reasons(original, own, vars(module), own={"total"}) == []
    for candidate, name in [(sunder, "._convert_"), (other, "._items"), (rebound, "._items")]:
        reasons = capability_reasons(original, candidate, vars(module), own={"total"})
        assert any(f"the private attribute {name}" in reason for reason in reasons), reasons
