"""`kschedcore sweep`: the SWEEP.yaml decoder, the grid, each mode against the command it stands
for, the local pool against one process, the outputs read back, and a real local Ray cluster
against the local run."""
import csv
import dataclasses
import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from kschedcore import Scheduler, sweep
from kschedcore.cli import main
from kschedcore.errors import ValidationError
from kschedcore.replay import load_replay
from kschedcore.scheduler.loop import Simulation
from kschedcore.sources.files import load_workload

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sweep" / "sweep.yaml"


def node(name, cpu="4", zone="a"):
    alloc = {"cpu": cpu, "memory": "8Gi", "pods": "20"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}}, "status": {"allocatable": alloc}}


def pod(name, cpu, node_name=None, mem="512Mi"):
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


BINPACK = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler",
                         "plugins": {"score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}},
                         "pluginConfig": [{"name": "NodeResourcesFit",
                                           "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}


@pytest.fixture
def files(tmp_path):
    """A small cluster (identical nodes, so the seeds' tie-breaks matter), its pending pods (two
    too big for any node), a timed event stream, a podspec and a bin-packing configuration."""
    nodes = [node(f"n{i}", zone="ab"[i % 2]) for i in range(8)] + [node("big", "16")]
    bound = [pod(f"db-{i}", "1", f"n{i}") for i in range(3)]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(nodes + bound))
    pending = [pod(f"web-{i}", ["250m", "500m", "1", "2"][i % 4]) for i in range(24)] + [pod("huge-0", "32"), pod("huge-1", "20")]
    (tmp_path / "pods.yaml").write_text(yaml.safe_dump_all(pending))
    (tmp_path / "events.jsonl").write_text("".join(
        json.dumps({"type": "ADDED", "object": pod(f"job-{i}", "1"), "time": i * 0.5}) + "\n" for i in range(12)))
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(pod("copy", "500m")))
    (tmp_path / "binpack.yaml").write_text(yaml.safe_dump(BINPACK))
    return tmp_path


def write_sweep(tmp_path, doc, name="sweep.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def sweep_doc(**over):
    doc = {"workloads": {"small": ["cluster.yaml", "pods.yaml"]},
           "configurations": {"default": "default", "binpack": "binpack.yaml"},
           "seeds": [1, 2], "modes": ["schedule", "queue", {"replay": {"arrival": "settle"}},
                                      {"capacity": {"podspec": "pod.yaml"}}]}
    return {**doc, **over}


def rows_of(path, **options):
    return sweep.run(sweep.plan(sweep.load_sweep(path)), **options).rows


def decisions(rows):
    """The rows less what depends on the machine."""
    return [{k: v for k, v in r.items() if k not in sweep.TIMING_COLUMNS} for r in rows]


def digest(assignment: dict) -> str:
    """The documented digest, written out again here: sha256 of `pod<TAB>node` lines sorted by pod."""
    text = "".join(f"{p}\t{assignment[p] or ''}\n" for p in sorted(assignment))
    return hashlib.sha256(text.encode()).hexdigest()


# ---- SWEEP.yaml --------------------------------------------------------------------------------
@pytest.mark.parametrize("change, field, message", [
    ({"seeds": [1, 2, "x"]}, "seeds[2]", 'must be an integer, got "x"'),
    ({"seeds": {"from": 3, "to": 1}}, "seeds.to", "must be at least seeds.from (3), got 1"),
    ({"seeds": {"from": 1, "upto": 3}}, "seeds.upto", "unknown field (known: from, to)"),
    ({"seed": 1}, "seed", "unknown field (known: workloads, configurations, percentageOfNodesToScore, seeds, "
                          "modes, tieBreak)"),
    ({"workloads": {"small": ["cluster.yaml", "nope.yaml"]}}, "workloads.small[1]", 'no such file "nope.yaml"'),
    ({"workloads": {"g": {"generate": {"nodes": 0, "pods": 5}}}}, "workloads.g.generate.nodes", "must be at least 1, got 0"),
    ({"workloads": {"g": {"generate": {"nodes": 5}}}}, "workloads.g.generate.pods", "Required value"),
    ({"workloads": {"g": {"generated": {}}}}, "workloads.g.generated", "unknown field (known: generate)"),
    ({"workloads": []}, "workloads", "must be a non-empty mapping of names, got a list"),
    ({"configurations": {"x": "missing.yaml"}}, "configurations.x", 'no such file "missing.yaml"'),
    ({"percentageOfNodesToScore": [50, 101]}, "percentageOfNodesToScore[1]", "must be 0-100, got 101"),
    ({"percentageOfNodesToScore": [50, 50]}, "percentageOfNodesToScore[1]", "50 is listed twice"),
    ({"modes": ["schedule", "scheduel"]}, "modes[1]", 'unknown mode "scheduel" (known: schedule, queue, replay, capacity)'),
    ({"modes": [{"replay": {"arrival": "later"}}]}, "modes[0].replay.arrival",
     'must be one of settle, all, timestamps, got "later"'),
    ({"modes": [{"replay": {"arrival": "settle", "until": 5}}]}, "modes[0].replay.until",
     "needs arrival: timestamps or all (no time passes in settle mode)"),
    ({"modes": [{"queue": {"until": "1h"}}]}, "modes[0].queue.until", 'must be a number of seconds, got "1h"'),
    ({"modes": ["capacity"]}, "modes[0].capacity.podspec", "Required value: the pod template whose copies are counted"),
    ({"modes": [{"capacity": {"podspec": "pod.yaml", "maxLimit": -1}}]}, "modes[0].capacity.maxLimit",
     "must be at least 0, got -1"),
    ({"tieBreak": "last"}, "tieBreak", 'must be one of random, first, got "last"'),
])
def test_spec_errors_name_the_field(files, change, field, message):
    path = write_sweep(files, sweep_doc(**change))
    with pytest.raises(ValidationError) as err:
        sweep.load_sweep(path)
    assert str(err.value).startswith(f"{path}: {field}: {message}")


def test_bad_sweep_is_one_line_and_exit_2(files, capsys):
    path = write_sweep(files, sweep_doc(seeds=[1, 2, "x"]))
    assert main(["sweep", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f'kschedcore: error: {path}: seeds[2]: must be an integer, got "x"\n'


def test_grid_in_order(files):
    doc = sweep_doc(workloads={"small": ["cluster.yaml", "pods.yaml"], "gen": {"generate": {"nodes": 4, "pods": 6}}},
                    percentageOfNodesToScore=[None, 100], seeds={"from": 1, "to": 3},
                    modes=["schedule", {"capacity": {"podspec": "pod.yaml", "maxLimit": 2}}])
    plan = sweep.plan(sweep.load_sweep(write_sweep(files, doc)))
    assert len(plan.tasks) == 2 * 2 * 2 * 3 * 2
    axes = [(t.workload, t.configuration, t.percentage, t.seed, t.mode.kind) for t in plan.tasks]
    assert axes[:5] == [("small", "default", None, 1, "schedule"), ("small", "default", None, 1, "capacity"),
                        ("small", "default", None, 2, "schedule"), ("small", "default", None, 2, "capacity"),
                        ("small", "default", None, 3, "schedule")]
    assert axes[6] == ("small", "default", 100, 1, "schedule") and axes[12] == ("small", "binpack", None, 1, "schedule")
    assert axes[-1] == ("gen", "binpack", 100, 3, "capacity")
    assert [t.index for t in plan.tasks] == list(range(48))
    assert set(plan.payloads) == {"small", "gen"}      # each workload loaded once, whatever its tasks
    cap = plan.tasks[1]
    assert cap.template.name == "copy" and cap.mode.max_limit == 2
    assert cap.config.profiles[0].scheduler_name == "default-scheduler" and plan.tasks[0].config is None


# ---- each mode, as the command it stands for ------------------------------------------------
def test_schedule_and_queue_as_the_scheduler_and_the_loop(files):
    path = write_sweep(files, sweep_doc(configurations={"default": "default"}, percentageOfNodesToScore=[None, 50],
                                        seeds=[1, 2, 3], modes=["schedule", "queue"]))
    rows = rows_of(path, jobs=1)
    for row in rows:
        sched = Scheduler.from_workload(load_workload(files / "cluster.yaml", files / "pods.yaml"), seed=row["seed"],
                                        percentage_of_nodes_to_score=row["percentageOfNodesToScore"])
        if row["mode"] == "schedule":
            assignment = {r.pod: r.node for r in sched.schedule_pending()}
        else:
            assignment = {o.pod: o.node for o in Simulation(sched).run_until_idle(3600)}
        assert row["digest"] == digest(assignment), row
        assert (row["pods"], row["scheduled"], row["unschedulable"]) == (26, 24, 2)
        assert (row["cpuUtilization"], row["memoryUtilization"]) == (sched.utilization()["cpu"], sched.utilization()["memory"])
        assert row["nodes"] == 9 and row["instances"] is None and row["arrival"] is None
    # identical nodes: the seeds' tie-breaks place pods differently (else the digests above prove little)
    assert len({r["digest"] for r in rows if r["mode"] == "schedule"}) > 1


def test_replay_as_kschedcore_replay(files):
    untimed = sweep_doc(configurations={"default": "default"}, seeds=[4], modes=["replay", {"replay": {"arrival": "all"}}])
    timed = {**untimed, "workloads": {"timed": ["cluster.yaml", "events.jsonl"]},
             "modes": ["replay", {"replay": {"arrival": "timestamps", "until": 3}}, {"replay": {"arrival": "all"}}]}
    rows = rows_of(write_sweep(files, untimed), jobs=1) + rows_of(write_sweep(files, timed, "timed.yaml"), jobs=1)
    # no arrival given: replay's default, by the input (timestamps when every event has a time)
    assert [r["arrival"] for r in rows] == ["settle", "all", "timestamps", "timestamps", "all"]
    for row, until in zip(rows, [None, None, None, 3, None]):
        inputs = [files / "cluster.yaml", files / ("pods.yaml" if row["workload"] == "small" else "events.jsonl")]
        replay = load_replay(inputs, Scheduler(seed=4), arrival=row["arrival"], until=until)
        replay.run()
        assert row["digest"] == digest({r.pod: r.node for r in replay.recorder.records.values()}), row
    assert [r["pods"] for r in rows[2:]] == [12, 7, 12]       # until 3 s: the events at 0, 0.5, ... 3
    assert rows[0]["scheduled"] == 24 and rows[2]["scheduled"] == 12


def test_capacity_as_kschedcore_capacity(files, capsys):
    path = write_sweep(files, sweep_doc(seeds=[0], modes=[{"capacity": {"podspec": "pod.yaml"}},
                                                          {"capacity": {"podspec": "pod.yaml", "maxLimit": 5}}]))
    rows = rows_of(path, jobs=1)
    cluster = [str(files / "cluster.yaml"), str(files / "pods.yaml")]
    for row in rows:
        args = ["capacity", *cluster, "--podspec", str(files / "pod.yaml")]
        if row["configuration"] == "binpack":
            args += ["--default-config", str(files / "binpack.yaml")]
        args += ["--max-limit", "5"] if row["task"] % 2 else []      # the second mode's maxLimit
        assert main(args) == 0
        assert row["instances"] == int(capsys.readouterr().out), row
        # the 24 web pods placed and the two huge ones (32 and 20 cpu: no node has them) not,
        # then the copies: instances counts copies only, as `kschedcore capacity` does
        assert row["scheduled"] == 24 + row["instances"] and row["podspec"] == "pod.yaml"
        assert row["pods"] == 26 + row["instances"] + (row["task"] % 2 == 0), row
    # 48 cpu - 3 bound - 22.5 pending leave 22.5 cpu: at most 45 copies of 500m; maxLimit 5: 5 copies
    assert 0 < rows[0]["instances"] <= 45 and rows[1]["instances"] == 5


# ---- runners -------------------------------------------------------------------------------------
def test_pool_equals_one_process(files):
    doc = sweep_doc(workloads={"small": ["cluster.yaml", "pods.yaml"], "gen": {"generate": {"nodes": 30, "pods": 120}}},
                    seeds=[1, 2])
    plan = sweep.plan(sweep.load_sweep(write_sweep(files, doc)))
    seen = []
    pooled = sweep.run(plan, jobs=2, on_row=seen.append)
    alone = sweep.run(plan, jobs=1)
    assert len(pooled.rows) == 32 and [r["task"] for r in pooled.rows] == list(range(32))
    assert decisions(pooled.rows) == decisions(alone.rows)
    assert sorted(r["task"] for r in seen) == list(range(32))       # each row reported as it came
    assert pooled.summary["jobs"] == 2 and alone.summary["jobs"] == 1
    assert pooled.summary["pods"] == sum(r["pods"] for r in alone.rows)


def shared_files():
    folder = Path("/dev/shm") if os.access("/dev/shm", os.W_OK) else Path(tempfile.gettempdir())
    return set(folder.glob("kschedcore-sweep-*"))


def test_pool_maps_shared_payloads_and_removes_them(files):
    doc = sweep_doc(configurations={"default": "default"}, seeds=[1, 2])
    plan = sweep.plan(sweep.load_sweep(write_sweep(files, doc)))
    before = shared_files()
    result = sweep.run(plan, jobs=2)
    assert shared_files() == before
    assert decisions(result.rows) == decisions(sweep.run(plan, jobs=1).rows)
    # the tasks' own seconds, summed: what the workers spent in tasks, of jobs x wall
    assert result.summary["taskSeconds"] == pytest.approx(sum(r["wallSeconds"] for r in result.rows), abs=1e-3)
    assert 0 < result.summary["taskSeconds"] <= 2 * result.summary["wallSeconds"] + 0.01


def test_pool_removes_shared_payloads_after_a_refused_task(files):
    doc = sweep_doc(configurations={"default": "default"}, seeds=[1, 2], modes=[{"replay": {"arrival": "timestamps"}}])
    plan = sweep.plan(sweep.load_sweep(write_sweep(files, doc)))
    before = shared_files()
    with pytest.raises(ValidationError, match="needs a time with --arrival timestamps"):
        sweep.run(plan, jobs=2)
    assert shared_files() == before


def test_tasks_longest_first(files):
    doc = sweep_doc(workloads={"small": ["cluster.yaml", "pods.yaml"], "gen": {"generate": {"nodes": 30, "pods": 120}}},
                    configurations={"default": "default"}, seeds=[1, 2],
                    modes=["schedule", "queue", {"capacity": {"podspec": "pod.yaml"}}])
    plan = sweep.plan(sweep.load_sweep(write_sweep(files, doc)))
    assert plan.sizes == {"small": 29, "gen": 120}
    ordered = sweep.tasks.order(plan)
    assert sorted(t.index for t in ordered) == list(range(len(plan.tasks)))
    first = [(t.workload, t.mode.kind) for t in ordered]
    # 120 pods x queue's 4, x schedule's 1, 29 x 4, x 1, 120 x capacity's 0.5, 29 x 0.5
    assert first[:2] == [("gen", "queue")] * 2 and first[2:4] == [("gen", "schedule")] * 2
    assert first[4:6] == [("small", "queue")] * 2 and first[-2:] == [("small", "capacity")] * 2
    assert [t.index for t in ordered[:2]] == sorted(t.index for t in ordered[:2])     # ties in grid order


def test_rows_in_grid_order_whatever_order_tasks_end(files, monkeypatch):
    path = write_sweep(files, sweep_doc(configurations={"default": "default"}, seeds=[1, 2, 3]))
    plan = sweep.plan(sweep.load_sweep(path))
    in_order = sweep.run(plan, jobs=1).rows

    def backwards(plan, jobs, on_result):
        for task in reversed(plan.tasks):
            on_result(sweep.tasks.attempt(task, plan.payloads[task.workload]))
    monkeypatch.setattr(sweep, "run_local", backwards)
    seen = []
    rows = sweep.run(plan, jobs=1, on_row=seen.append).rows
    assert [r["task"] for r in seen] == list(range(12))[::-1]
    assert decisions(rows) == decisions(in_order)


def test_refused_task_names_the_task(files, capsys):
    doc = sweep_doc(configurations={"default": "default"}, seeds=[1], modes=[{"replay": {"arrival": "timestamps"}}])
    path = write_sweep(files, doc)
    assert main(["sweep", str(path), "--jobs", "1"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"kschedcore: error: {path}: task 0 (workload small, configuration default, seed 1, mode replay): ")
    assert "needs a time with --arrival timestamps" in err[0]


def test_event_stream_serves_replay_only(files):
    doc = sweep_doc(workloads={"timed": ["cluster.yaml", "events.jsonl"]}, modes=["schedule"])
    with pytest.raises(ValidationError, match="events.jsonl: an event stream or trace serves replay modes only, not schedule"):
        sweep.plan(sweep.load_sweep(write_sweep(files, doc)))


# ---- outputs -------------------------------------------------------------------------------------
def test_outputs_read_back(files, capsys):
    path = write_sweep(files, sweep_doc(percentageOfNodesToScore=[None, 100], seeds=[1]))
    out = files / "out"
    args = ["sweep", str(path), "--jobs", "1", "--json", str(out / "r.json"), "--plot", str(out / "s.png")]
    out.mkdir()
    assert main([*args, "-o", str(out / "r.csv")]) == 0
    assert "16 tasks in" in capsys.readouterr().err
    doc = json.loads((out / "r.json").read_text())
    rows = doc["rows"]
    assert doc["columns"] == list(sweep.COLUMNS) and len(rows) == 16 and doc["summary"]["tasks"] == 16
    assert doc["summary"]["runner"] == "local" and doc["summary"]["podsPerSecond"] > 0
    with open(out / "r.csv", newline="") as f:
        table = list(csv.DictReader(f))
    assert table == [{k: "" if v is None else str(v) for k, v in r.items()} for r in rows]
    png = (out / "s.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image
    height, width = matplotlib.image.imread(out / "s.png").shape[:2]
    assert width > 1000 and height > 300
    pq = pytest.importorskip("pyarrow.parquet")
    assert main([*args, "-o", str(out / "r.parquet")]) == 0
    back = pq.read_table(out / "r.parquet").to_pylist()
    assert decisions(back) == decisions(rows) and back[0]["percentageOfNodesToScore"] is None


def test_table_on_stdout(files, capsys):
    path = write_sweep(files, sweep_doc(configurations={"default": "default"}, seeds=[1],
                                        modes=["schedule", {"capacity": {"podspec": "pod.yaml"}}]))
    assert main(["sweep", str(path), "--jobs", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["workload", "config", "seed", "mode", "pods", "scheduled", "unsched", "instances",
                                "cpu", "memory", "pods/s"]
    assert lines[1].split()[:6] == ["small", "default", "1", "schedule", "26", "24"]
    assert lines[2].split()[3] == "capacity:pod.yaml" and lines[3].startswith("2 tasks in")


@pytest.mark.parametrize("flags, module, extra", [
    (["-o", "r.parquet"], "pyarrow", "sweep"), (["--plot", "s.png"], "matplotlib", "sweep"),
    (["--ray"], "ray", "ray")])
def test_missing_extra_is_one_line(files, capsys, monkeypatch, flags, module, extra):
    monkeypatch.setitem(sys.modules, module, None)       # import fails as if not installed
    assert main(["sweep", str(write_sweep(files, sweep_doc())), *flags]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"needs {module}, which is not installed: pip install 'kschedcore[{extra}]'" in err


def test_bad_results_suffix(files, capsys):
    assert main(["sweep", str(write_sweep(files, sweep_doc())), "-o", "r.xlsx"]) == 2
    assert 'must end in .csv or .parquet, got "r.xlsx"' in capsys.readouterr().err


def test_example_sweep_runs_smaller():
    """examples/sweep/sweep.yaml as shipped, on a smaller generated cluster and one seed."""
    spec = sweep.load_sweep(EXAMPLE)
    assert len(spec.workloads) * len(spec.configurations) * len(spec.seeds) * len(spec.modes) == 24
    small = dataclasses.replace(spec, seeds=spec.seeds[:1], workloads=[
        dataclasses.replace(w, generate={**w.generate, "nodes": 40, "pods": 240}) for w in spec.workloads])
    rows = sweep.run(sweep.plan(small), jobs=1).rows
    assert [sweep.results.mode_label(r) for r in rows[:4]] == ["schedule", "queue", "replay:all", "capacity:web-pod.yaml"]
    assert all(r["scheduled"] > 200 for r in rows) and rows[3]["instances"] > rows[0]["scheduled"]


# ---- a real local Ray cluster ----------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ray_cluster():
    """`ray start --head` on 127.0.0.1 with 2 CPUs. Started with --block in a session of its own,
    so teardown ends exactly the processes it started (SIGINT to that group: the head shuts its
    raylet and workers down), where `ray stop` would end every Ray process of the machine.
    With a token of its own (Ray 2.5x: a head enables token auth when ~/.ray/auth_token exists,
    and a driver given an address sends a token only with RAY_AUTH_MODE=token)."""
    pytest.importorskip("ray", reason="ray is not installed (pip install 'kschedcore[ray]')")
    port = free_port()
    ray_bin = Path(sys.executable).parent / "ray"
    temp = Path(f"/tmp/ksc-ray-{os.getpid()}")            # short: Ray's socket paths must fit 107 bytes
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    head = subprocess.Popen([str(ray_bin), "start", "--head", "--block", "--node-ip-address", "127.0.0.1",
                             "--port", str(port), "--num-cpus", "2", "--include-dashboard=false",
                             "--disable-usage-stats", "--temp-dir", str(temp)], env={**os.environ, **auth},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert head.poll() is None, "ray start exited"
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the Ray head did not come up within 60 s"
                time.sleep(0.2)
        yield f"127.0.0.1:{port}", {**os.environ, **auth}
    finally:
        os.killpg(head.pid, signal.SIGINT)
        try:
            head.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()
        shutil.rmtree(temp, ignore_errors=True)


def test_ray_address_nothing_listens_on(files, capsys):
    pytest.importorskip("ray", reason="ray is not installed (pip install 'kschedcore[ray]')")
    port = free_port()
    start = time.monotonic()
    assert main(["sweep", str(write_sweep(files, sweep_doc(seeds=[1]))), "--ray", f"127.0.0.1:{port}"]) == 2
    assert capsys.readouterr().err == f"kschedcore: error: --ray: no Ray cluster at 127.0.0.1:{port}: Connection refused\n"
    assert time.monotonic() - start < 20        # not Ray's minutes of retries


def test_ray_rows_equal_local(files, ray_cluster):
    """The command, as a user runs it (a process of its own, the cluster's token in its
    environment), against the local pool."""
    address, env = ray_cluster
    main_grid = sweep_doc(workloads={"small": ["cluster.yaml", "pods.yaml"],
                                     "gen": {"generate": {"nodes": 30, "pods": 150}}},
                          seeds=[1, 2], modes=["schedule", "queue", {"replay": {"arrival": "settle"}},
                                               {"capacity": {"podspec": "pod.yaml"}}])
    # an event stream serves replay modes only: a sweep of its own
    timed_grid = sweep_doc(workloads={"timed": ["cluster.yaml", "events.jsonl"]}, seeds=[1, 2],
                           modes=["replay", {"replay": {"arrival": "all"}}])
    local, on_ray = files / "local.json", files / "ray.json"
    for doc, tasks in ((main_grid, 32), (timed_grid, 8)):
        path = write_sweep(files, doc)
        assert main(["sweep", str(path), "--jobs", "2", "--json", str(local)]) == 0
        run = subprocess.run([sys.executable, "-m", "kschedcore", "sweep", str(path), "--ray", address,
                              "--json", str(on_ray)], env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert f"{tasks} tasks in" in run.stdout and f"on Ray at {address} (2 CPUs)" in run.stdout
        a, b = json.loads(local.read_text()), json.loads(on_ray.read_text())
        assert len(b["rows"]) == tasks and decisions(b["rows"]) == decisions(a["rows"])
        assert (b["summary"]["runner"], b["summary"]["address"], b["summary"]["cpus"]) == ("ray", address, 2)


def test_documented_example(files, monkeypatch):
    page = (Path(__file__).resolve().parents[1] / "docs" / "commands" / "sweep.md").read_text()
    block = page.split("## From Python\n", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    write_sweep(files, sweep_doc(seeds=[1]))
    monkeypatch.chdir(files)
    scope = {}
    exec(block, scope)
    assert len(scope["result"].rows) == 8 and scope["result"].summary["tasksPerSecond"] > 0
    with open(files / "results.csv", newline="") as f:
        assert [row["mode"] for row in csv.DictReader(f)][:4] == ["schedule", "queue", "replay", "capacity"]
