"""The pure vocabulary of the capability check: what a candidate may use that its original did not.

A name here gives a candidate nothing it could tell the sandbox from your process with: the same
arguments give the same result in a forked child, in a fresh interpreter and in the host. Clocks,
files, the environment, randomness seeded from the world and the interpreter's own state are not
here; :func:`world` names which of those a refused name reaches, for the verdict's reason.
"""

from __future__ import annotations

import builtins
import importlib
import types

# Builtins that compute from their arguments alone. Not here: open, input, print, id, hash (per
# process), globals/locals/vars/dir, exit/quit, help, memoryview, breakpoint, eval/exec/compile.
PURE_BUILTINS = frozenset(
    {
        "abs", "all", "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr", "classmethod",
        "complex", "dict", "divmod", "enumerate", "filter", "float", "format", "frozenset", "getattr",
        "hasattr", "setattr", "delattr", "hex", "int", "isinstance", "issubclass", "iter", "len", "list",
        "map", "max", "min", "next", "object", "oct", "ord", "pow", "property", "range", "repr", "reversed",
        "round", "set", "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "type", "zip",
        "NotImplemented", "Ellipsis", "aiter", "anext",
    }
)  # fmt: skip
# Dunder attributes a candidate may read (special methods it defines or calls); other dunders are
# the interpreter's machinery (``__setattr__`` writes past the check, ``__globals__`` reaches out).
DUNDER_OK = frozenset({"__name__", "__qualname__", "__doc__", "__class__", "__init__", "__len__", "__iter__",
                        "__next__", "__eq__", "__repr__", "__str__",
                        "__post_init__", "__lt__", "__le__", "__gt__", "__ge__", "__ne__", "__contains__",
                        "__getitem__", "__bool__"})  # fmt: skip
# Builtins outside the pure vocabulary, by what they reach (for the reason).
BUILTIN_REACH = {"open": "files", "input": "the terminal", "print": "output to your terminal",
                  "exit": "process exit", "quit": "process exit", "SystemExit": "process exit",
                  "KeyboardInterrupt": "process exit", "MemoryError": "the sandbox's limits",
                  "RecursionError": "the sandbox's limits", "id": "process state", "hash": "process state",
                  "globals": "reflection", "locals": "reflection", "vars": "reflection", "dir": "reflection",
                  "__import__": "imports", "__file__": "files", "__builtins__": "reflection"}
# Raising these in your process ends it or its thread, whatever the sandbox saw; and catching these by
# name tells the sandbox's limits from your process's (an allocation over its memory limit).
_EXITS = frozenset({"SystemExit", "KeyboardInterrupt", "GeneratorExit", "MemoryError", "RecursionError"})
# Calls that read their attribute name from an argument (the capability check judges the name).
REFLECTION = frozenset({"getattr", "hasattr", "setattr", "delattr"})

