"""How ``regrow.watch`` sees an exception leave the user's code, on each Python version.

- 3.12+: ``sys.monitoring``'s ``PY_UNWIND`` event, under a tool id of its own. The event fires only
  while an exception unwinds a frame, so a call that does not raise costs nothing; an unwinding frame
  costs one dict lookup on its file name unless it is the user's.
- 3.10/3.11: no such event, and ``sys.setprofile`` would cost every call. The functions and methods of
  the watched modules are wrapped in place instead (modules loaded already at ``watch()``, and those
  imported later, through an import hook): a healthy call pays one extra Python frame. References
  taken before ``watch()`` (``from pkg import f`` run earlier) and functions of the script file run by
  ``regrow run`` itself are not wrapped, so not watched there.

Either way the hook reports the exception only where it leaves the user's functions for code that
is not one of them (a framework, the standard library, a script's top level): an exception one of
the user's functions raises and another one catches is the user's business (``try: lookup(key)
except KeyError: ...`` is not a bug of ``lookup``).
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import inspect
import sys
import threading
import types
from collections.abc import Callable, Sequence
from typing import Any

from ._watch_scope import Scope

Escaped = Callable[[BaseException], None]
_TOOL_IDS = (4, 3, 5)  # ids sys.monitoring leaves to tools other than debuggers, coverage and profilers


def _leaves(scope: Scope, caller: types.FrameType | None) -> bool:
    """Whether an exception leaving a frame for ``caller`` leaves the user's functions (for a framework,
    the standard library, or a module's top level, such as a script's body)."""
    return caller is None or caller.f_code.co_name == "<module>" or not scope.covers_code(caller.f_code)


_WRAPPERS: set[types.CodeType] = set()  # the code of the watch's wrappers (one for each kind)


def _under_a_wrapper(frame: types.FrameType | None) -> bool:
    """Whether a wrapper of the watch runs in ``frame`` or outside it: it reports the failure if it leaves the user's
    code. Where none does, the caller is a function of theirs the watch could not wrap (one a framework took a
    reference to before ``watch()``, as a web app's views: the middleware starts the watch at the first request),
    and the wrapper that saw the failure reports it, or nothing would."""
    while frame is not None:
        if frame.f_code in _WRAPPERS:
            return True
        frame = frame.f_back
    return False


def _reportable(exc: BaseException) -> bool:
    return isinstance(exc, Exception) and not isinstance(exc, (StopIteration, StopAsyncIteration))


class MonitoringHook:
    """3.12+: ``PY_UNWIND`` events, reported when they leave the user's code."""

    def __init__(self, scope: Scope, escaped: Escaped) -> None:
        self.scope, self.escaped = scope, escaped
        self.tool = -1

    def start(self) -> None:
        monitoring: Any = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
        for tool in _TOOL_IDS:
            if monitoring.get_tool(tool) is None:
                monitoring.use_tool_id(tool, "regrow.watch")
                self.tool = tool
                break
        else:
            raise RuntimeError("every sys.monitoring tool id regrow may use is taken")
        monitoring.register_callback(self.tool, monitoring.events.PY_UNWIND, self._unwind)
        monitoring.set_events(self.tool, monitoring.events.PY_UNWIND)

    def stop(self) -> None:
        if self.tool < 0:
            return
        monitoring: Any = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
        monitoring.set_events(self.tool, 0)
        monitoring.register_callback(self.tool, monitoring.events.PY_UNWIND, None)
        monitoring.free_tool_id(self.tool)
        self.tool = -1

    def _unwind(self, code: types.CodeType, offset: int, exc: BaseException) -> None:
        """The event: a frame of ``code`` is left by ``exc``. Must never raise (it would replace ``exc``)."""
        try:
            if not self.scope.covers_code(code) or not _reportable(exc):
                return
            frame = sys._getframe(1)  # the frame being unwound
            if _leaves(self.scope, frame.f_back):
                self.escaped(exc)
        except Exception:
            pass


class WrappingHook:
    """3.10/3.11: the watched modules' functions wrapped in place (and new modules as they are imported)."""

    def __init__(self, scope: Scope, escaped: Escaped) -> None:
        self.scope, self.escaped = scope, escaped
        self.wrapped: list[tuple[Any, str, Any, Any]] = []  # (holder, name, original, wrapper)
        self.finder = _Finder(self)

    def start(self) -> None:
        for module in list(sys.modules.values()):
            self.wrap_module(module)
        sys.meta_path.insert(0, self.finder)

    def stop(self) -> None:
        if self.finder in sys.meta_path:
            sys.meta_path.remove(self.finder)
        for holder, name, original, wrapper in reversed(self.wrapped):
            if inspect.getattr_static(holder, name, None) is wrapper:  # a rebound fix stays
                setattr(holder, name, original)
        self.wrapped.clear()

    def wrap_module(self, module: Any) -> None:
        """Wrap the functions and methods ``module`` defines, if its file is the user's."""
        filename = getattr(module, "__file__", None)
        if not isinstance(filename, str) or not self.scope.covers_file(filename):
            return
        name = module.__name__
        for attr, value in list(vars(module).items()):
            if isinstance(value, type) and value.__module__ == name:
                for member, inner in list(vars(value).items()):
                    self._wrap_attr(value, member, inner)
            else:
                self._wrap_attr(module, attr, value)

    def _wrap_attr(self, holder: Any, name: str, value: Any) -> None:
        kind = type(value) if isinstance(value, (staticmethod, classmethod)) else None
        func = value.__func__ if kind is not None else value
        if not isinstance(func, types.FunctionType) or not self.scope.covers_function(func):
            return
        if func.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR):
            return  # a generator fails while it is iterated, after the call: not wrapped
        if hasattr(func, "__regrow_watched__"):
            return
        wrapper = self._wrap(func)
        new = kind(wrapper) if kind is not None else wrapper
        setattr(holder, name, new)
        self.wrapped.append((holder, name, value, new))

    def _wrap(self, func: types.FunctionType) -> Callable[..., Any]:
        scope, escaped = self.scope, self.escaped

        def report(exc: BaseException, caller: types.FrameType | None) -> None:
            try:  # leaving the user's code, or into code of theirs no wrapper of the watch is around to report it
                if _reportable(exc) and (_leaves(scope, caller) or not _under_a_wrapper(caller)):
                    escaped(exc)
            except Exception:
                pass

        if inspect.iscoroutinefunction(func):
            async def watched_async(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await func(*args, **kwargs)
                except Exception as exc:
                    report(exc, sys._getframe(1))
                    raise
            wrapper: Callable[..., Any] = watched_async
        else:
            def watched(*args: Any, **kwargs: Any) -> Any:
                try:
                    return func(*args, **kwargs)
                except Exception as exc:
                    report(exc, sys._getframe(1))
                    raise
            wrapper = watched
        functools.update_wrapper(wrapper, func)
        _WRAPPERS.add(wrapper.__code__)
        wrapper.__regrow_watched__ = True  # type: ignore[attr-defined]
        return wrapper


class _Finder(importlib.abc.MetaPathFinder):
    """Finds modules as the other finders do, and has the user's ones wrapped once they have run."""

    def __init__(self, hook: WrappingHook) -> None:
        self.hook = hook
        self._busy = threading.local()

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if getattr(self._busy, "on", False):
            return None
        self._busy.on = True
        try:
            spec: importlib.machinery.ModuleSpec | None = None
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(fullname, path, target)
                if spec is not None:
                    break
        finally:
            self._busy.on = False
        if spec is None or spec.loader is None or not spec.origin or not self.hook.scope.covers_file(spec.origin):
            return None
        spec.loader = _Loader(spec.loader, self.hook)
        return spec


class _Loader(importlib.abc.Loader):
    """The real loader, then the module's functions wrapped; everything else asked of it goes to the real one."""

    def __init__(self, loader: Any, hook: WrappingHook) -> None:
        self._loader, self._hook = loader, hook

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        created: types.ModuleType | None = self._loader.create_module(spec)
        return created

    def exec_module(self, module: types.ModuleType) -> None:
        self._loader.exec_module(module)
        self._hook.wrap_module(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


def make_hook(scope: Scope, escaped: Escaped) -> MonitoringHook | WrappingHook:
    """The hook this Python has: events on 3.12+, wrapping before."""
    if sys.version_info >= (3, 12):
        return MonitoringHook(scope, escaped)
    return WrappingHook(scope, escaped)
