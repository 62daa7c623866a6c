"""`kschedcore extender serve`: kschedcore's profiles (custom plugins included) answering
kube-scheduler's extender protocol (k8s.io/kube-scheduler/extender/v1), so that a real
kube-scheduler runs them without being rebuilt.

The cluster comes from informers (nodeCacheCapable: kube-scheduler may send node names only).
`filter` runs the profile's cycle over every node (percentageOfNodesToScore is kube-scheduler's
to apply before it calls) and answers, for the nodes it was sent, which pass and why the others
do not (UnschedulableAndUnresolvable ones apart, as kube-scheduler reads them). `prioritize`
gives, in "choice" mode, the highest score (10) to the node the profile would choose among
those sent and 0 to the others -- with a weight that dominates kube-scheduler's own scores,
kube-scheduler then places each pod where kschedcore would -- or, in "scaled" mode, each node's
total score scaled to 0..10. A pod given a choice is assumed on it until the watch shows where
kube-scheduler bound it (or `assume_seconds` pass)."""
from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ..extender.wire import encode_value
from ..scheduler.loop import Simulation
from .client import Client
from .handlers import POD_FIELD_SELECTOR, Handlers, pod_key
from .reflector import Reflector
from .resources import RESOURCES

__all__ = ["ExtenderServer", "MAX_EXTENDER_PRIORITY"]

log = logging.getLogger("kschedcore.live")
#: the extender protocol's highest score (extenderv1.MaxExtenderPriority)
MAX_EXTENDER_PRIORITY = 10
#: decisions kept between a pod's filter and prioritize calls
DECISIONS = 1024


class _Holder:
    """What Handlers drive: a Simulation (its queue stays empty) and the lock."""

    def __init__(self, sim, lock) -> None:
        self.sim, self.lock = sim, lock


