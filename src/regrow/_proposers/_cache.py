"""The repair cache as a proposer: a fix remembered in the store for this (source, failure, checks).

A fix keeps its origin: a cached fix comes back as a candidate of the proposer that wrote it (a
model's, say), and :class:`CacheProposer` trusts it only where the store's own record says regrow's
engine wrote it, so a cached model fix is railed, capability-checked and proven twice like any
model fix.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from .._candidate import Candidate
from .._store import ENGINE_ORIGIN, Store
from ._proposer import BaseProposer

if TYPE_CHECKING:
    from .._checks._oracles import Check
    from .._target._target import Target
    from ._proposer import Request


def source_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def checks_identity(checks: Sequence[Check]) -> str:
    """What the checks are, by name (not by their arguments): the same tests, the same verify."""
    return hashlib.sha256("\0".join(sorted({c.name for c in checks})).encode()).hexdigest()[:16]


def cache_key(target: Target, fingerprint: str, checks: Sequence[Check]) -> str:
    return f"{source_hash(target.source)}:{fingerprint}:{checks_identity(checks)}"



class CacheProposer(BaseProposer):
    """Offers the remembered fix for this (source, failure, checks), if there is one.

    It is not trusted as a whole (``trusted = False``): :meth:`trusts` decides per candidate, from the
    store's record of who wrote it, never from the label the candidate carries.
    """

    name = "cache"

    def __init__(self, store: Store) -> None:
        self.store = store
        self._keys: dict[str, str] = {}  # source of a candidate offered -> the key it was stored under

    def propose(self, request: Request) -> Iterator[Candidate]:
        key = cache_key(request.target, request.failure.fingerprint, request.checks)
        found = self.store.lookup(key)
        if found is not None:
            self._keys[found.source] = key
            yield found

    def trusts(self, candidate: Candidate) -> bool:
        """Whether ``candidate`` is a fix this cache offered that the store records as the engine's."""
        key = self._keys.get(candidate.source)
        return key is not None and self.store.origin(key, candidate.source) == ENGINE_ORIGIN
