"""`record`: a cluster's watch stream written as `kschedcore replay` reads it -- the objects the
first lists return as ADDED events, then every change, one JSON line each with its time."""
from __future__ import annotations

import json
import threading
from datetime import datetime, timezone

from .client import Client
from .handlers import POD_FIELD_SELECTOR
from .reflector import Reflector
from .resources import RESOURCES

__all__ = ["Recorder"]


class Recorder:
    """Writes every kind's events to `out` (a text file) from the reflectors' threads, one line
    per event: {"type", "object", "time"}. `start()`, `stop()`; `events` counts the lines."""

    def __init__(self, client: Client, out, kinds=None) -> None:
        self.out = out
        self.events = 0
        self._lock = threading.Lock()
        self.reflectors = []
        for res in RESOURCES:
            if kinds is not None and res.kind not in kinds:
                continue
            query = {"fieldSelector": POD_FIELD_SELECTOR} if res.kind == "Pod" else None
            self.reflectors.append(Reflector(client, res, self._write, query=query))

    def _write(self, typ: str, obj: dict) -> None:
        t = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        line = json.dumps({"type": typ, "object": obj, "time": t}, separators=(",", ":"))
        with self._lock:
            self.out.write(line + "\n")
            self.out.flush()
            self.events += 1

    def start(self, sync_timeout: float = 120.0) -> "Recorder":
        for r in self.reflectors:
            r.start()
        for r in self.reflectors:
            r.synced.wait(sync_timeout)
        return self

    def stop(self) -> None:
        for r in self.reflectors:
            r.stop()