class ExtenderServer:
    """The extender's state and verbs: `start()` lists and watches the cluster, then serves HTTP
    on `address` ("host:port"); `filter(args)` and `prioritize(args)` answer one call each."""

    def __init__(self, client: Client, scheduler, *, priorities: str = "choice", assume_seconds: float = 30.0,
                 kinds=None) -> None:
        if priorities not in ("choice", "scaled"):
            raise ValueError(f'priorities must be "choice" or "scaled", got {priorities!r}')
        self.sched, self.priorities, self.assume_seconds = scheduler, priorities, assume_seconds
        self.lock = threading.RLock()
        self.sim = Simulation(scheduler)
        self.handlers = Handlers(_Holder(self.sim, self.lock), ())
        self.assumed: dict = {}                    # pod key -> (node, monotonic deadline)
        self.decisions: OrderedDict = OrderedDict()  # pod uid -> (totals of the nodes sent, choice)
        self.calls = {"filter": 0, "prioritize": 0}
        self.reflectors = []
        for res in RESOURCES:
            if kinds is not None and res.kind not in kinds:
                continue
            if res.kind == "Pod":
                r = Reflector(client, res, self._on_pod, query={"fieldSelector": POD_FIELD_SELECTOR})
            else:
                r = Reflector(client, res, self.handlers.handler(res.kind))
            self.reflectors.append(r)
        self.httpd: ThreadingHTTPServer | None = None

    # ---- running ---------------------------------------------------------------------------------
    def start(self, address: str = "127.0.0.1:8888", sync_timeout: float = 120.0) -> "ExtenderServer":
        for r in self.reflectors:
            r.start()
        for r in self.reflectors:
            if not r.synced.wait(sync_timeout):
                raise TimeoutError(f"the {r.res.kind} informer did not sync within {sync_timeout:g}s")
        host, _, port = address.rpartition(":")
        self.httpd = ThreadingHTTPServer((host or "127.0.0.1", int(port)), _handler(self))
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, name="kschedcore-extender", daemon=True).start()
        return self

    @property
    def address(self) -> str:
        assert self.httpd is not None
        host, port = self.httpd.server_address[:2]
        return f"{host!s}:{port}"

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
        for r in self.reflectors:
            r.stop()

    # ---- the pods' informer: assigned pods only (kube-scheduler schedules the pending ones) ----
    def _on_pod(self, typ: str, obj: dict) -> None:
        key = pod_key(obj)
        node = (obj.get("spec") or {}).get("nodeName")
        with self.lock:
            if typ == "DELETED":
                self.assumed.pop(key, None)
                self.sched.remove_pod(key, missing_ok=True)
                return
            if not node:
                return
            mine = self.assumed.pop(key, None)
            if mine is not None and mine[0] == node:
                return                              # bound where it was assumed: counted already
            if mine is None and key in self.sched.cache:
                return                              # an assigned pod's update (its node cannot change)
            self.sched.remove_pod(key, missing_ok=True)
            self.sched.add_pod(obj)

    def _expire(self) -> None:
        now = time.monotonic()
        for key in [k for k, (_, deadline) in self.assumed.items() if deadline <= now]:
            del self.assumed[key]
            self.sched.remove_pod(key, missing_ok=True, deleted=False)

    # ---- the verbs ----------------------------------------------------------------------------------
    def _pod(self, raw: dict):
        """The pod of a call, pending, under this extender's profile when it names another."""
        raw = dict(raw)
        spec = {k: v for k, v in (raw.get("spec") or {}).items() if k != "nodeName"}
        if spec.get("schedulerName") not in self.sched.profiles:
            spec["schedulerName"] = next(iter(self.sched.profiles))    # this extender's profile serves it
        raw["spec"] = spec
        return self.sched.parse_pod(raw)

    def _decide(self, args: dict):
        """(pod, names sent, explain record) for an ExtenderArgs body."""
        pod = self._pod(args.get("Pod") or args.get("pod") or {})
        self._expire()
        if self.assumed.pop(pod.key, None) is not None:      # tried again: the earlier choice did not bind
            self.sched.remove_pod(pod.key, missing_ok=True, deleted=False)
        return pod, _names(args), self.sched.explain(pod)

    def filter(self, args: dict) -> dict:
        with self.lock:
            self.calls["filter"] += 1
            pod, names, rec = self._decide(args)
            scores, failed = rec["scores"], rec["filter"]
            passed = [n for n in names if n in scores]
            plain, unresolvable = {}, {}
            for n in names:
                if n in scores:
                    continue
                status = failed.get(n)
                if status is None:
                    plain[n] = "node(s) not known to the extender"
                elif status.get("code") == "UnschedulableAndUnresolvable":
                    unresolvable[n] = ", ".join(status.get("reasons") or ())
                else:
                    plain[n] = ", ".join(status.get("reasons") or ())
            self._remember(pod, {n: scores[n]["total"] for n in passed}, rec["node"])
            if len(passed) == 1:        # kube-scheduler binds there without prioritizing
                self._assume(pod, passed[0])
        out: dict = {"Nodes": None, "NodeNames": passed, "FailedNodes": plain,
                     "FailedAndUnresolvableNodes": unresolvable, "Error": ""}
        if not args.get("NodeNames") and (args.get("Nodes") or {}).get("items") is not None:
            keep = set(passed)
            out["Nodes"] = {"metadata": {}, "items": [n for n in args["Nodes"]["items"]
                                                      if (n.get("metadata") or {}).get("name") in keep]}
            out["NodeNames"] = None
        return out

    def _remember(self, pod, totals: dict, node) -> None:
        self.decisions[pod.uid or pod.key] = (totals, _choice(totals, node))
        while len(self.decisions) > DECISIONS:
            self.decisions.popitem(last=False)

    def prioritize(self, args: dict) -> list:
        with self.lock:
            self.calls["prioritize"] += 1
            raw = args.get("Pod") or {}
            uid = (raw.get("metadata") or {}).get("uid")
            decided = self.decisions.pop(uid, None) if uid else None
            if decided is None:             # no filter call before (an extender without filterVerb)
                pod, names, rec = self._decide(args)
                totals = {n: rec["scores"][n]["total"] for n in names if n in rec["scores"]}
                choice = _choice(totals, rec["node"])
            else:
                pod, (totals, choice) = self._pod(raw), decided
            out = [{"Host": n, "Score": self._score(n, totals, choice)} for n in _names(args)]
            if choice is not None:
                self._assume(pod, choice)
        return out

    def _assume(self, pod, node: str) -> None:
        """Counts the pod on the node it will be bound to, until the watch shows the binding."""
        if node in self.sched.cache.table.row_of and pod.key not in self.sched.cache:
            self.sched.assume(pod, node)
            self.assumed[pod.key] = (node, time.monotonic() + self.assume_seconds)

    def _score(self, node: str, totals: dict, choice) -> int:
        if self.priorities == "choice":
            return MAX_EXTENDER_PRIORITY if node == choice else 0
        best = max(totals.values(), default=0)
        return MAX_EXTENDER_PRIORITY * totals.get(node, 0) // best if best > 0 else 0


def _choice(totals: dict, node):
    """The profile's choice among the nodes sent: its own, else the best of them (the first on ties)."""
    return node if node in totals else max(totals, key=lambda n: totals[n], default=None)


def _names(args: dict) -> list:
    """The node names a call was sent (NodeNames, or the NodeList's names)."""
    names = args.get("NodeNames")
    if names is not None:
        return list(names)
    return [(n.get("metadata") or {}).get("name") for n in (args.get("Nodes") or {}).get("items") or ()]


def _handler(server: ExtenderServer):
    import json

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):          # noqa: N802 (http.server's name)
            verb = self.path.rstrip("/").rsplit("/", 1)[-1]
            length = int(self.headers.get("Content-Length") or 0)
            try:
                args = json.loads(self.rfile.read(length) or b"{}")
                if verb == "filter":
                    body = encode_value(server.filter(args))
                elif verb == "prioritize":
                    body = encode_value(server.prioritize(args))
                else:
                    self.send_error(404, f"no verb {verb!r} (filter, prioritize)")
                    return
            except Exception as e:          # the call fails, the extender stays up
                log.warning("extender %s: %s", verb, e)
                if verb == "filter":
                    body = encode_value({"Nodes": None, "NodeNames": None, "FailedNodes": None,
                                         "FailedAndUnresolvableNodes": None, "Error": str(e)})
                else:
                    self.send_error(500, str(e))
                    return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    return Handler