_ANY = None  # every public attribute of the module that is not itself a module
# Pure modules: module -> the attributes a candidate may use (``_ANY``: all public ones).
PURE_MODULES: dict[str, frozenset[str] | None] = {
    "math": _ANY, "cmath": _ANY, "re": _ANY, "itertools": _ANY, "collections": _ANY,
    # not Formatter: its get_field/get_value hand back the object a field names, "0.__globals__[__builtins__]"
    # included (a model's candidate reached __import__("os").system so, the dunders hidden in a string)
    "string": frozenset({"ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits", "octdigits",
                         "punctuation", "printable", "whitespace", "capwords", "Template"}),
    "collections.abc": _ANY, "heapq": _ANY, "bisect": _ANY, "statistics": _ANY, "fractions": _ANY,
    "numbers": _ANY, "unicodedata": _ANY, "textwrap": _ANY, "keyword": _ANY,
    # not HtmlDiff: it counts its tables in a class attribute and prints the count (a counter kept across calls)
    "difflib": frozenset({"SequenceMatcher", "Differ", "get_close_matches", "ndiff", "restore", "unified_diff",
                          "context_diff", "diff_bytes", "IS_LINE_JUNK", "IS_CHARACTER_JUNK", "Match"}),
    "base64": _ANY, "binascii": _ANY, "zlib": _ANY, "struct": _ANY, "hashlib": _ANY, "html": _ANY,
    "ipaddress": _ANY, "array": _ANY, "graphlib": _ANY, "dataclasses": _ANY,
    # not global_enum and its kin: they write the members into the module the class names (builtins included)
    "enum": frozenset({"Enum", "IntEnum", "Flag", "IntFlag", "StrEnum", "ReprEnum", "auto", "unique", "EnumMeta",
                       "EnumType", "verify", "member", "nonmember", "UNIQUE", "CONTINUOUS", "NAMED_FLAGS",
                       "FlagBoundary", "STRICT", "CONFORM", "EJECT", "KEEP"}),
    "__future__": _ANY,
    # not singledispatch: its register() evaluates a string annotation, code hidden in a string
    "functools": frozenset({"reduce", "partial", "partialmethod", "cmp_to_key", "total_ordering", "lru_cache",
                            "cache", "cached_property"}),
    "operator": frozenset({"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "neg", "pos", "abs", "eq",
                           "ne", "lt", "le", "gt", "ge", "not_", "truth", "and_", "or_", "xor", "invert",
                           "lshift", "rshift", "contains", "countOf", "indexOf", "getitem", "concat", "is_",
                           "is_not", "index", "itemgetter", "attrgetter", "matmul"}),
    "decimal": frozenset({"Decimal", "InvalidOperation", "DivisionByZero", "Overflow", "Underflow", "Inexact",
                          "Rounded", "DecimalException", "ROUND_HALF_UP", "ROUND_HALF_EVEN", "ROUND_HALF_DOWN",
                          "ROUND_UP", "ROUND_DOWN", "ROUND_CEILING", "ROUND_FLOOR", "ROUND_05UP", "localcontext",
                          "Context"}),
    "json": frozenset({"loads", "dumps", "JSONDecodeError"}),
    "datetime": frozenset({"datetime", "date", "time", "timedelta", "timezone", "tzinfo", "MINYEAR", "MAXYEAR"}),
    "copy": frozenset({"copy", "deepcopy"}),
    "contextlib": frozenset({"suppress", "nullcontext", "closing"}),
    "typing": frozenset({"cast", "Any", "Optional", "Union", "List", "Dict", "Tuple", "Set", "FrozenSet",
                         "Iterable", "Iterator", "Sequence", "Mapping", "MutableMapping", "Callable", "TypeVar",
                         "NamedTuple", "Literal", "overload", "Generic"}),
    "os.path": frozenset({"join", "basename", "dirname", "splitext", "split", "normpath", "normcase", "isabs",
                          "commonprefix", "commonpath", "sep", "extsep"}),
    "urllib.parse": frozenset({"urlparse", "urlsplit", "urlunparse", "urlunsplit", "urljoin", "urlencode",
                               "quote", "quote_plus", "unquote", "unquote_plus", "parse_qs", "parse_qsl",
                               "urldefrag"}),
    "shlex": frozenset({"split", "quote", "join"}),
    "fnmatch": frozenset({"fnmatch", "fnmatchcase", "filter", "translate"}),
    "uuid": frozenset({"UUID", "NAMESPACE_DNS", "NAMESPACE_URL", "uuid3", "uuid5"}),
    "random": frozenset({"Random"}),  # a generator the candidate seeds itself (see capability check)
    "pprint": frozenset({"pformat"}),
    "reprlib": frozenset({"repr"}),
}  # fmt: skip

# Attribute names that reach the world (or the interpreter) on whatever object they are read from:
# ``datetime.date(1, 1, 1).today()``, a Path argument's ``read_text``. Name -> what it reaches.
WORLD_ATTRIBUTES: dict[str, str] = {
    **dict.fromkeys(("now", "today", "utcnow", "monotonic", "monotonic_ns",
                     "perf_counter", "perf_counter_ns", "process_time", "time_ns", "thread_time"), "clock"),
    **dict.fromkeys(("read_text", "read_bytes", "write_text", "write_bytes", "open", "touch", "unlink", "mkdir",
                     "rmdir", "iterdir", "rglob", "glob", "exists", "is_file", "is_dir", "stat", "lstat", "cwd",
                     "home", "expanduser", "absolute", "resolve", "readlink", "symlink_to", "chmod"), "files"),
    **dict.fromkeys(("environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"), "environment"),
    **dict.fromkeys(("getpid", "getppid", "register_at_fork", "excepthook", "meta_path", "path_hooks", "modules",
                     "getcontext", "setcontext", "urandom", "seed", "cache_info", "cache_parameters"),
                    "process or interpreter state"),
    "samples": "randomness",  # statistics.NormalDist().samples(n): seeded from the world unless given seed=
}  # fmt: skip

# Modules whose use the verdict names by what they reach.
_WORLD_MODULES: dict[str, str] = {
    **dict.fromkeys(("time",), "clock"),
    **dict.fromkeys(("io", "pathlib", "codecs", "shutil", "tempfile", "glob", "fileinput", "linecache", "site",
                     "zipimport", "sqlite3", "shelve", "dbm"), "files"),
    **dict.fromkeys(("random", "secrets"), "randomness"),
    **dict.fromkeys(("sys", "threading", "_thread", "signal", "atexit", "importlib", "gc", "inspect", "builtins",
                     "multiprocessing", "subprocess", "socket", "ctypes", "faulthandler", "tracemalloc",
                     "concurrent", "asyncio", "resource", "posix", "pty", "warnings", "logging"),
                    "process or interpreter state"),
}  # fmt: skip
# Functions of pure modules that change their first argument in place.
IN_PLACE = frozenset({"heapq.heappush", "heapq.heappop", "heapq.heapify", "heapq.heapreplace", "heapq.heappushpop",
                      "bisect.insort", "bisect.insort_left", "bisect.insort_right"})  # fmt: skip
