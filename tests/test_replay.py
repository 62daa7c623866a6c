"""Replay over time (kschedcore.replay): the real scheduler's outcomes on the parity streams,
hand-worked timed cases, the watch-stream reader, the Alibaba trace loader, the report, and a
state machine over timed events."""
import gzip
import json
import random
from pathlib import Path

import pytest
from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from kschedcore import Scheduler
from kschedcore.cli import main
from kschedcore.errors import ValidationError
from kschedcore.replay import Replay, load_replay, read_watch_stream
from kschedcore.replay.events import WatchEvent
from kschedcore.sources.files import load_workload

from invariants import check_cache

DATA = Path(__file__).parent / "data"
PARITY = DATA / "parity"
ALIBABA = DATA / "alibaba"


def node(name, cpu="2", labels=None, **extra):
    alloc = {"cpu": cpu, "memory": "8Gi", "pods": "20", **extra}
    return {"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "status": {"allocatable": alloc, "capacity": dict(alloc)}}


def pod(name, cpu="1", created=None, deleted=None, duration=None, priority=None, node_name=None, labels=None):
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": labels or {}}
    if created is not None:
        meta["creationTimestamp"] = _ts(created)
    if deleted is not None:
        meta["deletionTimestamp"] = _ts(deleted)
    if duration is not None:
        meta["annotations"] = {"kschedcore.io/duration": duration}
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if priority is not None:
        spec["priority"] = priority
    if node_name:
        spec["nodeName"] = node_name
    return {"kind": "Pod", "metadata": meta, "spec": spec}


def _ts(seconds):
    return f"2025-01-01T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}Z"


def ev(typ, obj, time=None):
    e = WatchEvent(typ, obj["kind"], obj, f"test: {obj['metadata']['name']}")
    if time is not None:
        e.time, e.relative = int(time * 1e9), True
    return e


def run(cluster, events, arrival="timestamps", **kw):
    replay = Replay(Scheduler(tie_break="first"), [ev("ADDED", o) for o in cluster], events, arrival=arrival, **kw)
    replay.run()
    return replay, {k: r.as_dict() for k, r in replay.recorder.records.items()}


# ---- the real scheduler's outcomes ---------------------------------------------------------------
def _trace(name):
    return [json.loads(line) for line in gzip.open(PARITY / name)]


def test_churn_stream_ends_as_the_real_scheduler_ended_it():
    replay = load_replay([PARITY / "replay_churn_a.cluster.json.gz", PARITY / "replay_churn_a.events.jsonl.gz"],
                         arrival="settle")
    replay.run()
    recs = replay.recorder.records
    trace = _trace("replay_churn_a.trace.jsonl.gz")
    assert len(trace) == 220
    for t in trace:
        got = recs[t["pod"]].as_dict()
        assert (got["node"] or "", got["messages"], got["attempts"]) == \
               (t["node"], t.get("messages", []), t["attempts"]), t["pod"]
        assert (got["nominatedNode"] or "", got["victims"], got["preemptedBy"] or "") == \
               (t["nominated"], t["victims"], t["preemptedBy"]), t["pod"]
        assert got["event"] == t["event"]


def _preemption_mismatches():
    replay = load_replay([PARITY / "preemption_a.json.gz"], arrival="settle")
    replay.run()
    recs = replay.recorder.records
    bad = []
    for t in _trace("preemption_a.trace.jsonl.gz"):
        got = recs[t["pod"]].as_dict()
        if (got["node"] or "", got["nominatedNode"] or "", got["victims"], got["messages"]) != \
                (t["node"], t["nominated"], t["victims"], t.get("messages", [])):
            bad.append(t["pod"])
    return bad


def test_preemption_stream_every_pod_and_message_as_the_real_scheduler():
    """Start times rank candidates and victims, budgets keep their given status, priority classes
    admit the pods; victims are deleted as the async preemption goroutine deletes them (a
    two-victim preemptor tries once more in between); a pending pod that settles unplaced is
    withdrawn before the next arrives."""
    assert _preemption_mismatches() == []
    replay = load_replay([PARITY / "preemption_a.json.gz"], arrival="settle")
    replay.run()
    recs = replay.recorder.records
    assert recs["team-a/p-036-preempt_big"].attempts == 3 and len(recs["team-a/p-036-preempt_big"].messages) == 2
    assert recs["default/p-111-never"].withdrawn and recs["default/p-111-never"].attempts == 1
    assert recs["default/p-112-preempt"].node == "node-012"


REALSCHED = DATA / "realsched_replay"
REPLAYS = sorted(p.name.removesuffix(".truth.jsonl.gz") for p in REALSCHED.glob("*.truth.jsonl.gz"))


@pytest.mark.parametrize("name", REPLAYS)
def test_generated_replays_end_as_the_real_scheduler_ended_them(name):
    """Streams with preemption, budgets, anti-affinity and spreading, and preemption workloads,
    against kube-scheduler v1.34.1 (tests/data/realsched_replay/README.md): every field the real
    runs agree on."""
    stream = (REALSCHED / f"{name}.cluster.json.gz").exists()
    files = [REALSCHED / f"{name}.cluster.json.gz", REALSCHED / f"{name}.events.jsonl.gz"] if stream \
        else [REALSCHED / f"{name}.json.gz"]
    replay = load_replay(files, arrival="settle")
    replay.run()
    recs = replay.recorder.records
    checked = 0
    for t in (json.loads(line) for line in gzip.open(REALSCHED / f"{name}.truth.jsonl.gz")):
        got = recs[t["pod"]].as_dict()
        got = {"node": got["node"] or "", "nominated": got["nominatedNode"] or "", "victims": got["victims"],
               "messages": got["messages"], "attempts": got["attempts"], "preemptedBy": got["preemptedBy"] or ""}
        for field, want in t.items():
            if field in got and want is not None:
                assert got[field] == want, (t["pod"], field)
                checked += 1
    assert checked > 300


# ---- hand-worked timed cases ---------------------------------------------------------------------
def test_pods_arrive_in_time_order_not_file_order():
    events = [ev("ADDED", pod("late", created=20)), ev("ADDED", pod("early", created=5))]
    replay, recs = run([node("a", cpu="1")], events)
    assert recs["default/early"]["node"] == "a" and recs["default/early"]["arrival"] == 0.0
    assert recs["default/late"]["node"] is None and recs["default/late"]["arrival"] == 15.0
    assert "Insufficient cpu" in recs["default/late"]["messages"][0]


def test_a_departure_requeues_the_pending_pod_it_makes_room_for():
    events = [ev("ADDED", pod("first", duration="10s"), time=0), ev("ADDED", pod("second"), time=1)]
    replay, recs = run([node("a", cpu="1")], events)
    first, second = recs["default/first"], recs["default/second"]
    assert first["departedAt"] == 10.0 and first["node"] == "a"
    assert second["node"] == "a" and second["boundAt"] >= 10.0 and second["attempts"] == 2
    assert replay.sim.bound == {"default/second": "a"}


def test_deletion_timestamps_depart_and_cancel():
    events = [ev("ADDED", pod("runs", created=0, deleted=30)), ev("ADDED", pod("waits", created=1, deleted=20))]
    replay, recs = run([node("a", cpu="1")], events)
    assert recs["default/runs"]["departedAt"] == 30.0
    waits = recs["default/waits"]
    assert waits["node"] is None and waits["departedAt"] == 20.0 and waits["arrival"] == 1.0 and waits["messages"]


def test_cordon_holds_a_pod_and_uncordon_requeues_it():
    cordoned = node("a")
    cordoned["spec"] = {"unschedulable": True,
                        "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]}
    events = [ev("MODIFIED", cordoned, time=0), ev("ADDED", pod("p"), time=1), ev("MODIFIED", node("a"), time=5)]
    replay, recs = run([node("a")], events)
    p = recs["default/p"]
    assert p["node"] == "a" and p["arrival"] == 1.0 and p["boundAt"] == 5.0
    assert "node(s) were unschedulable" in p["messages"][0] or "untolerated taint" in p["messages"][0]


def test_node_removal_keeps_bound_pods_and_new_pods_go_elsewhere():
    events = [ev("ADDED", pod("on-a", node_name="a"), time=0), ev("DELETED", node("a"), time=1),
              ev("ADDED", pod("new"), time=2), ev("ADDED", node("b"), time=3)]
    replay, recs = run([node("a")], events)
    assert replay.sim.bound["default/on-a"] == "a"     # still bound: kube-scheduler deletes no pod
    new = recs["default/new"]
    assert new["messages"] == ["no nodes available to schedule pods"]
    # an error (not a rejection) waits in the error backoff queue, which is never popped early:
    # backing off until the 1 s window after its failure at 2 has passed, flushed at 4
    assert new["node"] == "b" and new["boundAt"] == 4.0


def test_preemption_respects_budgets_and_records_victims():
    budget = {"kind": "PodDisruptionBudget", "metadata": {"name": "db", "namespace": "default"},
              "spec": {"selector": {"matchLabels": {"app": "db"}}}, "status": {"disruptionsAllowed": 0}}
    cluster = [budget, node("a", cpu="1"), node("b", cpu="1"),
               pod("db-0", node_name="a", priority=1, labels={"app": "db"}),
               pod("web-0", node_name="b", priority=1, labels={"app": "web"})]
    events = [ev("ADDED", pod("urgent", priority=100), time=0)]
    replay, recs = run(cluster, events)
    urgent = recs["default/urgent"]
    assert urgent["victims"] == ["default/web-0"] and urgent["nominatedNode"] == "b" and urgent["node"] == "b"
    assert recs["default/web-0"]["preemptedBy"] == "default/urgent"
    assert recs["default/web-0"]["departedAt"] == 0.0
    assert replay.sched.pdbs["default/db"].disruptions_allowed == 0


def test_settle_mode_needs_no_times_and_refuses_until():
    events = [ev("ADDED", pod("p")), ev("ADDED", pod("q")), ev("DELETED", pod("p")), ev("ADDED", pod("r"))]
    replay, recs = run([node("a", cpu="1")], events, arrival="settle")
    assert recs["default/p"]["node"] == "a" and recs["default/p"]["departedAt"] == 0.0
    assert recs["default/q"]["node"] == "a" and recs["default/q"]["messages"]     # waited for p to go
    assert recs["default/r"]["node"] is None and replay.sim.bound == {"default/q": "a"}
    assert recs["default/q"]["attempts"] == 2 and recs["default/q"]["boundEvent"] == 2
    with pytest.raises(ValidationError, match="until"):
        Replay(Scheduler(), [], [], arrival="settle", until=5)


def test_an_unknown_option_names_itself():
    """A Scheduler's option given to the replay (whose own options go to the loop's queue)."""
    with pytest.raises(ValidationError, match="simulation: percentage_of_nodes_to_score: no such option"):
        Replay(Scheduler(), [], [], arrival="settle", percentage_of_nodes_to_score=100)
    Replay(Scheduler(), [], [], arrival="settle", pod_initial_backoff=2.0)    # the queue's own


def test_all_mode_queues_everything_at_zero_then_lifetimes_run():
    events = [ev("ADDED", pod("a1", duration="5s")), ev("ADDED", pod("a2", duration="5s")), ev("ADDED", pod("a3"))]
    replay, recs = run([node("a", cpu="2")], events, arrival="all")
    assert [recs[f"default/a{i}"]["arrival"] for i in (1, 2, 3)] == [0.0, 0.0, 0.0]
    assert recs["default/a3"]["node"] == "a" and recs["default/a3"]["boundAt"] >= 5.0


def test_timestamps_need_a_time_per_event():
    with pytest.raises(ValidationError, match="needs a time"):
        Replay(Scheduler(), [], [ev("ADDED", pod("p"))], arrival="timestamps")


# ---- reading ------------------------------------------------------------------------------------
def test_watch_stream_jsonl_pretty_and_bare_objects():
    p = pod("p")
    text = json.dumps({"type": "ADDED", "object": p}) + "\n" + json.dumps({"type": "DELETED", "object": p},
                                                                          indent=2) + "\n"
    events = read_watch_stream("s.jsonl", text)
    assert [e.type for e in events] == ["ADDED", "DELETED"] and events[1].where == "s.jsonl: line 2"
    bare = read_watch_stream("w.json", json.dumps(node("a")) + json.dumps(node("a", cpu="4")))
    assert [e.type for e in bare] == ["ADDED", "MODIFIED"]
    timed = read_watch_stream("t.jsonl", json.dumps({"type": "ADDED", "object": p, "time": "2025-01-01T00:00:05Z"}))
    assert timed[0].time == 1735689605 * 10 ** 9 and not timed[0].relative


@pytest.mark.parametrize("line, field", [
    ('{"type": "ADDED", "object": {"kind": "Pod", "metadata": {"name": "p"}}, "extra": 1}', "extra"),
    ('{"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {"name": "p"}}}', "type"),
    ('{"type": "ERROR", "object": {"kind": "Status"}}', "type"),
    ('{"type": "ADDED", "object": {"metadata": {"name": "p"}}}', "object.kind"),
    ('{"type": "ADDED", "object": {"kind": "Pod", "metadata": {"name": "p"}}, "time": "yesterday"}', "time"),
    ('{"type": "ADDED", "object": ', ""),
])
def test_watch_stream_errors_name_the_line_and_field(line, field):
    with pytest.raises(ValidationError) as e:
        read_watch_stream("bad.jsonl", '{"type": "ADDED", "object": {"kind": "Node", "metadata": {"name": "n"}}}\n' + line)
    assert e.value.obj == "bad.jsonl: line 2" and e.value.field == field


def test_workload_document_keys_are_all_read_or_refused(tmp_path):
    doc = {"nodes": [node("a")], "pending": [], "podDisruptionBudgets": [], "priorityClasses": [
        {"kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"}]}
    f = tmp_path / "w.json"
    f.write_text(json.dumps(doc))
    w = load_workload(f)
    assert w.objects["PriorityClass"][0]["value"] == 1000
    f.write_text(json.dumps({**doc, "podDisruptionBudget": []}))
    with pytest.raises(ValidationError, match="podDisruptionBudget: unknown workload-document key"):
        load_workload(f)


def test_priority_classes_give_priority_and_preemption_policy():
    high = {"kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"}
    default = {"kind": "PriorityClass", "metadata": {"name": "base"}, "value": 7, "globalDefault": True}
    sched = Scheduler()
    sched.add_object(high)
    sched.add_object(default)
    p = pod("p")
    p["spec"]["priorityClassName"] = "high"
    got = sched.parse_pod(p)
    assert got.priority == 1000 and got.raw["spec"]["preemptionPolicy"] == "Never"
    assert sched.parse_pod(pod("q")).priority == 7
    p["spec"]["priorityClassName"] = "nope"
    with pytest.raises(ValidationError, match='spec.priorityClassName: no PriorityClass named "nope"'):
        sched.parse_pod(p)


def test_alibaba_trace_excerpt_replays_with_gpus_models_and_departures():
    replay = load_replay([ALIBABA / "openb_node_list_excerpt.csv", ALIBABA / "openb_pod_list_excerpt.csv"])
    assert replay.arrival == "timestamps"
    node1 = replay.sched.cache.node("openb-node-0001")
    assert node1.labels["alibaba.com/gpu-model"] == "V100M16" and node1.allocatable["nvidia.com/gpu"] == 2
    assert "alibaba.com/gpu-model" not in replay.sched.cache.node("openb-node-0000").labels
    replay.run()
    recs = {k: r.as_dict() for k, r in replay.recorder.records.items()}
    assert recs["default/openb-pod-0001"]["node"] == "openb-node-0001"      # V100M16|V100M32
    four = recs["default/openb-pod-0004"]          # 2 x V100M16: waits for pod 0001 to leave at 400
    assert four["node"] == "openb-node-0001" and four["boundAt"] >= 390 and four["messages"]
    assert recs["default/openb-pod-0005"]["node"] == "openb-node-0003" and recs["default/openb-pod-0005"]["departedAt"] == 60
    six = recs["default/openb-pod-0006"]           # 200 CPUs: never fits, cancelled at its deletion
    assert six["node"] is None and "Insufficient cpu" in six["messages"][0] and six["departedAt"] == 80
    assert all(r["departedAt"] is not None for r in recs.values())


def test_alibaba_csv_errors_name_the_line(tmp_path):
    f = tmp_path / "openb_pod_list_bad.csv"
    f.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
                 "scheduled_time\np,12x,1,0,0,,LS,Running,0,5,0\n")
    with pytest.raises(ValidationError, match=r"line 2: cpu_milli: expected a number"):
        load_replay([f])


def test_alibaba_multigpu_lists_without_times_arrive_in_file_order(tmp_path):
    """The trace's multigpu lists have only name, cpu_milli, memory_mib, num_gpu, gpu_milli."""
    f = tmp_path / "openb_pod_list_multigpu50.csv"
    f.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\nb,1000,1024,2,1000\na,2000,1024,0,0\n")
    replay = load_replay([ALIBABA / "openb_node_list_excerpt.csv", f])
    assert replay.arrival == "settle"           # no times: each event once the loop has settled
    replay.run()
    recs = {k: r.as_dict() for k, r in replay.recorder.records.items()}
    assert list(recs) == ["default/b", "default/a"]
    assert recs["default/b"]["node"] == "openb-node-0003" and recs["default/b"]["departedAt"] is None   # most room


# ---- command line and report --------------------------------------------------------------------
def test_cli_replay_jsonl_json_and_report(tmp_path, capsys):
    args = [str(PARITY / "replay_churn_a.cluster.json.gz"), str(PARITY / "replay_churn_a.events.jsonl.gz")]
    assert main(["replay", *args, "-o", "jsonl"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 220 + 0 and {"pod", "arrival", "node", "nominatedNode", "victims", "preemptedBy",
                                      "messages", "attempts", "boundAt", "departedAt"} <= set(lines[0])
    html, png = tmp_path / "r.html", tmp_path / "png"
    assert main(["replay", *args, "-o", "json", "--report", str(html), "--png", str(png)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["pods"]["arrived"] == 220 and doc["summary"]["arrival"] == "settle"
    _check_figures(html, png, {"utilization", "pods", "latency", "reasons", "allocation", "allocation-peak",
                               "preemptions"})
    run = tmp_path / "run.json"
    run.write_text(json.dumps(doc))
    assert main(["report", str(run), "-o", str(tmp_path / "again.html")]) == 0
    records = tmp_path / "run.jsonl"
    records.write_text("\n".join(json.dumps(r) for r in doc["pods"]))
    assert main(["report", str(records), "-o", str(tmp_path / "records.html"), "--png", str(tmp_path / "p2")]) == 0
    _check_figures(tmp_path / "records.html", tmp_path / "p2", {"latency", "reasons"})


def _check_figures(html, png_dir, names):
    import matplotlib.image as mpimg
    text = html.read_text()
    assert text.count("data:image/png;base64,") == len(list(png_dir.glob("*.png")))
    assert {p.stem for p in png_dir.glob("*.png")} == names
    for p in png_dir.glob("*.png"):
        img = mpimg.imread(p)
        assert img.shape[0] > 300 and img.shape[1] > 600
        assert img[..., :3].std() > 0.05, p.name        # not blank: axes, lines, text


def test_cli_replay_bad_input_is_one_line(tmp_path, capsys):
    f = tmp_path / "e.jsonl"
    f.write_text('{"type": "ADDED", "object": {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": '
                 '[{"name": "c", "resources": {"requests": {"cpu": "1.2.3"}}}]}}}\n')
    assert main(["replay", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and 'requests.cpu: invalid quantity "1.2.3"' in err


# ---- the loop's invariants under timed churn ------------------------------------------------------
class TimedReplayMachine(RuleBasedStateMachine):
    """Random timed arrivals (with durations), deletions, node additions, removals and cordons,
    replayed: no pod lost or bound twice, no node over allocatable, the cache equals the truth,
    and the records with and without quiet stretches (timestamps) or the arrivals at time 0
    added together (all) equal."""

    @initialize(seed=st.integers(0, 2 ** 16))
    def start(self, seed):
        self.rng = random.Random(seed)
        self.events, self.t, self.n_pods, self.nodes = [], 0.0, 0, ["n0", "n1"]
        self.cpu = {"n0": "2", "n1": "3"}      # a node keeps its size (a shrunk node may be over)
        self.cluster = [node("n0", cpu="2"), node("n1", cpu="3")]

    def _at(self):
        self.t += self.rng.choice([0.0, 0.5, 1.0, 3.0])
        return self.t

    @rule()
    def arrive(self):
        self.n_pods += 1
        p = pod(f"p{self.n_pods}", cpu=self.rng.choice(["500m", "1", "2"]),
                duration=self.rng.choice([None, "2s", "10s"]), priority=self.rng.choice([0, 0, 5]))
        self.events.append(ev("ADDED", p, self._at()))

    @rule()
    def delete_pod(self):
        if self.n_pods:
            self.events.append(ev("DELETED", pod(f"p{self.rng.randint(1, self.n_pods)}"), self._at()))

    @rule()
    def node_change(self):
        name = self.rng.choice(self.nodes + [f"n{len(self.nodes)}"])
        if name not in self.nodes:
            self.nodes.append(name)
            self.cpu[name] = "2"
            self.events.append(ev("ADDED", node(name, cpu="2"), self._at()))
        elif self.rng.random() < 0.3:
            self.events.append(ev("DELETED", node(name), self._at()))
        else:
            n = node(name, cpu=self.cpu[name])
            n["spec"] = {"unschedulable": self.rng.random() < 0.5}
            self.events.append(ev("MODIFIED", n, self._at()))

    def _replayed(self, arrival, stretches=True):
        from kschedcore.replay import arrivals, quiet
        with pytest.MonkeyPatch.context() as mp:
            if not stretches:
                mp.setattr(quiet, "may_run", lambda replay: False)
                mp.setattr(arrivals, "at_once", lambda replay, order, pos: pos)
            replay = Replay(Scheduler(seed=1), [ev("ADDED", o) for o in self.cluster], list(self.events),
                            arrival=arrival, samples=1)      # (one sample: the stretches run long)
            replay.run()
        return replay

    @invariant()
    def replays_cleanly(self):
        arrival = self.rng.choice(["timestamps", "all"])
        replay = self._replayed(arrival)
        other = self._replayed(arrival, stretches=False)     # (stretches: timestamps; together: all)
        assert [r.as_dict() for r in replay.recorder.records.values()] == \
               [r.as_dict() for r in other.recorder.records.values()]
        sim = replay.sim
        check_cache(sim)
        assert not set(sim.bound) & set(sim.binding)
        for key, rec in replay.recorder.records.items():
            alive = key in sim.pods
            assert alive != (rec.departed_at is not None), key          # departed, or still known
            if alive and key not in sim.bound:
                assert replay.sim.queue.where(key) is not None, key    # pending pods are in the queue
            assert rec.bindings <= 1, key                               # never bound twice


TestTimedReplay = TimedReplayMachine.TestCase
TestTimedReplay.settings = settings(max_examples=40, stateful_step_count=25, deadline=None)


def _replayed(paths, runs, arrival, taken):
    from kschedcore.scheduler import runs as runs_module
    real = runs_module.copies_after

    def counting(sim, pod, result):
        n = real(sim, pod, result)
        taken.append(n)
        return n
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("kschedcore.scheduler.loop.runs.copies_after", counting)
        replay = load_replay(paths, Scheduler(tie_break="random", seed=3), arrival=arrival, runs=runs)
        replay.run()
    return [r.as_dict() for r in replay.recorder.records.values()], replay.sim.cycles, replay.applied


CHURN = ["replay_churn_a.cluster.json.gz", "replay_churn_a.events.jsonl.gz"]


@pytest.mark.parametrize("paths,arrival,in_runs", [
    (["resources.json"], "all", True), (["node_affinity.json"], "all", True), (["taints.json"], "settle", False),
    (["mixed_medium.json.gz"], "all", False), (["preemption_a.json.gz"], "all", False),
    (CHURN, "settle", False), (CHURN, "all", True)])
def test_replays_decide_runs_of_queued_pods_as_their_cycles(paths, arrival, in_runs):
    """Pods queued together are decided in runs (of copies, of mixed templates) where nothing
    can happen between two pops: every record -- node, attempts, messages, times -- is the one
    a cycle per pod makes. (Settle mode queues one pod at a time; in
    mixed_medium the placed pods' affinity terms make every cycle read other pods.)"""
    taken, none = [], []
    files = [PARITY / p for p in paths]
    assert _replayed(files, True, arrival, taken) == _replayed(files, False, arrival, none)
    assert not any(none)
    assert (sum(taken) > 0) == in_runs


def _churning_events(seed, nodes, pods, per_node=3.0, lives=(10, 60), grid=None):
    """The generated cluster's pods arriving at random, each running `lives` seconds (10-60):
    about `per_node` pods a node running at once; grid: arrival times rounded to it (ties)."""
    from kschedcore.replay.events import workload_events
    from kschedcore.sources.generator import generate
    w = generate(nodes=nodes, pods=pods, seed=seed)
    rng, t = random.Random(seed), 0.0
    for p in w.pending:
        meta = p["metadata"]
        meta["creationTimestamp"] = _ts(0)
        meta.setdefault("annotations", {})["kschedcore.io/duration"] = f"{rng.randint(*lives)}s"
    cluster, events = workload_events(w, "generated")
    span = sum(lives) / 2 * pods / (per_node * nodes)       # (the mean life)
    for e in events:
        t = rng.random() * span
        e.time, e.relative = int((round(t / grid) * grid if grid else t) * 1e9), True
    return cluster, events


def _quietly(make, stretches: bool, taken: list):
    """A replay's records, samples and loop state, with or without quiet stretches."""
    from kschedcore.replay import quiet, windows
    real, window = quiet.run, windows.take

    def counting(replay, order, pos, times):
        before = replay.applied
        out = real(replay, order, pos, times)
        taken.append(replay.applied - before)
        return out

    def in_windows(replay, *args):
        before = replay.applied
        out = window(replay, *args)
        taken.append((replay.applied - before, "windows"))
        return out
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(quiet, "run", counting)
        mp.setattr(windows, "take", in_windows)
        if not stretches:
            mp.setattr(quiet, "may_run", lambda replay: False)
        replay = make()
        replay.run()
    sim, q = replay.sim, replay.sim.queue
    check_cache(sim)
    return ([r.as_dict() for r in replay.recorder.records.values()], replay.sampler.finish(), replay.applied,
            sim.cycles, q.scheduling_cycle, q.move_request_cycle, sorted(sim.bound.items()), replay.recorder.pending,
            sorted(sim.outcomes), replay.clock.now(), replay._changed_at, replay.sched.cache.table.requested.tolist())


@pytest.mark.parametrize("seed,nodes,pods,per_node,lives,grid,samples", [
    (1, 150, 900, 3.0, (10, 60), None, 500), (2, 60, 1200, 20.0, (10, 60), None, 500),
    (3, 400, 1500, 2.0, (10, 60), None, 500), (4, 200, 1500, 3.0, (0, 3), 0.5, 10),
    (5, 100, 1500, 4.5, (10, 60), None, 10), (7, 100, 300, 3.0, (10, 60), None, 10_000),
    (8, 100, 300, 3.0, (10, 60), None, 300)])
def test_quiet_stretches_leave_what_the_loop_leaves(seed, nodes, pods, per_node, lives, grid, samples):
    """While the loop is idle between events, arrivals and departures are taken without the
    loop's calls that find nothing to do: every record, sample, counter and table row is the
    one the loop leaves. Roomy and crowded clusters (crowded: pods fail and wait, which ends
    the stretches), a sample at every step to one every few hundred."""
    def make():
        cluster, events = _churning_events(seed, nodes, pods, per_node, lives, grid)
        return Replay(Scheduler(tie_break="random", seed=seed), cluster, events, arrival="timestamps",
                      samples=samples)
    taken, none = [], []
    assert _quietly(make, True, taken) == _quietly(make, False, none)
    stretches = sum(n for n in taken if isinstance(n, int))
    in_windows = sum(n for n, _ in (x for x in taken if isinstance(x, tuple)))
    assert stretches > (pods // 4 if per_node < 10 else 0) and not none      # (a sample every 3-4 steps)
    if per_node < 10 and samples < pods:       # (a sample at every step: each step its own)
        assert in_windows > pods // 8


def test_sampled_steps_stay_in_the_stretch():
    """A sampled step stays in the stretch -- a window ends before it, and it is taken alone,
    sampled between its event and its cycle as the loop's way samples it: in a roomy cluster
    the stretches take every step, samples every 40 steps."""
    def make():
        cluster, events = _churning_events(6, 200, 1200, 2.0)
        return Replay(Scheduler(seed=6), cluster, events, arrival="timestamps", samples=40)
    taken = []
    _, series, applied, *_ = _quietly(make, True, taken)
    stretches = sum(n for n in taken if isinstance(n, int))
    assert applied == 2400 and stretches == applied and len(series["time"]) >= 40


def _timed_parity(name, seed, copies, longest, per_second):
    """A parity workload's pending pods (`copies` times over, renamed) arriving `per_second` at
    random, each living 1-`longest` s: (cluster, events) for a timed Replay."""
    import copy
    from kschedcore.replay.events import workload_events
    w = load_workload(next(PARITY.glob(f"{name}.json*")))
    rng = random.Random(seed)
    if copies > 1:
        w.pending = [copy.deepcopy(p) for _ in range(copies) for p in w.pending]
        for k, p in enumerate(w.pending):
            p["metadata"]["name"] += f"-{k}"
    for p in w.pending:
        p["metadata"].pop("creationTimestamp", None)
        p["metadata"].setdefault("annotations", {})["kschedcore.io/duration"] = f"{rng.randint(1, longest)}s"
    cluster, events = workload_events(w, name)
    t = 0.0
    for e in events:
        t += rng.expovariate(per_second)
        e.time, e.relative = int(t * 1e9), True
    return cluster, events


def test_quiet_stretches_on_a_workload_of_many_templates():
    """The parity workload `resources` (a template nearly every pod, nodes over-committed from
    the start) arriving 50 pods a second, each living 1-30 s: the records with and without quiet
    stretches are equal (a window of more templates than the kernel's equivalence cache has
    slots once handed a later pod another template's verdicts)."""
    from kschedcore.replay import quiet

    def records(stretches):
        cluster, events = _timed_parity("resources", seed=2, copies=1, longest=30, per_second=50.0)
        with pytest.MonkeyPatch.context() as mp:
            if not stretches:
                mp.setattr(quiet, "may_run", lambda replay: False)
            replay = Replay(Scheduler(tie_break="first"), cluster, events, arrival="timestamps", samples=3)
            replay.run()
        return [r.as_dict() for r in replay.recorder.records.values()], replay.sim.cycles
    assert records(True) == records(False)


def test_quiet_stretches_on_the_alibaba_excerpt():
    """GPUs and models, pods that wait for room and cancelled ones (few samples: a sample's
    step is the loop's own)."""
    taken, none = [], []
    paths = [ALIBABA / "openb_node_list_excerpt.csv", ALIBABA / "openb_pod_list_excerpt.csv"]

    def make():
        return load_replay(paths, samples=2)
    assert _quietly(make, True, taken) == _quietly(make, False, none)
    assert sum(n for n in taken if isinstance(n, int)) > 0


@pytest.mark.parametrize("stretches", [True, False])
def test_a_pod_leaving_at_once_leaves_before_the_next_arrival(stretches):
    """A pod whose life is 0 s departs as it binds, before a pod arriving a second later -- which
    then finds both nodes empty (tie-break first: n1) -- with or without quiet stretches (a
    window of the kernel's ends before its own arrivals' departures)."""
    from kschedcore.replay import quiet
    with pytest.MonkeyPatch.context() as mp:
        if not stretches:
            mp.setattr(quiet, "may_run", lambda replay: False)
        events = [ev("ADDED", node("n0", cpu="1"), 0), ev("ADDED", pod("a", cpu="2", duration="0s"), 0),
                  ev("ADDED", pod("b", cpu="2", duration="5s"), 1), ev("ADDED", pod("c", cpu="1", duration="5s"), 1)]
        replay, recs = run([node("n1"), node("n2")], events, samples=1)
    assert (recs["default/a"]["node"], recs["default/a"]["departedAt"]) == ("n1", 0.0)
    assert (recs["default/b"]["node"], recs["default/c"]["node"]) == ("n1", "n2")


def test_progress_is_told_without_turning_the_stretches_off():
    """run(progress=...) reports the steps done now and then, the last report the whole count;
    the quiet stretches stay on (a callback's steps would turn them off)."""
    from kschedcore.replay import quiet
    told, taken = [], []
    real = quiet.run

    def counting(replay, *args):
        before = replay.applied
        out = real(replay, *args)
        taken.append(replay.applied - before)
        return out
    cluster, events = _churning_events(6, 300, 2500, 3.0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(quiet, "run", counting)
        replay = Replay(Scheduler(tie_break="first"), cluster, events, arrival="timestamps")
        replay.run(progress=told.append)
    assert told == sorted(told) and len(told) >= 4 and told[-1] == replay.applied == replay.expected_steps
    assert sum(taken) > 1000


def test_until_applies_the_departures_its_last_cycles_make_by_then():
    """The last event before `until` is a pod whose cycle runs in the loop's last stretch; it
    leaves 0.2 s later, before `until`, so it departs (the event after `until` never comes)."""
    events = [ev("ADDED", pod("a", cpu="1", duration="200ms"), 1), ev("ADDED", pod("b", cpu="1"), 20)]
    replay, recs = run([node("n1")], events, until=10)
    assert (recs["default/a"]["boundAt"], recs["default/a"]["departedAt"]) == (1.0, 1.2)
    assert "default/b" not in recs and replay.clock.now() == 10


def test_a_windows_departures_leave_the_rows_as_removing_them_first_would():
    """Departing pods' usage taken off by the kernel between a window's arrivals, then the
    cache letting them go (Cache.remove_taken_off): the arrivals land where they would after
    the departures' own removals, and every row ends the same; a pod not placed is refused by
    name, and nothing changes."""
    from types import SimpleNamespace

    from kschedcore.errors import StateError
    from kschedcore.replay.windows import _decide

    def node(name):
        return {"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}

    def pod(name, cpu, node_name=None):
        spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}
        return {"kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                "spec": {**spec, **({"nodeName": node_name} if node_name else {})}}

    def cluster():
        sched = Scheduler([node(f"n{i}") for i in range(3)],
                          [pod("b0", "3", "n0"), pod("b1", "2", "n1"), pod("b2", "3500m", "n2")], tie_break="first")
        sched.schedule(pod("warm", "100m"))          # (the kernel bound to the table)
        return sched, next(iter(sched.profiles.values()))

    def table(sched):
        t = sched.cache.table
        rows = [t.row_of[f"n{i}"] for i in range(3)]
        return t.requested[rows].tolist(), t.nonzero[rows].tolist(), t.pod_count[rows].tolist()

    arriving = [pod("p0", "1"), pod("p1", "2"), pod("p2", "1")]    # (where each lands hangs on the departures before it)
    sched, fw = cluster()
    pods = [sched.parse_pod(p) for p in arriving]
    cache = sched.cache
    events = [(1.0, 0, pods[0], None), (2.0, None, None, cache.placement("default/b0")), (2.0, 1, pods[1], None),
              (3.0, None, None, cache.placement("default/b2")), (3.0, 2, pods[2], None)]
    rows = _decide(SimpleNamespace(sched=sched), fw, [fw.compile(p) for p in pods], events)   # (reads sim.sched)
    cache.place_written(pods, [cache.table.nodes[r].name for r in rows.tolist()])
    cache.remove_taken_off(["default/b0", "default/b2"])

    twin, _ = cluster()
    placed = [twin.schedule_one(arriving[0]).node]
    twin.remove_pod("default/b0")
    placed.append(twin.schedule_one(arriving[1]).node)
    twin.remove_pod("default/b2")
    placed.append(twin.schedule_one(arriving[2]).node)
    assert [cache.table.nodes[r].name for r in rows.tolist()] == placed == ["n1", "n0", "n2"]
    assert table(sched) == table(twin)
    before = table(sched)
    with pytest.raises(StateError, match="pod default/b1x"):
        cache.remove_taken_off(["default/b1", "default/b1x"])
    assert table(sched) == before and cache.placement("default/b1") is not None


def test_quiet_stretches_with_pods_that_have_resource_claims():
    """The parity workload `dra_a` three times over (pods with device claims from templates
    among plain ones), arriving 4 a second and each living 1-20 s: a claim pod's cycle and
    departure go the loop's way, its departure ending a window of plain pods (put back for the
    loop), and the records with and without quiet stretches are equal."""
    from kschedcore.replay import quiet, windows

    refused = []
    departing = windows._departing

    def spy(*args):
        out = departing(*args)
        refused.append(out is False)
        return out

    def records(stretches):
        cluster, events = _timed_parity("dra_a", seed=3, copies=3, longest=20, per_second=4.0)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(windows, "_departing", spy)
            if not stretches:
                mp.setattr(quiet, "may_run", lambda replay: False)
            replay = Replay(Scheduler(tie_break="first"), cluster, events, arrival="timestamps", samples=3)
            replay.run()
        recs = [r.as_dict() for r in replay.recorder.records.values()]
        return recs, replay.sim.cycles, sum(r["departedAt"] is not None and "claims" in r for r in recs)
    with_stretches = records(True)
    assert with_stretches == records(False)
    assert with_stretches[2] > 10 and any(refused)      # claim pods left; a window ended before one


def _all_at_zero(paths, bulk: bool, samples: int, taken: list):
    """A replay of `paths` with every pod at time 0 (arrival "all"): its records, samples and
    loop state, with or without the arrivals added to the queue together."""
    from kschedcore.replay import arrivals
    real = arrivals.at_once

    def counting(replay, order, pos):
        out = real(replay, order, pos) if bulk else pos
        taken.append(out - pos)
        return out
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(arrivals, "at_once", counting)
        replay = load_replay([PARITY / p for p in paths], Scheduler(tie_break="random", seed=5), arrival="all",
                             samples=samples)
        replay.run()
    sim, q = replay.sim, replay.sim.queue
    check_cache(sim)
    return ([r.as_dict() for r in replay.recorder.records.values()], replay.sampler.finish(), replay.applied,
            sim.cycles, q.scheduling_cycle, q.move_request_cycle, sorted(sim.bound.items()), replay.recorder.pending,
            replay.clock.now(), replay._changed_at, replay.sched.cache.table.requested.tolist())


@pytest.mark.parametrize("paths,samples", [
    (["mixed_medium.json.gz"], 2), (["mixed_medium.json.gz"], 7), (["preemption_a.json.gz"], 13),
    (["dra_a.json"], 5), (CHURN, 11), (["interpod_affinity.json"], 1)])
def test_arrivals_at_zero_added_together_leave_what_one_at_a_time_leaves(paths, samples):
    """arrival "all": the new pending pods at time 0 go to the queue in one call, up to the next
    sampled step, a pod with claims, a node or a bound pod: every record, sample, counter and
    table row is the one adding them one event at a time leaves."""
    taken, none = [], []
    assert _all_at_zero(paths, True, samples, taken) == _all_at_zero(paths, False, samples, none)
    assert sum(taken) > 0 and not any(none)
