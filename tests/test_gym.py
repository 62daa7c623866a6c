"""kschedcore.gym: the Gymnasium environment over kube-scheduler's decisions. Following
`kube_scheduler_action` reproduces kube-scheduler v1.34.1's recorded decisions and kschedcore's
own schedule_pending; the action mask is kube-scheduler's Filter verdicts; driven by the real
scheduler's choices, the episode ends with the real scheduler's placements."""
import gc
import gzip
import json
import subprocess
import sys
import threading

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="kschedcore.gym needs gymnasium (the gym extra)")

from gymnasium.utils.env_checker import check_env  # noqa: E402

import kschedcore.gym  # noqa: E402,F401  (registers the environment)
from kschedcore import Scheduler, UnsupportedError, ValidationError, load_workload  # noqa: E402
from kschedcore.errors import StateError  # noqa: E402
from kschedcore.gym import ENV_ID, SchedulingEnv  # noqa: E402
from kschedcore.replay import load_replay  # noqa: E402
from kschedcore.sources.files import workload_from_documents  # noqa: E402
from kschedcore.sources.generator import generate  # noqa: E402

from parity import DATA, PARITY_WORKLOADS, load  # noqa: E402

EXACT = {"percentage_of_nodes_to_score": 100, "tie_break": "first"}   # the parity records' settings


def _workload(name):
    return workload_from_documents([load(name)[0]], name)


def _run(env, policy, seed=None):
    """An episode: policy(info) -> action at each step. Returns (the infos of every decision,
    rewards, the last info)."""
    _, info = env.reset(seed=seed)
    infos, rewards = [], []
    while "placements" not in info:
        infos.append(info)
        _, reward, terminated, truncated, info = env.step(policy(info))
        rewards.append(reward)
        assert not truncated and terminated == ("placements" in info)
    return infos, rewards, info


def _kube(info):
    return info["kube_scheduler_action"]


def _feasible(env, info):
    return {env.node_names[i] for i in np.flatnonzero(info["action_mask"])}


# ---- the Gymnasium API ---------------------------------------------------------------------------
def test_check_env_passes():
    env = SchedulingEnv(_workload("mixed_small"), **EXACT)
    check_env(env, skip_render_check=True)


def test_check_env_passes_with_random_ties_through_make():
    env = gymnasium.make(ENV_ID, workload=str(DATA / "taints.json"))
    check_env(env.unwrapped)
    obs, info = env.reset(seed=3)
    assert obs in env.observation_space and info["pod"]


def test_sync_vector_env_runs_episodes_with_autoreset():
    envs = gymnasium.vector.SyncVectorEnv([lambda: SchedulingEnv(_workload("taints"), **EXACT)] * 2)
    _, infos = envs.reset(seed=0)
    episodes = steps = 0
    while episodes < 2:
        actions = infos["kube_scheduler_action"].clip(0)     # -1 only in a finished sub-env's info
        _, rewards, terminated, _, infos = envs.step(actions)
        assert rewards.shape == (2,)
        episodes += int(terminated.sum())
        steps += 1
    assert steps == 178 and episodes == 2      # taints: 178 decisions (22 pods fit nowhere)
    envs.close()


# ---- kube-scheduler's decisions ------------------------------------------------------------------
@pytest.mark.parametrize("name", PARITY_WORKLOADS)
def test_kube_scheduler_actions_reproduce_its_placements(name):
    workload, records = load(name)
    env = SchedulingEnv(_workload(name), **EXACT)
    infos, _, last = _run(env, _kube)
    placements = last["placements"]
    assert _run(env, _kube)[2]["placements"] == placements        # the next episode, from the fork's revert
    # kschedcore's own batch scheduling
    sched = Scheduler.from_workload(_workload(name), **EXACT)
    assert placements == {r.pod: r.node for r in sched.schedule_pending()}
    # kube-scheduler v1.34.1's recorded decisions (a pre-bound pod is bound as is, not decided)
    assert {r["pod"]: r["node"] for r in records if not r.get("preBound")} == \
        {k: v for k, v in placements.items() if k in {r["pod"] for r in records if not r.get("preBound")}}
    assert [i["pod"] for i in infos] == [r["pod"] for r in records if r["node"] and not r.get("preBound")]


