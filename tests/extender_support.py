"""In-process extenders for the tests: `SpecExtender` asks the ground-truth server's own logic
(tests/data/extender/extender_server.py `Extenders.handle`) with the requests kube-scheduler
sends (k8s.io/kube-scheduler/extender/v1, PascalCase keys) and answers as the HTTP extender
does -- without a socket. Every call is logged as the server logs it."""
import importlib.util
import json
from pathlib import Path

from kschedcore.extender import Extender, ExtenderConfig, ExtenderError, FilterResult, Victims
from kschedcore.extender.runtime import interested_by_resources

DATA = Path(__file__).parent / "data" / "extender"


def server_module():
    spec = importlib.util.spec_from_file_location("extender_server", DATA / "extender_server.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class SpecExtender(Extender):
    """One extender of a spec, configured by an ExtenderConfig whose urlPrefix ends in the
    spec's path (e.g. http://127.0.0.1:PORT/ext1)."""

    def __init__(self, exts, config: ExtenderConfig, log: list, pods_by_uid=None):
        self.exts, self.config, self.log = exts, config, log
        self.prefix = "/" + config.url_prefix.rstrip("/").rsplit("/", 1)[1]
        self.managed = {r.name for r in config.managed_resources}
        self.pods_by_uid = pods_by_uid if pods_by_uid is not None else {}

    name = property(lambda self: self.config.url_prefix)
    weight = property(lambda self: self.config.weight)

    def is_ignorable(self):
        return self.config.ignorable

    def is_interested(self, pod):
        return interested_by_resources(self.managed, pod)

    def is_filter(self):
        return bool(self.config.filter_verb)

    def is_prioritizer(self):
        return bool(self.config.prioritize_verb)

    def is_binder(self):
        return bool(self.config.bind_verb)

    def supports_preemption(self):
        return bool(self.config.preempt_verb)

    def _call(self, verb, action, req):
        status, resp, rec, extra = self.exts.handle(self.prefix, verb, json.loads(json.dumps(req)))
        rec["status"] = status
        self.log.append(rec)
        url = self.config.url_prefix.rstrip("/") + "/" + action
        sleep = extra[0] if extra else None
        if sleep and sleep >= self.config.http_timeout:
            raise ExtenderError(f'Post "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)')
        if status != 200:
            raise ExtenderError(f"failed {action} with extender at URL {url}, code {status}")
        return resp

    def _args(self, pod, nodes):
        if self.config.node_cache_capable:
            return {"Pod": pod.raw, "Nodes": None, "NodeNames": [n.name for n in nodes]}
        return {"Pod": pod.raw, "Nodes": {"metadata": {}, "items": [n.raw for n in nodes]}, "NodeNames": None}

    def filter(self, pod, nodes):
        resp = self._call("filter", self.config.filter_verb, self._args(pod, nodes))
        if resp.get("Error"):
            raise ExtenderError(resp["Error"])
        failed, unres = resp.get("FailedNodes") or {}, resp.get("FailedAndUnresolvableNodes") or {}
        if self.config.node_cache_capable and resp.get("NodeNames") is not None:
            return FilterResult(list(resp["NodeNames"]), failed, unres)
        if resp.get("Nodes") is not None:
            items = resp["Nodes"].get("items") or []
            return FilterResult([i["metadata"]["name"] for i in items], failed, unres, returned_nodes=items)
        return FilterResult([], failed, unres)

    def prioritize(self, pod, nodes):
        resp = self._call("prioritize", self.config.prioritize_verb, self._args(pod, nodes))
        return [(h["Host"], h["Score"]) for h in resp]

    def bind(self, pod, node_name):
        resp = self._call("bind", self.config.bind_verb, {"PodName": pod.name, "PodNamespace": pod.namespace,
                                                          "PodUID": pod.uid, "Node": node_name})
        if resp.get("Error"):
            raise ExtenderError(resp["Error"])

    def process_preemption(self, pod, victims):
        if self.config.node_cache_capable:
            req = {"Pod": pod.raw, "NodeNameToMetaVictims": {
                n: {"Pods": [{"UID": p.uid} for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for n, v in victims.items()}}
        else:
            req = {"Pod": pod.raw, "NodeNameToVictims": {
                n: {"Pods": [p.raw for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for n, v in victims.items()}}
        resp = self._call("preempt", self.config.preempt_verb, req)
        out = {}
        by_uid = {p.uid: p for v in victims.values() for p in v.pods}
        for n, mv in (resp.get("NodeNameToMetaVictims") or {}).items():
            pods = []
            for m in mv.get("Pods") or []:
                p = by_uid.get(m["UID"])
                if p is None:
                    raise ExtenderError(f"extender: {self.name} claims to preempt pod (UID: {m['UID']}) on node: {n}, "
                                        "but the pod is not found on that node")
                pods.append(p)
            out[n] = Victims(pods, mv.get("NumPDBViolations", 0))
        return out


def spec_factory(spec: dict, log: list):
    """extender_factory for Scheduler: a SpecExtender per configured extender."""
    exts = server_module().Extenders(spec)
    return lambda config: SpecExtender(exts, config, log)
