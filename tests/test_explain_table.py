"""kschedcore explain's readable table: the runner-up is never the chosen node, and messages are
printed whole, on their own lines at the terminal's width (or as the last column with -o wide)."""
import io

import pytest
import yaml
from rich.console import Console

from kschedcore.cli import main
from kschedcore.output.report import explain_row, print_explain_table


def rec(node, scores, feasible=None, **extra):
    return {"pod": "default/p", "node": node, "numFeasible": feasible if feasible is not None else len(scores),
            "scores": {n: {"total": t} for n, t in scores.items()}, "fitError": None, **extra}


@pytest.mark.parametrize("node, scores, runner_up", [
    ("n2", {"n1": 10, "n2": 10, "n3": 5}, "n1 (10)"),      # a tie: the other best node
    ("n1", {"n1": 10, "n2": 10, "n3": 5}, "n2 (10)"),
    ("n3", {"n1": 7, "n2": 4, "n3": 9}, "n1 (7)"),        # the chosen scores best alone
    ("n1", {}, ""),                                        # one feasible node: nothing scored
])
def test_runner_up_is_the_best_other_node(node, scores, runner_up):
    row = explain_row(rec(node, scores, feasible=max(1, len(scores))))
    assert row[4] == runner_up and row[4].split(" ")[0] != node
    assert row[3] == (str(scores[node]) if scores else "-")


def test_an_unschedulable_pod_has_its_message_and_no_runner_up():
    row = explain_row(rec(None, {}, feasible=0, fitError="0/3 nodes are available: 3 Insufficient cpu.",
                          postFilterMessage="preemption: not helpful"))
    assert row[1:5] == ("unschedulable", "0", "-", "")
    assert row[5] == "0/3 nodes are available: 3 Insufficient cpu. preemption: not helpful"


@pytest.fixture
def workload(tmp_path):
    """Three identical nodes (score ties), two small pods and one that fits nowhere."""
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}"},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}} for i in range(3)]

    def pod(name, cpu):
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "team-a"},
                "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}}
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump_all(nodes + [pod("pod-000", "1"), pod("pod-001", "1"), pod("huge", "64")]))
    return path


def explain(capsys, monkeypatch, columns, *argv):
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["explain", *map(str, argv), "--tie-break", "first"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("columns", [100, 200])
def test_table_prints_each_message_whole_under_its_row(workload, capsys, monkeypatch, columns):
    out = explain(capsys, monkeypatch, columns, workload)
    lines = out.splitlines()
    assert lines[0].split() == ["pod", "node", "feasible", "score", "runner-up"]
    assert all(len(line) <= columns for line in lines) and not any(line.endswith(" ") for line in lines)
    for line in lines[1:3]:                 # scheduled: the runner-up is another node
        pod, node, feasible, score, runner_up, runner_score = line.split()
        assert feasible == "3" and runner_up != node and runner_score == f"({score})"
    assert lines[3].split() == ["team-a/huge", "unschedulable", "0", "-"]
    message = lines[4:]
    assert message and all(line.startswith("    ") for line in message)
    text = " ".join(line.strip() for line in message)
    assert text.startswith("0/3 nodes are available: 3 Insufficient cpu.") and "preemption: " in text
    assert (len(message) > 1) == (columns == 100)       # wrapped at 100 columns, one line at 200


def test_wide_puts_the_message_on_the_pods_line(workload, capsys, monkeypatch):
    out = explain(capsys, monkeypatch, 100, workload, "-o", "wide")
    lines = out.splitlines()
    assert lines[0].split() == ["pod", "node", "feasible", "score", "runner-up", "message"]
    assert len(lines) == 4 and "0/3 nodes are available: 3 Insufficient cpu." in lines[3]
    assert lines[3].index("0/3") == lines[0].index("message") and len(lines[3]) > 100


def test_table_at_a_given_console_width():
    console = Console(file=io.StringIO(), width=60)
    long = "word " * 40
    print_explain_table([rec(None, {}, feasible=0, error=long.strip())], console=console)
    lines = console.file.getvalue().splitlines()
    assert all(len(line) <= 60 for line in lines) and len(lines) > 3
    assert " ".join(line.strip() for line in lines[2:]) == long.strip()