@pytest.mark.parametrize("name", PARITY_WORKLOADS)
def test_action_mask_is_kube_schedulers_filter_verdicts(name):
    """Each decision's mask is the nodes the recorded kube-scheduler cycle found feasible (up to
    a pre-bound pod the recording left off its node, where the states part), and always the
    nodes kschedcore's explain finds feasible on the same state."""
    workload, records = load(name)
    env = SchedulingEnv(_workload(name), **EXACT)
    infos, _, last = _run(env, _kube)
    parted = next((i for i, r in enumerate(records) if r.get("preBound") and not r["node"]), len(records))
    by_pod = {r["pod"]: r for r in records[:parted]}
    ref = Scheduler.from_workload(_workload(name), **EXACT)
    pending, ref.pending = ref.pending, []
    decided = {i["pod"]: i for i in infos}
    compared = 0
    for pod in pending:
        info = decided.get(pod.key)
        if info is not None:
            rec = ref.explain(pod)
            assert _feasible(env, info) == {n for n in env.node_names if n not in rec["filter"]}, pod.key
            assert env.node_names[info["kube_scheduler_action"]] == rec["node"]
            if pod.key in by_pod:
                assert _feasible(env, info) == {n for n in env.node_names if n not in by_pod[pod.key]["filter"]}
                compared += 1
        if pod.node_name:               # pre-bound: joins its node (maybe one the cluster lacks)
            ref.add_pod(pod)
        elif last["placements"][pod.key]:
            ref.assume(pod, last["placements"][pod.key])
    assert compared >= min(len(infos), parted) // 2


@pytest.mark.parametrize("name", PARITY_WORKLOADS)
def test_real_schedulers_choices_end_in_its_placements(name):
    """Driven by the real kube-scheduler's choices (random among tied nodes), every choice is in
    the mask, and the pods it could not place never become a step."""
    with gzip.open(DATA / f"{name}.realsched.trace.jsonl.gz", "rt") as f:
        real = {t["pod"]: t["node"] or None for t in map(json.loads, f)}
    env = SchedulingEnv(_workload(name), **EXACT)
    index = {n: i for i, n in enumerate(env.node_names)}

    def follow(info):
        node = real[info["pod"]]
        assert node is not None and info["action_mask"][index[node]] == 1, info["pod"]
        return index[node]

    _, rewards, last = _run(env, follow)
    assert last["placements"] == real
    assert min(rewards) >= 0          # no infeasible action


@pytest.mark.parametrize("percentage", [100, 30, 0])
@pytest.mark.parametrize("name", ["dra_a.json", "preemption_a.json.gz", "generated"])
def test_kube_scheduler_actions_equal_schedule_pending(name, percentage):
    """Claims and devices, priorities and PodDisruptionBudgets (PostFilter runs, as in a batch),
    a generated cluster; below 100% of nodes the rotating start index is kube-scheduler's too."""
    workload = generate(nodes=200, pods=600, seed=3) if name == "generated" else load_workload(DATA / name)
    options = {"percentage_of_nodes_to_score": percentage, "tie_break": "first"}
    env = SchedulingEnv(workload, **options)
    infos, _, last = _run(env, _kube)
    assert all(i["action_mask"][_kube(i)] == 1 for i in infos)
    if percentage < 100:            # the mask: the feasible nodes among those the cycle examined
        assert any(i["action_mask"].sum() < len(env.node_names) for i in infos)
    assert last["placements"] == {r.pod: r.node for r in Scheduler.from_workload(workload, **options).schedule_pending()}


