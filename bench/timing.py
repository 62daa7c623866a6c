"""The timing loop the scheduling benchmarks share."""


def time_schedule_pending(benchmark, make_scheduler, rounds=5):
    """Times `schedule_pending()` on a fresh scheduler per round (built, untimed, by
    `make_scheduler`); records pods/s and ns per node evaluated; returns (results, median s)."""
    state = {}

    def setup():
        state["sched"] = make_scheduler()
        return (), {}

    def run():
        state["results"] = state["sched"].schedule_pending()

    benchmark.pedantic(run, setup=setup, rounds=rounds, iterations=1, warmup_rounds=1)
    results = state["results"]
    median = benchmark.stats.stats.median
    evaluated = sum(r.evaluated_nodes for r in results)
    benchmark.extra_info["pods"] = len(results)
    benchmark.extra_info["podsPerSecond"] = round(len(results) / median)
    if evaluated:
        benchmark.extra_info["nsPerNodeEvaluated"] = round(median * 1e9 / evaluated, 2)
    return results, median


def prepared(sched):
    """A scheduler with its pending pods compiled (so that the timed phase is scheduling)."""
    for pod in sched.pending:
        sched.prepare(pod)
    return sched
