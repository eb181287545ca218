"""Target: resolving, compiling a candidate in the function's own namespace, installing it live."""

from __future__ import annotations

import pytest

from regrow import TargetError
from regrow._target._locate import resolve
from regrow.extend import Target


def test_compile_shares_globals_and_keeps_default_objects(make_module):
    mod = make_module('''
        SCALE = 10
        SENTINEL = []

        def f(x, seen=SENTINEL, *, k=SENTINEL):
            return x * SCALE
    ''')
    target = Target.of(mod.f)
    fn = target.compile("def f(x, seen=SENTINEL, *, k=SENTINEL):\n    return x * SCALE + 1\n")
    assert fn(2) == 21
    assert fn.__globals__ is mod.__dict__  # the module's own globals, not a copy
    assert fn.__defaults__[0] is mod.SENTINEL and fn.__kwdefaults__["k"] is mod.SENTINEL
    mod.SCALE = 100
    assert fn(2) == 201  # sees later changes to module state


def test_changed_default_expression_is_evaluated(make_module):
    mod = make_module('''
        def f(x, step=1):
            return x + step
    ''')
    target = Target.of(mod.f)
    fn = target.compile("def f(x, step=2):\n    return x + step\n")
    assert fn(1) == 3
    assert target.install(fn) == "code"
    assert mod.f(1) == 3 and mod.f.__defaults__ == (2,)
    target.restore()
    assert mod.f(1) == 2


def test_compile_does_not_leak_names_into_the_module(make_module):
    mod = make_module('''
        def f(x):
            return x
    ''')
    before = set(vars(mod))
    Target.of(mod.f).compile("def f(x):\n    helper = 1\n    return x + helper\n")
    assert set(vars(mod)) == before


def test_install_swaps_code_of_the_live_object(make_module):
    mod = make_module('''
        def f(x):
            return x
    ''')
    alias = mod.f
    target = Target.of(mod.f)
    assert target.install(target.compile("def f(x):\n    return -x\n")) == "code"
    assert alias(3) == -3 and mod.f is alias


def test_compile_rejects_wrong_name_and_syntax(make_module):
    mod = make_module('''
        def f(x):
            return x
    ''')
    target = Target.of(mod.f)
    with pytest.raises(ValueError, match="no function named 'f'"):
        target.compile("def g(x):\n    return x\n")
    with pytest.raises(SyntaxError):
        target.compile("def f(x):\n    return (x\n")


def test_resolve_by_path_and_class_method(make_module, tmp_path):
    mod = make_module('''
        class Box:
            def size(self):
                return 1
    ''')
    ref = f"{mod.__file__}::Box.size"
    assert resolve(ref) is mod.Box.__dict__["size"]
    assert Target.from_ref(ref).qualname == "Box.size"
    assert Target.from_ref(ref).owner is mod.Box


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("nowhere.py::f", "no such file"),
        ("no_separator", "not a target reference"),
        ("json::nope", "has no 'nope'"),
        ("not_a_module_xyz::f", "cannot import"),
    ],
)
def test_resolve_errors_are_clear(ref, message):
    with pytest.raises(TargetError, match=message):
        resolve(ref)


def test_unreadable_source_is_a_clear_error():
    namespace: dict = {}
    exec("def made_at_runtime(x):\n    return x\n", namespace)
    with pytest.raises(TargetError, match="cannot be read"):
        Target.of(namespace["made_at_runtime"])


def test_a_method_with_comprehensions_and_lambdas_matches_its_source(make_module):
    # On 3.10 a nested function's qualified name is one of the method's constants, and it differs
    # between the class (`Multi.todict.<locals>.<dictcomp>`) and the text compiled alone.
    mod = make_module('''
        class Multi(dict):
            def todict(self):
                keys = sorted(self, key=lambda k: str(k))
                return {k: [self[k] for _ in range(1)] for k in keys}
    ''')
    target = Target.of(mod.Multi.todict)
    assert target.qualname.endswith("Multi.todict")
    fixed = target.compile("def todict(self):\n    return {k: self[k] for k in self}\n")
    assert fixed(mod.Multi(a=1)) == {"a": 1}


def test_as_file_text_keeps_decorators_and_indentation(make_module):
    mod = make_module('''
        import functools

        class K:
            @functools.lru_cache(maxsize=None)
            def m(self):
                return 1
    ''')
    target = Target.of(mod.K.m)
    assert target.indent == "    "
    assert target.as_file_text("def m(self):\n    return 2\n") == (
        "    @functools.lru_cache(maxsize=None)\n    def m(self):\n        return 2\n"
    )


def test_recursive_function_calls_itself_through_the_module(make_module):
    mod = make_module('''
        def fact(n):
            return 1 if n <= 1 else n * fact(n - 2)
    ''')
    target = Target.of(mod.fact)
    fn = target.compile("def fact(n):\n    return 1 if n <= 1 else n * fact(n - 1)\n")
    assert fn.__code__.co_freevars == ()  # recursion is a global lookup, as in the original
    assert target.install(fn) == "code"
    assert mod.fact(5) == 120


def test_candidate_sources_do_not_pile_up_in_linecache(make_module):
    import linecache

    mod = make_module('''
        def f(x):
            return x
    ''')
    target = Target.of(mod.f)
    before = sum(1 for name in linecache.cache if name.startswith("<regrow "))
    for i in range(600):
        target.compile(f"def f(x):\n    return x + {i}\n")
    after = sum(1 for name in linecache.cache if name.startswith("<regrow "))
    assert after - before <= 256