def test_other_choices_change_what_kube_scheduler_decides_next():
    """An agent's own choices (the last feasible node) are assumed: kube-scheduler's next
    decision is the one a Scheduler with the same placements makes."""
    env = SchedulingEnv(_workload("resources"), **EXACT)
    ref = Scheduler.from_workload(_workload("resources"), **EXACT)
    pending, ref.pending = ref.pending, []
    infos, _, last = _run(env, lambda info: int(np.flatnonzero(info["action_mask"])[-1]))
    decided = {i["pod"]: i for i in infos}
    differs = 0
    for pod in pending:
        result = ref.schedule(pod)
        placed = last["placements"][pod.key]
        assert (result.node is None) == (pod.key not in decided), pod.key
        if pod.key in decided:
            assert env.node_names[decided[pod.key]["kube_scheduler_action"]] == result.node
            differs += placed != result.node
            ref.assume(pod, placed)
    assert differs > 0


# ---- episodes, actions and rewards ---------------------------------------------------------------
def test_reset_reverts_the_episode():
    env = SchedulingEnv(_workload("topology_spread"), **EXACT)
    before = env.scheduler.utilization()
    _, _, first = _run(env, lambda info: int(np.flatnonzero(info["action_mask"])[0]))
    assert env.scheduler.utilization() != before
    env.reset()
    assert env.scheduler.utilization() == before
    env.step(_kube(env.reset()[1]))            # a reset in mid-episode too
    _, _, again = _run(env, lambda info: int(np.flatnonzero(info["action_mask"])[0]))
    assert again["placements"] == first["placements"]


def test_random_ties_follow_the_reset_seed():
    env = SchedulingEnv(_workload("images_default_spread"), tie_break="random")
    runs = [_run(env, _kube, seed=s)[2]["placements"] for s in (1, 1, 2)]
    assert runs[0] == runs[1] and runs[0] != runs[2]


def test_infeasible_action_leaves_the_pod_unschedulable():
    env = SchedulingEnv(_workload("taints"), **EXACT, invalid_action_reward=-5)
    _, info = env.reset()
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    used = env.scheduler.utilization()
    _, reward, terminated, _, nxt = env.step(bad)
    assert reward == -5 and not terminated and nxt["pod"] != info["pod"]
    assert env.scheduler.utilization() == used
    _, _, last = _run_on(env, nxt)
    assert last["placements"][info["pod"]] is None
    assert info["pod"] in {p.key for p in env.scheduler.pending}


def _run_on(env, info):
    rewards = []
    while "placements" not in info:
        _, reward, _, _, info = env.step(_kube(info))
        rewards.append(reward)
    return None, rewards, info


@pytest.mark.parametrize("action", [-1, 60, 1.5, "n1", None])
def test_action_out_of_range_is_refused(action):
    env = SchedulingEnv(_workload("taints"), **EXACT)
    env.reset()
    with pytest.raises(ValidationError, match="action"):
        env.step(action)


def test_step_after_the_last_decision_is_refused():
    env = SchedulingEnv(_workload("taints"), **EXACT)
    _run(env, _kube)
    with pytest.raises(StateError, match="reset"):
        env.step(0)


@pytest.mark.parametrize("options, match", [({"mode": "queue"}, "mode"), ({"reward": "packing"}, "reward"),
                                            ({"workload": 3}, "workload"), ({"config": 3}, "config"),
                                            ({"invalid_action_reward": "x"}, "invalid_action_reward: must be a number"),
                                            ({"percentage_of_nodes_to_score": "50"}, "percentageOfNodesToScore"),
                                            ({"seed": 1}, r"seed: the random tie-break is seeded by reset\(seed=...\)"),
                                            ({"bogus": 1}, r"bogus: no such option \(the Scheduler's: ")])
def test_bad_arguments_name_themselves(options, match):
    with pytest.raises(ValidationError, match=match):
        SchedulingEnv(**{"workload": _workload("taints"), **options})


def test_arrival_is_a_loop_mode_option():
    with pytest.raises(ValidationError, match="arrival"):
        SchedulingEnv(_workload("taints"), arrival="settle")
    with pytest.raises(ValidationError, match="arrival"):
        SchedulingEnv(str(DATA / "taints.json"), mode="loop", arrival="later")


