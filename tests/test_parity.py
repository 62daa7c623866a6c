"""kschedcore reproduces kube-scheduler v1.34.1's explain records on the node-local workloads."""
import io
import json

import pytest

from kschedcore import Scheduler
from kschedcore.cli import main
from kschedcore.sources.files import workload_from_documents

from parity import DATA, PARITY_WORKLOADS, diff, load


def _workload_path(name):
    path = DATA / f"{name}.json"
    return path if path.exists() else DATA / f"{name}.json.gz"


@pytest.mark.parametrize("name", PARITY_WORKLOADS)
def test_explain_records_match_kube_scheduler(name):
    workload, want = load(name)
    sched = Scheduler.from_workload(workload_from_documents([workload]),
                                    percentage_of_nodes_to_score=100, tie_break="first")
    got = sched.explain_pending()
    assert len(got) == len(want)
    mismatches = [f"{w['pod']}:\n{d}" for g, w in zip(got, want) if (d := diff(g, w))]
    assert not mismatches, f"{name}: {len(mismatches)} records differ; first:\n" + "\n".join(mismatches[:3])


@pytest.mark.parametrize("name", PARITY_WORKLOADS)
def test_cli_explain_jsonl_matches_kube_scheduler(name, capsys):
    _, want = load(name)
    rc = main(["explain", str(_workload_path(name)), "--percentage-of-nodes-to-score", "100",
               "--tie-break", "first", "-o", "jsonl"])
    assert rc == 0
    got = [json.loads(line) for line in io.StringIO(capsys.readouterr().out)]
    assert [g["pod"] for g in got] == [w["pod"] for w in want]
    mismatches = [f"{w['pod']}:\n{d}" for g, w in zip(got, want) if (d := diff(g, w))]
    assert not mismatches, "\n".join(mismatches[:3])


def test_parity_data_exercises_every_outcome():
    """Guards against a vacuous comparison: the data has rejections, scores and FitErrors."""
    seen = {"filter": 0, "scores": 0, "fitError": 0, "single": 0}
    for name in PARITY_WORKLOADS:
        for r in load(name)[1]:
            seen["filter"] += bool(r["filter"])
            seen["scores"] += bool(r["scores"])
            seen["fitError"] += bool(r["fitError"])
            seen["single"] += r["numFeasible"] == 1
    assert all(v > 0 for v in seen.values()), seen