# Methods that change the object they are called on (a global's, here, is state kept across calls).
MUTATING_METHODS = frozenset(
    {
        "append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault", "add",
        "discard", "sort", "reverse", "appendleft", "extendleft", "popleft", "rotate", "difference_update",
        "intersection_update", "symmetric_difference_update", "write", "writelines", "put", "put_nowait",
        "send", "set", "acquire", "release", "cache_clear", "subtract", "register", "move_to_end", "frombytes",
        "fromlist", "fromunicode", "byteswap",
    }
)  # fmt: skip


def pure_builtin(name: str) -> bool:
    """A builtin a candidate may use though its original did not (an exception class included)."""
    if name in PURE_BUILTINS:
        return True
    value = getattr(builtins, name, None)
    return issubclass(type(value), type) and issubclass(value, BaseException) and name not in _EXITS  # type: ignore[arg-type]


def module_name(value: object) -> str | None:
    """The name of the module ``value`` is, or None (never runs a proxy's ``__getattr__``: ``type()`` only)."""
    if not issubclass(type(value), types.ModuleType):
        return None
    name = vars(value).get("__name__")
    return name if isinstance(name, str) else None


def origin_of(value: object) -> tuple[str, str] | None:
    """``(module, name)`` of a function or class in a module's globals (``("time", "monotonic")``), or None."""
    if not issubclass(type(value), (type, types.FunctionType, types.BuiltinFunctionType)):
        return None
    try:
        module, name = getattr(value, "__module__", None), getattr(value, "__name__", None)
    except Exception:  # a class whose metaclass computes these: not one of ours to judge
        return None
    return (module, name) if isinstance(module, str) and isinstance(name, str) else None


def pure_value(value: object) -> bool:
    """A global's value a candidate may reach though its original did not: a pure module, a pure
    module's allowed function or class (``from math import sqrt`` at module level), an exception
    class (raising your module's own ``ParseError``) or an immutable constant of plain data."""
    module = module_name(value)
    if module is not None:
        return module in PURE_MODULES
    if issubclass(type(value), type) and issubclass(value, BaseException):  # type: ignore[arg-type]
        return value.__name__ not in _EXITS  # type: ignore[attr-defined]
    if _constant(value):
        return True
    found = origin_of(value)
    if found is None:
        return False
    module, name = found
    module = module.removeprefix("_") if module.removeprefix("_") in PURE_MODULES else module  # _functools
    return module in PURE_MODULES and pure_chain(f"{module}.{name}") is None


def immutable(value: object) -> bool:
    """Plain immutable data (a number, a string, a tuple of them): no write changes it."""
    return _constant(value)


def _constant(value: object, depth: int = 0) -> bool:
    """Plain immutable data (a number, a string, a tuple of them): the same in every process."""
    if value is None or type(value) in (bool, int, float, complex, str, bytes):
        return True
    if type(value) in (tuple, frozenset):
        assert isinstance(value, (tuple, frozenset))
        return depth < 3 and all(_constant(item, depth + 1) for item in value)
    return False


def pure_chain(dotted: str) -> str | None:
    """None if ``dotted`` (``math.sqrt``, ``datetime.datetime.now``) is in the pure vocabulary, else
    what it reaches for the verdict's reason: ``"clock"``, ``"files"``…, ``"module-valued"`` for a
    module reached through an allowed one (``contextlib.os``), ``"module"`` for anything else."""
    parts = dotted.split(".")
    cut = next((n for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in PURE_MODULES), 0)
    if not cut:
        return world(dotted)
    module, rest = ".".join(parts[:cut]), parts[cut:]
    if not rest:
        return None
    try:
        value = getattr(importlib.import_module(module), rest[0])
    except (ImportError, AttributeError):
        value = None
    if isinstance(value, types.ModuleType):
        return "module-valued"
    allowed = PURE_MODULES[module]
    if value is None or rest[0].startswith("_") or (allowed is not None and rest[0] not in allowed):
        return world(dotted)
    for attr in rest[1:]:
        if attr in WORLD_ATTRIBUTES or attr.startswith("_"):
            return WORLD_ATTRIBUTES.get(attr, "module")
    return None


def world(dotted: str) -> str:
    """What a refused dotted name reaches, for the reason: ``"clock"`` for ``time.monotonic``."""
    parts = dotted.split(".")
    for attr in parts[1:]:
        if attr in WORLD_ATTRIBUTES:
            return WORLD_ATTRIBUTES[attr]
    if parts[0] == "os":
        return "files or processes"  # os.* that is neither the environment nor process state above
    return _WORLD_MODULES.get(parts[0], "module")
