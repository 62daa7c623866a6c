"""kschedcore.gym.SchedulingVectorEnv: a batch of environments in this process. Step by step
it returns what gymnasium's SyncVectorEnv over the same SchedulingEnvs returns (observations,
rewards, terminations, infos, autoreset); each sub-environment of a batch of clusters ends with
kube-scheduler's placements of its own cluster."""
import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="kschedcore.gym needs gymnasium (the gym extra)")

from kschedcore import Scheduler, ValidationError  # noqa: E402
from kschedcore.gym import ENV_ID, SchedulingEnv, SchedulingVectorEnv  # noqa: E402
from kschedcore.sources.files import workload_from_documents  # noqa: E402
from kschedcore.sources.generator import generate  # noqa: E402

from parity import DATA, load  # noqa: E402

EXACT = {"percentage_of_nodes_to_score": 100, "tie_break": "first"}


def _workload(name):
    return workload_from_documents([load(name)[0]], name)


def _same(a, b):
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def _lockstep(ours, theirs, episodes, seed=0):
    """Both vector environments driven by kube-scheduler's actions until `episodes` episodes
    ended in all; every return compared. Returns the steps taken."""
    obs, infos = ours.reset(seed=seed)
    obs2, infos2 = theirs.reset(seed=seed)
    assert _same(obs, obs2)
    ended = steps = 0
    while ended < episodes:
        actions = infos["kube_scheduler_action"].clip(0)      # -1 only in an ended episode's info
        obs, rewards, terminated, truncated, infos = ours.step(actions)
        obs2, rewards2, terminated2, truncated2, infos2 = theirs.step(actions)
        assert _same(obs, obs2), steps
        assert np.array_equal(rewards, rewards2) and np.array_equal(terminated, terminated2)
        assert not truncated.any() and not truncated2.any()
        for key in ("kube_scheduler_action", "_kube_scheduler_action", "action_mask", "pod"):
            assert np.array_equal(infos[key], infos2[key]), (steps, key)
        ended += int(terminated.sum())
        steps += 1
    return steps


@pytest.mark.parametrize("mode, name, options", [("batch", "taints", {}),
                                                 ("loop", "mixed_small.json.gz", {"arrival": "settle"})])
def test_steps_equal_sync_vector_envs_through_autoreset(mode, name, options):
    workload = _workload(name) if mode == "batch" else [str(DATA / name)]
    ours = SchedulingVectorEnv(workload, 2, mode=mode, **EXACT, **options)
    theirs = gymnasium.vector.SyncVectorEnv([lambda: SchedulingEnv(workload, mode=mode, **EXACT, **options)] * 2)
    _lockstep(ours, theirs, episodes=4)
    ours.close()
    theirs.close()


def test_a_batch_of_clusters_each_ends_with_its_own_placements():
    workloads = [generate(nodes=60, pods=150, seed=s) for s in (1, 2, 3)]
    envs = SchedulingVectorEnv(workloads=workloads, **EXACT)
    _, infos = envs.reset(seed=0)
    done = np.zeros(3, bool)
    placements: list = [None] * 3
    while not done.all():
        _, _, terminated, _, infos = envs.step(infos["kube_scheduler_action"].clip(0))
        for i in np.flatnonzero(terminated & ~done):     # (a dict in infos: gymnasium's per-key arrays)
            got = infos["placements"]
            placements[i] = {k: v[i] for k, v in got.items() if not k.startswith("_") and got["_" + k][i]}
        done |= terminated
    for w, got in zip(workloads, placements):
        assert got == {r.pod: r.node for r in Scheduler.from_workload(w, **EXACT).schedule_pending()}
    assert placements[0] != placements[1]


def test_random_ties_follow_the_seeds_per_sub_environment():
    w = _workload("taints")
    envs = SchedulingVectorEnv(w, 2, percentage_of_nodes_to_score=100, tie_break="random")
    _, a = envs.reset(seed=[7, 7])
    assert a["kube_scheduler_action"][0] == a["kube_scheduler_action"][1]
    single = SchedulingEnv(w, percentage_of_nodes_to_score=100, tie_break="random")
    for seed in (3, 4):
        _, infos = envs.reset(seed=3)           # sub-environments 3 and 4
        _, info = single.reset(seed=seed)
        assert infos["kube_scheduler_action"][seed - 3] == info["kube_scheduler_action"]


def test_make_vec_gives_the_in_process_batch_and_copy_false_gives_its_arrays():
    envs = gymnasium.make_vec(ENV_ID, num_envs=3, workload=_workload("taints"), **EXACT)
    assert isinstance(envs, SchedulingVectorEnv) and envs.num_envs == 3
    obs, infos = envs.reset(seed=0)
    assert obs in envs.observation_space and obs["requested"].shape[0] == 3
    views = SchedulingVectorEnv(_workload("taints"), 2, copy=False, **EXACT)
    first, infos = views.reset(seed=0)
    again, *_ = views.step(infos["kube_scheduler_action"])
    assert all(first[k] is again[k] for k in first)


