"""Samplers still running at interpreter exit: shut down while the JVM is still up.

Its own module so that both the JVM starter (``_jvm``) and ``Sampler`` (``_sampler``) use it without
importing each other.
"""

from __future__ import annotations

import atexit
import threading
import weakref

_live: weakref.WeakSet = weakref.WeakSet()
_lock = threading.Lock()
_registered = False


def register_exit_hook() -> None:
    """Registers the exit hook once. Called after JPype's own exit hook (which shuts the JVM down)
    is registered; atexit runs hooks last-in first-out, so ours runs before it."""
    global _registered
    with _lock:
        if not _registered:
            _registered = True
            atexit.register(_shutdown_all)


def track(sampler) -> None:
    """Shut ``sampler`` down at exit unless it is gone or untracked first."""
    _live.add(sampler)


def untrack(sampler) -> None:
    _live.discard(sampler)


def _shutdown_all() -> None:
    for s in list(_live):
        s.shutdown()
