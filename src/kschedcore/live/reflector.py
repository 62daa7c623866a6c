"""Reflectors: a kind listed, then watched from the list's resourceVersion (client-go's
`Reflector` with its store): bookmarks move the resourceVersion on, a 410 Gone lists again, a
broken connection watches again after a backoff. The handler hears every change once, in order:
ADDED, MODIFIED, DELETED with the object (a relist's differences from the store included)."""
from __future__ import annotations

import json
import logging
import random
import threading

from .client import ApiError, Client, read_lines
from .lists import list_objects, strip_managed_fields
from .resources import Resource

__all__ = ["Reflector", "Gone"]

log = logging.getLogger("kschedcore.live")

#: client-go's watch timeouts: a random 5 to 10 minutes, then the watch is opened again
MIN_WATCH_SECONDS = 300
#: client-go's backoff after a failed list or watch: 0.8 s doubling to 30 s
BACKOFF_START, BACKOFF_MAX = 0.8, 30.0


class Gone(Exception):
    """The watch's resourceVersion is too old (410): list again."""


def object_key(obj: dict) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace") or ""
    return f"{ns}/{meta.get('name')}" if ns else str(meta.get("name"))


class Reflector:
    """Keeps `store` (key -> object) equal to the server's objects of one kind and tells
    `handler(type, obj)` of each change, from a thread of its own. `synced` is set once the
    first list is in the store. `stop()` ends it (an open watch is shut)."""

    def __init__(self, client: Client, res: Resource, handler, *, query: dict | None = None,
                 min_watch_seconds: int = MIN_WATCH_SECONDS, resume: str = "") -> None:
        self.client, self.res, self.handler = client, res, handler
        self.query = dict(query or {})
        self.min_watch_seconds = min_watch_seconds
        self.store: dict = {}
        #: resume: watch from this resourceVersion first, without a list (a stream picked up
        #: again); a 410 lists as usual
        self.resource_version = resume
        self.synced = threading.Event()
        self.lists = self.watches = 0          # how often each was opened (relists, reconnects)
        self._stop = threading.Event()
        self._response = None
        self._thread = threading.Thread(target=self._run, name=f"kschedcore-watch-{res.plural}", daemon=True)

    def start(self) -> "Reflector":
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        response = self._response
        if response is not None:
            try:
                response.shutdown()      # unblocks the read of an open watch
            except Exception:            # already closed
                pass
        if self._thread.is_alive():
            self._thread.join(timeout)

    # ---- the loop ------------------------------------------------------------------------
    def _run(self) -> None:
        backoff = BACKOFF_START
        need_list = not self.resource_version
        while not self._stop.is_set():
            try:
                if need_list:
                    self._list()
                    need_list = False
                self._watch()
                backoff = BACKOFF_START
            except Gone:
                need_list = True
            except (ApiError, OSError, ValueError) as e:
                if self._stop.is_set():
                    return
                if isinstance(e, ApiError) and e.status == 410:
                    need_list = True
                    continue
                log.warning("%s: %s; again in %.1fs", self.res.plural, e, backoff)
                self._stop.wait(backoff * (1 + random.random() * 0.1))
                backoff = min(backoff * 2, BACKOFF_MAX)

    def _list(self) -> None:
        items, rv = list_objects(self.client, self.res, query=self.query)
        self.lists += 1
        fresh = {object_key(o): o for o in items}
        for key in [k for k in self.store if k not in fresh]:       # gone while we did not watch
            self._tell("DELETED", self.store.pop(key))
        for key, obj in fresh.items():
            old = self.store.get(key)
            self.store[key] = obj
            if old is None:
                self._tell("ADDED", obj)
            elif _rv(old) != _rv(obj):
                self._tell("MODIFIED", obj)
        self.resource_version = rv
        self.synced.set()

    def _watch(self) -> None:
        seconds = self.min_watch_seconds + random.randrange(self.min_watch_seconds + 1)
        query = dict(self.query, watch="1", resourceVersion=self.resource_version,
                     allowWatchBookmarks="true", timeoutSeconds=seconds)
        response = self.client.stream(self.res.path(), query, seconds + 30.0)
        self._response = response
        self.watches += 1
        try:
            for line in read_lines(response):
                if self._stop.is_set():
                    return
                self._event(json.loads(line))
        finally:
            self._response = None
            response.release_conn()

    def _event(self, ev: dict) -> None:
        typ, obj = str(ev.get("type")), ev.get("object") or {}
        if typ == "BOOKMARK":
            self.resource_version = _rv(obj) or self.resource_version
            return
        if typ == "ERROR":
            code = obj.get("code")
            if code == 410:
                raise Gone()
            raise ApiError("WATCH", self.res.path(), int(code or 0), str(obj.get("reason") or ""),
                           str(obj.get("message") or ""))
        obj.setdefault("kind", self.res.kind)
        obj.setdefault("apiVersion", self.res.api_version)
        strip_managed_fields(obj)
        key = object_key(obj)
        self.resource_version = _rv(obj) or self.resource_version
        if typ == "DELETED":
            self.store.pop(key, None)
        else:
            self.store[key] = obj
        self._tell(typ, obj)

    def _tell(self, typ: str, obj: dict) -> None:
        """The handler hears one change; what it cannot take is logged, and the watch goes on
        (the same event would fail again after any retry)."""
        try:
            self.handler(typ, obj)
        except Exception as e:
            log.error("%s %s %s: %s", typ.lower(), self.res.kind, object_key(obj), e)


def _rv(obj: dict) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")
