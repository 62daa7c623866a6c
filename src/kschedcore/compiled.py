"""The modules compiled from their own Python source (Cython's pure-Python mode).

The scheduling loop, the queue, the cache's bookkeeping, the replay and the Gymnasium
environment are Python: per pod, a hundred or more calls around the compiled pass. setup.py
compiles these modules' unchanged .py sources as well (Python semantics kept: no static typing
from annotations, bounds and wrap-around checks as Python's), which takes the interpreter's
dispatch out of those calls.

An edit must not be shadowed by the module compiled before it: the build records a digest of
each source (`compiled.json` beside this file). A module whose source no longer matches is
imported from its source, with a warning saying what to rebuild; `KSCHEDCORE_PURE_PYTHON=1`
imports every one of them from source (for profilers that see Python frames only, and for
debuggers). Only the standard library here: setup.py reads MODULES from this file.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import warnings
from importlib.machinery import EXTENSION_SUFFIXES
from importlib.util import spec_from_file_location
from pathlib import Path

#: modules (below the package) compiled from their .py source
MODULES = (
    "backend.cache.cache", "backend.cache.fork", "backend.cache.node_table", "backend.cache.pod_counters",
    "backend.queue.backoff", "backend.queue.heaps", "backend.queue.hints", "backend.queue.in_flight",
    "backend.queue.moves", "backend.queue.nominator", "backend.queue.parts", "backend.queue.queued_pod_info",
    "backend.queue.scheduling_queue",
    "framework.cycle", "framework.framework",
    "gym.env", "gym.episode", "gym.nodes", "gym.observations", "gym.rewards", "gym.vector",
    "plugins.schedulinggates.scheduling_gates",
    "replay.departures", "replay.engine", "replay.records", "replay.summary",
    "scheduler.binding", "scheduler.claims", "scheduler.dra_events", "scheduler.loop", "scheduler.result",
    "scheduler.runs", "scheduler.schedule_one", "scheduler.scheduler",
    "util.clock",
)
MANIFEST = "compiled.json"
PURE_PYTHON = "KSCHEDCORE_PURE_PYTHON"
ROOT = Path(__file__).parent


def source_of(module: str, root: Path = ROOT) -> Path:
    return root.joinpath(*module.split(".")).with_suffix(".py")


def digest(path: Path) -> str:
    return hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()


def digests(root: Path = ROOT) -> dict:
    """module -> its source's digest (what the build records)."""
    return {m: digest(source_of(m, root)) for m in MODULES}


def is_compiled(module: str, root: Path = ROOT) -> bool:
    base = source_of(module, root).with_suffix("")
    return any(base.with_name(base.name + suffix).exists() for suffix in EXTENSION_SUFFIXES)


def stale(root: Path = ROOT, modules=MODULES) -> list[str]:
    """The compiled modules whose source differs from the one they were built from (or that
    the build recorded nothing for)."""
    try:
        recorded = json.loads((root / MANIFEST).read_text())
    except (OSError, ValueError):
        recorded = {}
    return [m for m in modules if is_compiled(m, root) and source_of(m, root).exists()
            and recorded.get(m) != digest(source_of(m, root))]


class SourceFirst:
    """A meta path finder: the named modules from their .py source, ahead of any compiled one."""

    def __init__(self, modules, root: Path = ROOT, package: str = __package__ or "kschedcore") -> None:
        self.sources = {f"{package}.{m}": source_of(m, root) for m in modules}

    def find_spec(self, fullname, path=None, target=None):
        source = self.sources.get(fullname)
        return None if source is None else spec_from_file_location(fullname, source)


def install() -> list[str]:
    """Called once, first thing when the package is imported. Returns the modules that will
    be imported from their source."""
    if os.environ.get(PURE_PYTHON) == "1":
        modules = list(MODULES)
    else:
        modules = stale()
        if modules:
            warnings.warn(f"kschedcore: {len(modules)} compiled module(s) older than their source "
                          f"({', '.join(modules[:3])}{', ...' if len(modules) > 3 else ''}): imported from "
                          "the source, slower; rebuild: python setup.py build_ext --inplace",
                          RuntimeWarning, stacklevel=3)
    if modules:
        sys.meta_path.insert(0, SourceFirst(modules))
    return modules