# ---- loop mode: kube-scheduler's queue, binding and events on the virtual clock ---------------------
def _replayed(files, arrival, **options):
    """A Replay's placements: kschedcore's loop without the environment."""
    replay = load_replay(files, Scheduler(**options), arrival=arrival)
    replay.run()
    return {key: rec.node for key, rec in replay.recorder.records.items()}


def test_loop_mode_passes_check_env():
    check_env(SchedulingEnv(str(DATA / "taints.json"), mode="loop", arrival="all"), skip_render_check=True)


def test_loop_mode_in_a_vector_env():
    envs = gymnasium.vector.SyncVectorEnv(
        [lambda: SchedulingEnv([DATA / "taints.json"], mode="loop", arrival="all", **EXACT)] * 2)
    _, infos = envs.reset(seed=0)
    ended = 0
    for _ in range(200):        # past the end of the first episodes: autoreset
        _, rewards, terminated, _, infos = envs.step(infos["kube_scheduler_action"].clip(0))
        ended += int(terminated.sum())
    assert ended == 2 and (infos["kube_scheduler_action"] >= 0).all()
    envs.close()


@pytest.mark.parametrize("name, arrival", [("preemption_a.json.gz", "settle"), ("mixed_small.json.gz", "settle"),
                                           ("topology_spread.json", "all"), ("interpod_affinity.json", "all")])
def test_loop_mode_kube_scheduler_actions_reproduce_the_loop(name, arrival):
    files = [DATA / name]
    env = SchedulingEnv(files, mode="loop", arrival=arrival, **EXACT)
    infos, _, last = _run(env, _kube)
    assert last["placements"] == _replayed(files, arrival, **EXACT)
    assert len(infos) == sum(node is not None for node in last["placements"].values()) or name.startswith("preemption")
    _, _, again = _run(env, _kube)              # the next episode, from the fork's revert
    assert again["placements"] == last["placements"]


def test_loop_mode_preemption_ends_as_the_real_scheduler_ended_it():
    """Pods arriving one at a time (each once the loop settled), preemption acted on: victims
    evicted, the preemptor nominated and then placed -- as kube-scheduler v1.34.1 did."""
    env = SchedulingEnv([DATA / "preemption_a.json.gz"], mode="loop", arrival="settle", **EXACT)
    infos, _, last = _run(env, _kube)
    with gzip.open(DATA / "preemption_a.trace.jsonl.gz", "rt") as f:
        trace = [json.loads(line) for line in f]
    assert {t["pod"]: last["placements"][t["pod"]] or "" for t in trace} == {t["pod"]: t["node"] for t in trace}
    assert any(t["victims"] for t in trace)
    preemptors = {t["pod"] for t in trace if t["victims"]}
    assert {i["pod"] for i in infos} >= preemptors       # placed after their victims left


def test_loop_mode_requeues_a_pod_whose_action_was_infeasible():
    env = SchedulingEnv([DATA / "taints.json"], mode="loop", arrival="all", **EXACT)
    _, info = env.reset()
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _, reward, _, _, nxt = env.step(bad)
    assert reward == -1
    infos, _, last = _run_on_collect(env, nxt)
    assert info["pod"] in [i["pod"] for i in infos]          # popped again after its backoff
    assert last["placements"][info["pod"]] is not None


def _run_on_collect(env, info):
    infos, rewards = [], []
    while "placements" not in info:
        infos.append(info)
        _, reward, _, _, info = env.step(_kube(info))
        rewards.append(reward)
    return infos, rewards, info


def test_loop_mode_reset_unwinds_the_episode_before():
    """The loop waits inside a cycle for the agent's node; reset unwinds it (its replay's
    context managers closed) before the next episode, and close unwinds the last."""
    env = SchedulingEnv([DATA / "taints.json"], mode="loop", arrival="all", **EXACT)
    env.reset()
    first = env.episode
    assert not first.loop.dead and env.scheduler.attempt == first.attempt
    env.step(_kube(env.reset()[1]))
    second = env.episode
    assert first.loop.dead and not second.loop.dead and threading.active_count() >= 1
    env.close()
    assert second.loop.dead and env.scheduler.attempt != second.attempt