@pytest.mark.parametrize("kwargs, match", [
    ({"num_envs": 0}, "num_envs"),
    ({"views": True}, "views"),
    ({"workloads": []}, "workloads"),
    ({}, "workload"),
    ({"num_envs": True}, "num_envs"),
    ({"num_envs": 2.0}, "num_envs"),
])
def test_bad_keywords_name_themselves(kwargs, match):
    if "workloads" not in kwargs and kwargs != {}:
        kwargs = {"workload": _workload("taints"), **kwargs}
    with pytest.raises(ValidationError, match=match):
        SchedulingVectorEnv(**kwargs)


@pytest.mark.parametrize("args, options, match", [
    ((), {"workloads": "taints.json"}, "workloads: must be a non-empty list"),
    ((), {"workloads": []}, "workloads: must be a non-empty list"),
    ((None, 0), {}, "num_envs: must be a positive integer"),
    ((None, 2), {"workloads": ["a", "b", "c"]}, "num_envs: 2 for 3 workloads"),
])
def test_bad_arguments_name_themselves(args, options, match):
    if args[:1] == (None,) and "workloads" not in options:
        args = (_workload("taints"),) + args[1:]
    with pytest.raises(ValidationError, match=match):
        SchedulingVectorEnv(*args, **options)


def test_num_envs_may_be_a_numpy_integer():
    envs = SchedulingVectorEnv(_workload("taints"), np.int64(2), **EXACT)
    assert envs.num_envs == 2 and type(envs.num_envs) is int


def test_clusters_of_other_shapes_and_bad_actions_are_refused():
    with pytest.raises(ValidationError, match=r"workloads\[1\].*one shape"):
        SchedulingVectorEnv(workloads=[generate(nodes=20, pods=10, seed=1), generate(nodes=30, pods=10, seed=1)])
    envs = SchedulingVectorEnv(_workload("taints"), 2, **EXACT)
    envs.reset(seed=0)
    with pytest.raises(ValidationError, match="actions"):
        envs.step([0, 0, 0])
    _, _, _, _, infos = envs.step([0, 0])
    before = [dict(env.episode.placements) for env in envs.envs]
    for bad in ([0, 10_000], [0, -1], [0, 1.5], ["a", 0]):
        with pytest.raises(ValidationError, match=r"actions"):
            envs.step(bad)
    assert [dict(env.episode.placements) for env in envs.envs] == before     # none of them stepped


def test_a_partial_reset_begins_only_the_masked_sub_environments():
    w = _workload("taints")
    ours = SchedulingVectorEnv(w, 2, **EXACT)
    theirs = gymnasium.vector.SyncVectorEnv([lambda: SchedulingEnv(w, **EXACT)] * 2)
    _, infos = ours.reset(seed=0)
    theirs.reset(seed=0)
    for _ in range(5):
        actions = infos["kube_scheduler_action"]
        _, _, _, _, infos = ours.step(actions)
        theirs.step(actions)
    mask = np.array([True, False])
    obs, infos = ours.reset(seed=1, options={"reset_mask": mask})
    obs2, infos2 = theirs.reset(seed=1, options={"reset_mask": mask.copy()})
    assert _same(obs, obs2) and np.array_equal(infos["_pod"], infos2["_pod"]) and list(infos["_pod"]) == [True, False]
    assert obs["pod_count"][0].sum() + 5 == obs["pod_count"][1].sum()     # only the first began again
    with pytest.raises(ValidationError, match="reset_mask"):
        ours.reset(options={"reset_mask": [1, 0]})
    with pytest.raises(ValidationError, match="options"):
        ours.reset(options={"something": 1})


def test_environments_leave_the_processes_heap_alone():
    """Neither mode fixes glibc's mmap threshold (a Simulation does when asked): it would make
    every later large NumPy allocation of the agent's process map and fault in its pages anew."""
    import subprocess
    import sys
    code = f"""
import kschedcore.gym
from kschedcore.gym import SchedulingEnv, SchedulingVectorEnv
from kschedcore.util.heap import mmap_threshold_fixed
from kschedcore import Scheduler
from kschedcore.scheduler.loop import Simulation
env = SchedulingEnv({str(DATA / "mixed_small.json.gz")!r}, mode="loop", arrival="settle")
_, info = env.reset(seed=0)
env.step(info["kube_scheduler_action"])
SchedulingVectorEnv({str(DATA / "mixed_small.json.gz")!r}, 2, mode="loop", arrival="settle").reset(seed=0)
assert not mmap_threshold_fixed()
Simulation(Scheduler())
assert not mmap_threshold_fixed()
Simulation(Scheduler(), fix_heap=True)
assert mmap_threshold_fixed()
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
