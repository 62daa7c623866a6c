"""kschedcore.gym: environment steps per second on the SchedulingBasic workload at 5,000 nodes
(10,000 pending pods, 100% of nodes scored so that the action mask covers every node), with
observations: copies (the default) or read-only views of the node table. Timed: one episode of
kube-scheduler's actions, 5,000 steps, from reset (the fork's revert) to the last step -- in
batch mode, and in loop mode (the queue and binding on the virtual clock, every pod arriving
at time 0).
"""
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="kschedcore.gym needs gymnasium (the gym extra)")

from kschedcore.gym import SchedulingEnv  # noqa: E402

from workloads import basic  # noqa: E402

STEPS = 5000


@pytest.mark.parametrize("mode, views", [("batch", False), ("batch", True), ("loop", True)],
                         ids=["batch-copies", "batch-views", "loop-views"])
def test_gym_steps(benchmark, mode, views):
    options = {"arrival": "all"} if mode == "loop" else {}
    env = SchedulingEnv(basic(5000), percentage_of_nodes_to_score=100, tie_break="first", mode=mode, views=views,
                        **options)

    def episode():
        _, info = env.reset(seed=0)
        for _ in range(STEPS):
            _, _, done, _, info = env.step(info["kube_scheduler_action"])
            assert not done

    benchmark.pedantic(episode, rounds=3, iterations=1, warmup_rounds=1)
    benchmark.extra_info["stepsPerSecond"] = round(STEPS / benchmark.stats.stats.median)
    env.close()


VECTOR_ENVS, VECTOR_STEPS = 4, 2500


@pytest.mark.parametrize("vector", ["sync", "in-process"])
def test_gym_vector_steps(benchmark, vector):
    """Four sub-environments (basic 5,000 each, batch mode, observations copied): gymnasium's
    SyncVectorEnv, which copies each sub-environment's whole node table into the batch every
    step, against SchedulingVectorEnv, which writes the rows that changed. Timed: reset, then
    2,500 vector steps (10,000 decisions)."""
    from kschedcore.gym import SchedulingVectorEnv

    options = {"percentage_of_nodes_to_score": 100, "tie_break": "first"}
    workload = basic(5000)
    if vector == "sync":
        envs = gymnasium.vector.SyncVectorEnv([lambda: SchedulingEnv(workload, **options)] * VECTOR_ENVS)
    else:
        envs = SchedulingVectorEnv(workload, VECTOR_ENVS, **options)

    def steps():
        _, infos = envs.reset(seed=0)
        for _ in range(VECTOR_STEPS):
            _, _, terminated, _, infos = envs.step(infos["kube_scheduler_action"])
            assert not terminated.any()

    benchmark.pedantic(steps, rounds=3, iterations=1, warmup_rounds=1)
    benchmark.extra_info["stepsPerSecond"] = round(VECTOR_ENVS * VECTOR_STEPS / benchmark.stats.stats.median)
    envs.close()
