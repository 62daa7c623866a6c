"""Parity workloads and explain records (what kube-scheduler v1.34.1 decided), shared by tests."""
import gzip
import json
from pathlib import Path

DATA = Path(__file__).parent / "data" / "parity"
#: workloads whose every record kschedcore must reproduce exactly
PARITY_WORKLOADS = ("resources", "taints", "node_affinity", "host_ports", "interpod_affinity", "topology_spread",
              "images_default_spread", "mixed_small", "mixed_medium")
COMPARED_FIELDS = ("node", "numFeasible", "filter", "scores", "fitError", "preFilterStatus", "preFilterNodeNames")


def load(name):
    path = DATA / f"{name}.json"
    if not path.exists():
        path = DATA / f"{name}.json.gz"
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        workload = json.load(f)
    with gzip.open(DATA / f"{name}.explain.jsonl.gz", "rt") as f:
        records = [json.loads(line) for line in f]
    return workload, records


def normalized(record):
    """The fields compared, with reason lists of NodeResourcesFit order-insensitive
    (kube-scheduler iterates extended resources in Go map order)."""
    out = {k: record.get(k) for k in COMPARED_FIELDS}
    out["filter"] = {n: dict(s, reasons=sorted(s["reasons"])) for n, s in (record.get("filter") or {}).items()}
    return out


def diff(got, want):
    """Human-readable differences between two records ('' if equal)."""
    g, w = normalized(got), normalized(want)
    lines = []
    for k in COMPARED_FIELDS:
        if g[k] != w[k]:
            if isinstance(w[k], dict) and isinstance(g[k], dict):
                for n in sorted(set(g[k]) | set(w[k])):
                    if g[k].get(n) != w[k].get(n):
                        lines.append(f"{k}[{n}]: got {g[k].get(n)} want {w[k].get(n)}")
                        if len(lines) > 6:
                            break
            else:
                lines.append(f"{k}: got {g[k]!r} want {w[k]!r}")
    return "\n".join(lines)


def explained_alike(live, fresh, pods, placed) -> int:
    """`pods` queued on a scheduler kept across phases (`live`) and on one built afresh for the
    phase (`fresh`): their explain records must agree. The placed ones go into `placed`
    (key -> (pod, node)); returns how many records were compared."""
    live.pending = []
    for p in pods:
        live.queue(p)
        fresh.queue(p)
    got, want = live.explain_pending(), fresh.explain_pending()
    mismatches = [f"{w['pod']}: {d}" for g, w in zip(got, want) if (d := diff(g, w))]
    assert not mismatches, mismatches[:2]
    for p, rec in zip(pods, got):
        if rec["node"]:
            placed[f"{p['metadata'].get('namespace') or 'default'}/{p['metadata']['name']}"] = (p, rec["node"])
    return len(got)
