"""Replay over time: a cluster's events -- pods arriving and departing, nodes joining, changing
and leaving -- through kube-scheduler's loop on the virtual clock, with a record of every pod.

    from kschedcore import Scheduler
    from kschedcore.replay import load_replay

    replay = load_replay(["cluster.json", "events.jsonl"], arrival="settle")
    for step in replay.steps():          # or replay.run(callback)
        ...
    records = replay.recorder.records     # pod key -> PodRecord
"""
from __future__ import annotations

from collections.abc import Iterable
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import WorkloadError
from ..sources.alibaba import is_alibaba_csv, load_alibaba
from ..sources.files import Workload, documents, read_text, workload_from_documents
from ..util import collector
from .engine import ARRIVALS, Departure, ParsedTimeline, Replay, Step  # noqa: F401 (the package's API)
from .events import DURATION_ANNOTATION, WatchEvent, read_watch_stream, workload_events  # noqa: F401
from .records import PodRecord, Recorder  # noqa: F401
from .summary import run_document, summarize  # noqa: F401

__all__ = ["ARRIVALS", "DURATION_ANNOTATION", "Departure", "ParsedTimeline", "PodRecord", "Recorder", "Replay", "Step",
           "WatchEvent", "load_replay", "read_watch_stream", "run_document", "summarize", "workload_events"]

if TYPE_CHECKING:
    from ..scheduler import Scheduler


def is_stream(path: str | PathLike[str]) -> bool:
    """A watch-event stream, by its name: .jsonl or .ndjson, optionally .gz."""
    name = str(path)
    return name.endswith((".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz"))


def read_inputs(paths: Iterable[str | PathLike[str]]) -> tuple[list[WatchEvent], list[WatchEvent]]:
    """Workload files, watch-event streams and Alibaba trace CSVs, in the order given: (the
    cluster's events, the timeline's events)."""
    cluster, timeline, csvs = [], [], []
    for p in paths:
        if isinstance(p, Workload):         # read already (a live cluster's snapshot)
            c, arrivals = workload_events(p, "cluster")
            cluster += c
            timeline += arrivals
            continue
        path = Path(p)
        if is_alibaba_csv(path):
            csvs.append(path)
        elif is_stream(path):
            timeline += read_watch_stream(path, read_text(path))
        else:
            w = workload_from_documents(documents(path, read_text(path)), str(path))
            c, arrivals = workload_events(w, str(path))
            cluster += c
            timeline += arrivals
    if csvs:
        c, arrivals = workload_events(load_alibaba(*csvs), "alibaba trace")
        cluster += c
        timeline += arrivals
    if not cluster and not timeline:
        raise WorkloadError("replay", "", "nothing to replay: no nodes, pods or events in the input")
    return cluster, timeline


def default_arrival(timeline: Iterable[WatchEvent]) -> str:
    """timestamps when every event carries a time (its own, or its object's), else settle."""
    from .events import object_time
    try:
        timed = all(ev.time is not None or object_time(ev) is not None for ev in timeline)
    except WorkloadError:
        timed = False
    return "timestamps" if timeline and timed else "settle"


def load_replay(paths: Iterable[str | PathLike[str]], scheduler: Scheduler | None = None, *,
                arrival: str | None = None, **options: Any) -> Replay:
    """A Replay of files (read_inputs) on `scheduler` (default: a new default-profile Scheduler)."""
    from ..scheduler import Scheduler
    with collector.paused():      # a dump's objects and an event each: no passes over the heap
        cluster, timeline = read_inputs(paths)
        return Replay(scheduler or Scheduler(), cluster, timeline, arrival=arrival or default_arrival(timeline),
                      **options)
