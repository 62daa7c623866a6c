"""Record the calls made to extenders, and answer them again from the recording.

`RecordingExtender(inner, sink)` writes one JSON line per call: `extender`, `verb` (filter,
prioritize, bind, preempt), `pod` (namespace/name), `uid`, `nodes` (the nodes sent, in order;
bind: the target node; preempt: the candidate nodes, sorted), `victims` (preempt: node -> the
victims' UIDs), `answer` or `error` (the ExtenderError text), `latency` (seconds). A filter
answer's returned Node objects are written as their names where they equal the node sent.

`ReplayingExtender(inner, recording)` answers from such a file: the call with the same
extender, verb, pod and nodes (as a set; preempt: the same victims), the recorded answers of one
such call in turn, the last one again once they are used up. A call the recording does not
have is an error naming it. Nothing is sent, so a run against real extenders repeats offline.
"""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import IO, Callable, Sequence

from ..errors import ValidationError
from .config import ExtenderConfig
from .interface import Extender, ExtenderError, FilterResult, Victims
from .victims import uid as _uid, victims_from_answer


def _call_key(extender: str, verb: str, pod_key: str, uid: str, nodes, victims=None) -> str:
    """The identity a replayed call is matched by: nodes as a set, victims per node as sets."""
    if victims is not None:
        nodes = {n: sorted(v) for n, v in sorted(victims.items())}
    else:
        nodes = sorted(nodes)
    return json.dumps([extender, verb, pod_key, uid, nodes], separators=(",", ":"))


def _victim_uids(victims: dict[str, Victims]) -> dict[str, list[str]]:
    return {node: [_uid(p) for p in v.pods] for node, v in sorted(victims.items())}


class _Delegating(Extender):
    """An extender that is what `inner` is (name, weight, interest, verbs)."""

    def __init__(self, inner: Extender):
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def weight(self) -> int:
        return self.inner.weight

    def is_ignorable(self) -> bool:
        return self.inner.is_ignorable()

    def is_interested(self, pod) -> bool:
        return self.inner.is_interested(pod)

    def is_filter(self) -> bool:
        return self.inner.is_filter()

    def is_prioritizer(self) -> bool:
        return self.inner.is_prioritizer()

    def is_binder(self) -> bool:
        return self.inner.is_binder()

    def supports_preemption(self) -> bool:
        return self.inner.supports_preemption()


class CallSink:
    """A JSON-lines file the recording extenders share (thread-safe, one line per call)."""

    def __init__(self, target: str | Path | IO[str]):
        self._own = isinstance(target, (str, Path))
        try:
            self._file: IO[str] = open(target, "w", encoding="utf-8") if isinstance(target, (str, Path)) else target
        except OSError as e:
            raise ValidationError(f"extender recording {target}", "", e.strerror or str(e)) from None
        self._lock = threading.Lock()

    def write(self, record: dict) -> None:
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        if self._own:
            self._file.close()


