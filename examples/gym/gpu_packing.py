"""A heuristic policy against kube-scheduler's, on the Alibaba GPU cluster trace 2023.

As in the trace's paper ("Beware of Fragmentation", ATC'23), the trace's pods arrive one after
another in creation order and none leaves, until the cluster is full: kschedcore's Gymnasium
environment in batch mode, where each step places the next pod that fits somewhere, on a node
the policy picks among those it fits (`info["action_mask"]`). Pods no node fits are left
pending without a step, as kube-scheduler leaves them.

- kube-scheduler: `info["kube_scheduler_action"]`, the node kube-scheduler v1.34.1's default
  profile chooses (LeastAllocated scoring spreads pods over the nodes).
- gpu-packing: keeps GPU nodes whole for the pods that need many GPUs. A GPU pod goes to the
  feasible node left with the fewest free GPUs after it (best fit); a CPU-only pod to a node
  without GPUs where one fits, else to the node with the fewest free GPUs; ties by least CPU left.

It prints, per policy, the GPUs allocated and the GPU pods left unplaced when the trace is
over, and plots the GPUs allocated against the GPUs the arrived pods asked for
(`gpu_packing.png`): where a curve leaves the diagonal, pods start to find no node.

    pip install 'kschedcore[gym,report]'
    curl -LO https://raw.githubusercontent.com/alibaba/clusterdata/master/cluster-trace-gpu-v2023/csv/openb_node_list_all_node.csv
    curl -LO https://raw.githubusercontent.com/alibaba/clusterdata/master/cluster-trace-gpu-v2023/csv/openb_pod_list_default.csv
    python examples/gym/gpu_packing.py openb_node_list_all_node.csv openb_pod_list_default.csv

Any pair of the trace's node and pod lists works (`openb_pod_list_multigpu50.csv`: more pods
asking for several GPUs).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import gymnasium
import kschedcore.gym  # noqa: F401  (registers kschedcore/Scheduling-v0)
from kschedcore.sources.alibaba import GPU, load_alibaba


def kube_scheduler(obs: dict, info: dict, columns: dict) -> int:
    return int(info["kube_scheduler_action"])


def gpu_packing(obs: dict, info: dict, columns: dict) -> int:
    feasible = np.flatnonzero(info["action_mask"])
    alloc, req = obs["allocatable"][feasible], obs["requested"][feasible]
    gpu, cpu = columns[GPU], columns["cpu"]
    wants = obs["pod_requests"][gpu]
    if wants == 0:                      # a CPU-only pod: nodes without GPUs first
        no_gpu = alloc[:, gpu] == 0
        if no_gpu.any():
            feasible, alloc, req = feasible[no_gpu], alloc[no_gpu], req[no_gpu]
    free = alloc - req
    # fewest GPUs left after the pod, then least CPU left (np.lexsort: the last key is the primary)
    best = np.lexsort((-free[:, cpu], free[:, gpu] - wants))[0]
    return int(feasible[best])


POLICIES = {"kube-scheduler": kube_scheduler, "gpu-packing": gpu_packing}


def arrivals(nodes_csv: str, pods_csv: str):
    """The trace as a batch: every pod pending, in creation order, none leaving; and per pod
    the GPUs it asks for and the GPUs asked for by the pods up to it."""
    workload = load_alibaba(nodes_csv, pods_csv)
    gpus, asked_so_far, total = {}, {}, 0
    for pod in workload.pending:
        pod["metadata"].pop("deletionTimestamp", None)     # a pod being deleted is never scheduled
        key = f"default/{pod['metadata']['name']}"
        gpus[key] = int(pod["spec"]["containers"][0]["resources"].get("requests", {}).get(GPU, 0))
        total += gpus[key]
        asked_so_far[key] = total
    return workload, gpus, asked_so_far


def run(policy, workload, gpus: dict, asked_so_far: dict) -> dict:
    env = gymnasium.make("kschedcore/Scheduling-v0", workload=workload, mode="batch",
                         percentage_of_nodes_to_score=100, tie_break="first")
    columns = {name: i for i, name in enumerate(env.unwrapped.resource_names)}
    obs, info = env.reset(seed=0)
    cluster_gpus = int(obs["allocatable"][:, columns[GPU]].sum())
    asked, allocated = [], []
    started, done = time.perf_counter(), False
    while not done:
        asked.append(asked_so_far[info["pod"]])
        obs, _, done, _, info = env.step(policy(obs, info, columns))
        allocated.append(int(obs["requested"][:, columns[GPU]].sum()))
    elapsed = time.perf_counter() - started
    unplaced = [key for key, node in info["placements"].items() if node is None]
    result = {"asked": np.array(asked) / cluster_gpus, "allocated": np.array(allocated) / cluster_gpus,
            "gpus": allocated[-1] if allocated else 0, "cluster_gpus": cluster_gpus,
            "unplaced": len(unplaced), "unplaced_gpu_pods": sum(gpus[key] > 0 for key in unplaced),
            # the GPUs asked for when the first GPU pod found no node: where the curve leaves the diagonal
            "first_unplaced": min((asked_so_far[k] for k in unplaced if gpus[k]), default=None),
            "placements": info["placements"],
            "steps": len(allocated), "seconds": elapsed}
    env.close()
    return result


def _share(gpus: int | None, total: int) -> str:
    return "-" if gpus is None else f"{gpus / total:.1%}"


def plot(results: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    top = max(max(r["asked"].max(), r["allocated"].max()) for r in results.values()) * 100
    ax.plot([0, top], [0, top], color="grey", lw=0.8, ls=":", label="every GPU asked for allocated")
    for name, r in results.items():
        ax.plot(r["asked"] * 100, r["allocated"] * 100, lw=1.2,
                label=f"{name}: {r['gpus']:,} GPUs allocated, {r['unplaced_gpu_pods']} GPU pods unplaced")
    ax.set_xlabel("GPUs asked for by the pods arrived so far (% of the cluster's)")
    ax.set_ylabel("GPUs allocated (% of the cluster's)")
    ax.set_title("Alibaba GPU trace 2023: pods arriving until the cluster is full")
    ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("nodes", help="openb_node_list_*.csv")
    parser.add_argument("pods", help="openb_pod_list_*.csv")
    parser.add_argument("-o", "--output", default="gpu_packing.png", help="the plot (PNG)")
    args = parser.parse_args()
    workload, gpus, asked_so_far = arrivals(args.nodes, args.pods)
    results = {name: run(policy, workload, gpus, asked_so_far) for name, policy in POLICIES.items()}
    for name, r in results.items():
        print(f"{name:15} GPUs allocated {r['gpus']:5,} of {r['cluster_gpus']:,} ({r['gpus'] / r['cluster_gpus']:.1%}); "
              f"pods unplaced {r['unplaced']:4} ({r['unplaced_gpu_pods']} asking for GPUs); "
              f"the first GPU pod unplaced at {_share(r['first_unplaced'], r['cluster_gpus'])} of the GPUs asked for; "
              f"{r['steps']} steps in {r['seconds']:.1f} s")
    plot(results, args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
