"""examples/gym/gpu_packing.py: the heuristic policy against kube-scheduler's on an Alibaba
trace-shaped cluster (a small generated one: the trace itself is downloaded by its users)."""
import importlib.util
import random
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gymnasium", reason="kschedcore.gym needs gymnasium (the gym extra)")

from kschedcore import Scheduler  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "gym" / "gpu_packing.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("gpu_packing", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """40 nodes (none, 2, 4 or 8 GPUs) and 300 pods (a third CPU-only, the others 1-8 GPUs,
    some asking for a GPU model), in the trace's CSV columns: more GPUs asked than there are."""
    rng = random.Random(5)
    d = tmp_path_factory.mktemp("trace")
    nodes = ["sn,cpu_milli,memory_mib,gpu,model"]
    for i in range(40):
        gpus = rng.choice([0, 2, 4, 8])
        nodes.append(f"node-{i:02},{rng.choice([32000, 64000, 96000])},262144,{gpus},{rng.choice(['T4', 'V100M16']) if gpus else ''}")
    pods = ["name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"]
    for i in range(300):
        gpus = rng.choice([0, 1, 1, 2, 4, 8])
        spec = rng.choice(["", "", "T4", "V100M16|T4"]) if gpus else ""
        pods.append(f"pod-{i:03},{rng.choice([1000, 4000, 8000])},{rng.choice([2048, 16384])},{gpus},"
                    f"{1000 if gpus else 0},{spec},LS,Running,{i},{i + 50},{i}")
    (d / "nodes.csv").write_text("\n".join(nodes) + "\n")
    (d / "pods.csv").write_text("\n".join(pods) + "\n")
    return str(d / "nodes.csv"), str(d / "pods.csv")


def test_kube_scheduler_policy_places_as_schedule_pending(example, trace):
    workload, gpus, asked = example.arrivals(*trace)
    result = example.run(example.kube_scheduler, workload, gpus, asked)
    expected = {r.pod: r.node for r in Scheduler.from_workload(workload, percentage_of_nodes_to_score=100,
                                                               tie_break="first").schedule_pending()}
    assert result["placements"] == expected
    assert result["unplaced_gpu_pods"] > 0          # the cluster fills up: the comparison has a point


def test_gpu_packing_takes_only_feasible_nodes_and_best_fits_gpus(example, trace):
    workload, gpus, asked = example.arrivals(*trace)
    picks = []

    def watched(obs, info, columns):
        action = example.gpu_packing(obs, info, columns)
        assert info["action_mask"][action] == 1
        g = columns[example.GPU]
        feasible = np.flatnonzero(info["action_mask"])
        left = obs["allocatable"][feasible, g] - obs["requested"][feasible, g] - obs["pod_requests"][g]
        if obs["pod_requests"][g]:
            picks.append(obs["allocatable"][action, g] - obs["requested"][action, g] - obs["pod_requests"][g] == left.min())
        return action

    result = example.run(watched, workload, gpus, asked)
    assert picks and all(picks)
    assert result["steps"] + result["unplaced"] == len(gpus)     # no action was refused
    kube = example.run(example.kube_scheduler, workload, gpus, asked)
    assert result["placements"] != kube["placements"]


def test_main_prints_both_policies_and_draws_the_plot(example, trace, tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib", reason="the plot needs matplotlib (the report extra)")
    png = tmp_path / "plot.png"
    monkeypatch.setattr("sys.argv", ["gpu_packing.py", *trace, "-o", str(png)])
    example.main()
    out = capsys.readouterr().out
    assert out.startswith("kube-scheduler ") and "\ngpu-packing " in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