def test_loop_mode_an_error_in_the_loop_is_raised_by_step():
    env = SchedulingEnv([DATA / "taints.json"], mode="loop", arrival="all", **EXACT)
    _, info = env.reset()
    ep = env.episode
    cycle = ep.cycle

    def broken(*args):
        ep.cycle = cycle
        raise RuntimeError("the cycle broke")
    ep.cycle = broken                   # the loop's next cycle raises (once)
    threshold, frozen = gc.get_threshold(), gc.get_freeze_count()
    with pytest.raises(RuntimeError, match="the cycle broke"):
        env.step(info["kube_scheduler_action"])
    assert ep.loop.dead and env.scheduler.attempt == cycle      # the Scheduler's own cycle back
    assert (gc.get_threshold(), gc.get_freeze_count()) == (threshold, frozen)   # the collector as it was
    _, info = env.reset()               # a new episode runs as before
    assert info["pod"] is not None and not env.episode.loop.dead
    env.close()


def test_loop_mode_churn_ends_as_the_real_scheduler_ended_it():
    """Pods arriving and leaving, nodes cordoned, uncordoned and added over time: the nodes the
    timeline adds are on the node axis from the start (not in the cluster yet: mask 0, zero
    columns), and kube-scheduler's actions end as kube-scheduler v1.34.1 ended the stream."""
    files = [DATA / "replay_churn_a.cluster.json.gz", DATA / "replay_churn_a.events.jsonl.gz"]
    env = SchedulingEnv(files, mode="loop", arrival="settle", **EXACT)
    obs, info = env.reset()
    added = [i for i, n in enumerate(env.node_names) if n not in env.scheduler.node_names]
    assert len(added) == 3 and info["action_mask"][added].sum() == 0 and obs["allocatable"][added].sum() == 0
    infos, _, last = _run(env, _kube)
    assert any(i["action_mask"][added].any() for i in infos)          # they joined and took pods
    times = [i["time"] for i in infos]
    assert times == sorted(times)
    with gzip.open(DATA / "replay_churn_a.trace.jsonl.gz", "rt") as f:
        trace = [json.loads(line) for line in f]
    assert {t["pod"]: last["placements"][t["pod"]] or "" for t in trace} == {t["pod"]: t["node"] for t in trace}
    assert last["placements"] == _replayed(files, "settle", **EXACT)


def test_loop_mode_left_suspended_keeps_nothing_frozen():
    """An episode waits for the agent inside its replay: the collector must still see every
    object (a replay's gc.freeze() held there would keep the process frozen for good once the
    environment is dropped without close), and a dropped environment is collected."""
    import weakref
    if gc.get_freeze_count():
        pytest.skip("the process froze objects itself")
    env = SchedulingEnv([DATA / "taints.json"], mode="loop", arrival="all", **EXACT)
    _, info = env.reset()
    env.step(info["kube_scheduler_action"])
    assert gc.get_freeze_count() == 0
    episode = weakref.ref(env.episode)
    del env, info
    gc.collect()
    assert episode() is None


def test_loop_mode_episodes_after_the_first_reuse_the_parsed_timeline():
    """Pods arriving and leaving, nodes cordoned and added: the second episode, on the pods and
    nodes the first parsed (not parsed again), makes the same decisions."""
    files = [DATA / "replay_churn_a.cluster.json.gz", DATA / "replay_churn_a.events.jsonl.gz"]
    env = SchedulingEnv(files, mode="loop", arrival="settle", **EXACT)
    first, _, last1 = _run(env, _kube)
    parsed = env.episode.replay.parsed
    second, _, last2 = _run(env, _kube)
    assert env.episode.replay.parsed is parsed
    assert [i["pod"] for i in first] == [i["pod"] for i in second]
    assert all((a["action_mask"] == b["action_mask"]).all() for a, b in zip(first, second))
    assert last1["placements"] == last2["placements"]
    env.close()