class RecordingExtender(_Delegating):
    """Calls `inner` and writes each call with its answer or error to `sink`."""

    def __init__(self, inner: Extender, sink: CallSink):
        super().__init__(inner)
        self.sink = sink

    def _record(self, verb: str, pod, nodes: list, call, encode, victims=None):
        record = {"extender": self.name, "verb": verb, "pod": pod.key, "uid": _uid(pod), "nodes": nodes}
        if victims is not None:
            record["victims"] = victims
        start = time.perf_counter()
        try:
            answer = call()
        except ExtenderError as e:
            record.update(answer=None, error=str(e), latency=time.perf_counter() - start)
            self.sink.write(record)
            raise
        record.update(answer=encode(answer), error=None, latency=time.perf_counter() - start)
        self.sink.write(record)
        return answer

    def filter(self, pod, nodes: Sequence) -> FilterResult:
        return self._record("filter", pod, [n.name for n in nodes], lambda: self.inner.filter(pod, nodes),
                            lambda r: _filter_answer(r, nodes))

    def prioritize(self, pod, nodes: Sequence) -> list[tuple[str, int]]:
        return self._record("prioritize", pod, [n.name for n in nodes], lambda: self.inner.prioritize(pod, nodes),
                            lambda r: [[h, s] for h, s in r])

    def bind(self, pod, node_name: str) -> None:
        return self._record("bind", pod, [node_name], lambda: self.inner.bind(pod, node_name), lambda r: None)

    def process_preemption(self, pod, victims: dict[str, Victims], node_pods=None) -> dict[str, Victims]:
        return self._record("preempt", pod, sorted(victims),
                            lambda: self.inner.process_preemption(pod, victims, node_pods),
                            lambda r: {n: {"Pods": [_uid(p) for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                                       for n, v in r.items()},
                            victims=_victim_uids(victims))


def _filter_answer(r: FilterResult, nodes: Sequence) -> dict:
    returned = None
    if r.returned_nodes is not None:
        sent = {n.name: n.raw for n in nodes}
        returned = []
        for obj in r.returned_nodes:
            name = (obj.get("metadata") or {}).get("name")
            returned.append(name if isinstance(name, str) and name in sent and
                            (sent[name] is obj or sent[name] == obj) else {"object": obj})
    return {"NodeNames": r.node_names, "FailedNodes": r.failed,
            "FailedAndUnresolvableNodes": r.failed_and_unresolvable, "Nodes": returned}


class Recording:
    """A recording's calls by their identity, each with its answers in order."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        self._calls: dict[str, list[dict]] = {}
        self._next: dict[str, int] = {}
        self._lock = threading.Lock()
        try:
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if line.strip():
                        self._add(json.loads(line), number)
        except OSError as e:
            raise ValidationError(f"extender recording {path}", "", e.strerror or str(e)) from None
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise ValidationError(f"extender recording {path}", f"line {number}",
                                  f"not a recorded extender call ({e})") from None

    def _add(self, rec: dict, number: int) -> None:
        key = _call_key(rec["extender"], rec["verb"], rec["pod"], rec["uid"], rec["nodes"], rec.get("victims"))
        self._calls.setdefault(key, []).append(rec)

    def answer(self, extender: str, verb: str, pod, nodes, victims=None) -> dict:
        """The recorded call (its `answer` and `error`) for this call."""
        key = _call_key(extender, verb, pod.key, _uid(pod), nodes, victims)
        with self._lock:
            recs = self._calls.get(key)
            if not recs:
                what = f"{len(victims)} candidate nodes" if victims is not None else f"{len(nodes)} nodes"
                raise ValidationError(f"extender recording {self.path}", "",
                                      f"no recorded {verb} call of extender {extender} for pod {pod.key} "
                                      f"(uid {_uid(pod) or 'none'}) with these {what}")
            i = self._next.get(key, 0)
            self._next[key] = i + 1
            return recs[min(i, len(recs) - 1)]


class ReplayingExtender(_Delegating):
    """Answers every call from a Recording; `inner` says what the extender is (its verbs,
    weight, which pods interest it) and is never called."""

    def __init__(self, inner: Extender, recording: Recording):
        super().__init__(inner)
        self.recording = recording

    def _answer(self, verb: str, pod, nodes, victims=None):
        rec = self.recording.answer(self.name, verb, pod, nodes, victims)
        if rec.get("error") is not None:
            raise ExtenderError(rec["error"])
        return rec.get("answer")

    def filter(self, pod, nodes: Sequence) -> FilterResult:
        a = self._answer("filter", pod, [n.name for n in nodes])
        returned = None
        if a.get("Nodes") is not None:
            sent = {n.name: n.raw for n in nodes}
            returned = [sent[x] if isinstance(x, str) else x["object"] for x in a["Nodes"]]
        return FilterResult(list(a["NodeNames"]), dict(a.get("FailedNodes") or {}),
                            dict(a.get("FailedAndUnresolvableNodes") or {}), returned)

    def prioritize(self, pod, nodes: Sequence) -> list[tuple[str, int]]:
        return [(h, s) for h, s in self._answer("prioritize", pod, [n.name for n in nodes])]

    def bind(self, pod, node_name: str) -> None:
        self._answer("bind", pod, [node_name])

    def process_preemption(self, pod, victims: dict[str, Victims], node_pods=None) -> dict[str, Victims]:
        a = self._answer("preempt", pod, sorted(victims), _victim_uids(victims))
        answer = {n: (v["Pods"], v["NumPDBViolations"]) for n, v in a.items()}
        return victims_from_answer(self.name, answer, victims, node_pods)


def wrap_extenders(extenders: Sequence[Extender], record: str | Path | IO[str] | CallSink | None = None,
                   replay: str | Path | Recording | None = None) -> list[Extender]:
    """The extenders built from the configuration, recording their calls to `record` (a path
    or an open text file) or answering them from the recording `replay` (not both)."""
    if record is not None and replay is not None:
        raise ValidationError("--record-extenders", "", "cannot be used with --replay-extenders")
    if replay is not None:
        recording = replay if isinstance(replay, Recording) else Recording(replay)
        return [ReplayingExtender(e, recording) for e in extenders]
    if record is not None:
        sink = record if isinstance(record, CallSink) else CallSink(record)
        return [RecordingExtender(e, sink) for e in extenders]
    return list(extenders)


def extender_factory(record: str | Path | IO[str] | None = None,
                     replay: str | Path | None = None) -> Callable[[ExtenderConfig], Extender] | None:
    """What makes each configured extender (the Scheduler's `extender_factory`): the HTTP
    extender, its calls recorded to `record` or answered from the recording `replay` (then
    nothing is sent). None where neither is given."""
    if record is None and replay is None:
        return None
    if record is not None and replay is not None:
        raise ValidationError("--record-extenders", "", "cannot be used with --replay-extenders")
    from .http import HTTPExtender
    if replay is not None:
        recording = Recording(replay)
        return lambda config: ReplayingExtender(HTTPExtender(config, offline=True), recording)
    assert record is not None
    sink = CallSink(record)
    return lambda config: RecordingExtender(HTTPExtender(config), sink)
