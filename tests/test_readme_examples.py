"""The examples users copy run as written: the README's and the guides' Python snippets (on
small files made here, or on examples/tour), and the README's commands print what it shows."""
import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kschedcore import Scheduler

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "guide"


def section(page: Path, heading: str) -> str:
    return page.read_text().split(heading + "\n", 1)[1]


def block_after(page: Path, heading: str, lang: str = "python") -> str:
    """The first ```lang block after the heading on the page."""
    return re.search(rf"```{lang}\n(.*?)```", section(page, heading), re.S).group(1)


def output_after(page: Path, heading: str) -> str:
    """The plain ``` block that follows the first ```python block after the heading."""
    return re.search(r"```python\n.*?```\s*```\n(.*?)```", section(page, heading), re.S).group(1)


def node(i):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}", "labels": {}},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


def pod(name, cpu, node_name=None, owner=None):
    meta = {"name": name, "namespace": "shop"}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "uid": owner}]
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


@pytest.fixture
def in_tmp(tmp_path):
    old = os.getcwd()
    os.chdir(tmp_path)
    yield tmp_path
    os.chdir(old)


def test_capacity_example(in_tmp):
    docs = [node(i) for i in range(4)] + [pod(f"web-5d8f-{i}", "1", f"node-{i % 4}", "web-5d8f") for i in range(8)]
    (in_tmp / "dump.yaml").write_text(yaml.safe_dump_all(docs))
    for name, cpu in (("pod", "500m"), ("web", "1"), ("db", "2")):
        (in_tmp / f"{name}.yaml").write_text(yaml.safe_dump(pod(name, cpu)))
    scope = {"node_dict": node("new")}
    exec(block_after(GUIDE / "capacity.md", "## Capacity"), scope)
    assert scope["est"].instances() == 48 and scope["est"].stop_reason.startswith("Unschedulable: 0/4 nodes")
    assert scope["need"].nodes is not None and scope["need"].tried[scope["need"].nodes]


def test_fork_example():
    sched = Scheduler([node(i) for i in range(10)], [pod(f"web-5d8f-{i}", "1", f"node-{7 if i < 3 else i}", "web-5d8f")
                                                   for i in range(6)])
    exec(block_after(GUIDE / "capacity.md", "## What-if forks"), {"sched": sched})
    web = [pl for pl in sched.cache.placements() if pl.pod.name.startswith("web")]
    assert len(web) == 40          # committed: scaled to 40 and scheduled


def _default_pod(name, gated=False, node_name=None):
    p = pod(name, "500m", node_name)
    p["metadata"]["namespace"] = "default"
    if gated:
        p["spec"]["schedulingGates"] = [{"name": "wait"}]
    return p


def test_python_api_example(in_tmp):
    nodes = [node(i) for i in range(8)]
    (in_tmp / "dump.yaml").write_text(yaml.safe_dump_all(nodes))
    scope = {"nodes": nodes, "bound_pods": [_default_pod("db-0", node_name="node-0")],
             "pod": _default_pod("web-0"), "other_pod": _default_pod("web-2"), "node": node(9),
             "bound_pod": _default_pod("web-1", node_name="node-1")}
    exec(block_after(GUIDE / "python-api.md", "## The Scheduler"), scope)
    assert scope["results"][0].node and scope["sched"].cache.table.row_of.keys() == {f"node-{i}" for i in range(8)}


def test_loop_example():
    import kschedcore
    scope = {"kschedcore": kschedcore, "nodes": [node(i) for i in range(3)], "node": node(3),
             "pod": _default_pod("web-1", gated=True), "ungated_pod": _default_pod("web-1")}
    code = block_after(GUIDE / "scheduling-loop.md", "## The scheduling loop")
    exec(code, scope)
    assert scope["outcomes"] == [] and scope["sim"].pods == {}   # its one pod was deleted
    code = code.replace('sim.delete_pod("default/web-1")', "pass")
    exec(code, scope)
    [outcome] = scope["outcomes"]
    assert outcome.pod == "default/web-1" and outcome.node in {f"node-{i}" for i in range(4)}


@pytest.mark.parametrize("page, heading", [(README, "## Python API"),
                                           (ROOT / "docs" / "getting-started.md", "## From Python")])
def test_python_example_prints_what_the_page_shows(page, heading, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(block_after(page, heading), {})
    assert out.getvalue() == output_after(page, heading)


BAD_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1.2.3"}}}]}}


def readme_commands():
    """(command, expected output lines) for every `$ kschedcore ...` line of the README's blocks."""
    for block in re.findall(r"```\n(\$ .*?)```", README.read_text(), re.S):
        for m in re.finditer(r"^\$ (.*)\n((?:(?!\$ ).*\n)*)", block, re.M):
            yield m.group(1), m.group(2).splitlines()


def run_shell(command: str, cwd: Path) -> subprocess.CompletedProcess:
    python = shlex.quote(sys.executable)
    command = re.sub(r"(^|\| |&& )kschedcore ", rf"\1{python} -m kschedcore ", command)
    env = dict(os.environ, COLUMNS="110", PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run(command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_the_readme_shows_its_commands():
    assert len(list(readme_commands())) >= 9


@pytest.mark.parametrize("command, expected", list(readme_commands()), ids=lambda v: v if isinstance(v, str) else "")
def test_readme_command_prints_what_the_readme_shows(command, expected, tmp_path):
    if "report" in command.split()[:2]:
        pytest.importorskip("matplotlib")
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(BAD_POD))
    if " report " in f" {command} ":
        assert run_shell("kschedcore replay examples/tour/cluster.yaml examples/tour/events.jsonl -o json > run.json",
                         tmp_path).returncode == 0
    run = run_shell(command, tmp_path)
    got = [line.rstrip() for line in (run.stdout + run.stderr).splitlines()]
    if expected and expected[-1] == "...":           # the output's first lines are shown
        expected = expected[:-1]
        got = got[:len(expected)]
    assert got == [line.rstrip() for line in expected], f"exit status {run.returncode}"