def test_a_replay_takes_only_its_own_timeline_parsed():
    from kschedcore.replay import Replay, load_replay
    replay = load_replay([DATA / "replay_churn_a.cluster.json.gz", DATA / "replay_churn_a.events.jsonl.gz"])
    parsed = replay.parsed_timeline()
    with pytest.raises(StateError, match="parsed"):
        Replay(replay.sched, [], replay.timeline[1:], arrival=replay.arrival, parsed=parsed)
    with pytest.raises(StateError, match="parsed"):
        Replay(replay.sched, [], replay.timeline, arrival="all", parsed=parsed)
    again = Replay(replay.sched, [], replay.timeline, arrival=replay.arrival, parsed=parsed)
    assert again.parsed is replay.parsed and again.times is replay.times


def test_loop_mode_refuses_timelines_of_other_objects(tmp_path):
    stream = tmp_path / "events.jsonl"
    stream.write_text(json.dumps({"type": "ADDED", "object": {"apiVersion": "v1", "kind": "Service",
                                                              "metadata": {"name": "web", "namespace": "default"},
                                                              "spec": {"selector": {"app": "web"}}}}) + "\n")
    with pytest.raises(UnsupportedError, match="Service"):
        SchedulingEnv([DATA / "taints.json", stream], mode="loop")


def test_rewards():
    calls = []

    def reward(env, pod, node):
        calls.append((pod.key, node))
        return 2.0

    env = SchedulingEnv(_workload("resources"), **EXACT, reward=reward)
    infos, rewards, last = _run(env, _kube)
    assert rewards == [2.0] * len(infos)
    assert calls == [(i["pod"], last["placements"][i["pod"]]) for i in infos]
    _, imitation, _ = _run(SchedulingEnv(_workload("resources"), **EXACT, reward="kube_scheduler"), _kube)
    assert set(imitation) == {1.0}
    _, packing, _ = _run(SchedulingEnv(_workload("resources"), **EXACT), _kube)
    assert all(0 <= r <= 1 for r in packing) and max(packing) > 0
    _, frag, _ = _run(SchedulingEnv(_workload("resources"), **EXACT, reward="fragmentation"), _kube)
    assert all(-1 <= r <= 0 for r in frag) and min(frag) < 0


# ---- observations --------------------------------------------------------------------------------
def test_observation_shows_the_node_table_and_the_pod():
    env = SchedulingEnv(_workload("resources"), **EXACT)
    obs, info = env.reset()
    assert env.resource_names[:2] == ["cpu", "memory"]
    while obs["pod_requests"].sum() == 0:       # a pod that requests something
        obs, _, _, _, info = env.step(_kube(info))
    row = _kube(info)
    obs2, *_ = env.step(row)
    added = obs2["requested"] - obs["requested"]
    assert (added[row] == obs["pod_requests"]).all() and added.sum() == obs["pod_requests"].sum() > 0
    assert obs2["pod_count"][row] == obs["pod_count"][row] + 1
    assert (obs["allocatable"] > 0).any() and obs["pod_priority"].shape == (1,)
    obs["requested"][0, 0] = -1                 # a copy: the table is not changed
    assert env.scheduler.table.requested[0, 0] >= 0


def test_views_are_read_only_and_follow_the_table():
    env = SchedulingEnv(_workload("resources"), **EXACT, views=True)
    obs, info = env.reset()
    while obs["pod_requests"].sum() == 0:
        obs, _, _, _, info = env.step(_kube(info))
    before = obs["requested"].copy()
    env.step(_kube(info))
    assert (obs["requested"] != before).any()       # changed in place by the step
    with pytest.raises(ValueError):
        obs["requested"][0, 0] = 1


def test_without_gymnasium_the_import_says_what_to_install():
    code = "import sys; sys.modules['gymnasium'] = None; import kschedcore.gym"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode != 0 and "pip install 'kschedcore[gym]'" in out.stderr
