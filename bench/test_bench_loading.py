"""Reading cluster dumps: a 100,000-node `kind: List` (what `kubectl get nodes -o yaml` writes),
as block YAML and as JSON, through `kschedcore.load_workload` (objects/s in extra_info)."""
import json
import re

import pytest

import kschedcore
from kschedcore.sources.generator import generate

NODES = 100_000


PLAIN = re.compile(r"[A-Za-z][\w./-]*")
YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


def _scalar(v) -> str:
    """A plain scalar where YAML reads it back as that string (as kubectl writes), else quoted."""
    if isinstance(v, str) and PLAIN.fullmatch(v) and v.lower() not in YAML_WORDS:
        return v
    return json.dumps(v)


def _block_yaml(value, indent=0) -> list:
    """Block-style YAML lines, as kubectl writes them."""
    pad = " " * indent
    if isinstance(value, dict):
        lines = []
        for k, v in value.items():
            if isinstance(v, (dict, list)) and v:
                lines.append(f"{pad}{_scalar(k)}:")
                lines += _block_yaml(v, indent + 2)
            else:
                lines.append(f"{pad}{_scalar(k)}: {_scalar(v)}")
        return lines
    lines = []
    for item in value:
        inner = _block_yaml(item, indent + 2) if isinstance(item, (dict, list)) and item else \
            [f"{pad}  {_scalar(item)}"]
        lines.append(f"{pad}- {inner[0].lstrip()}")
        lines += inner[1:]
    return lines


@pytest.fixture(scope="module")
def node_dumps(tmp_path_factory):
    nodes = generate(nodes=NODES, pods=0).nodes
    doc = {"apiVersion": "v1", "kind": "List", "items": nodes}
    folder = tmp_path_factory.mktemp("dumps")
    yaml_path, json_path = folder / "nodes.yaml", folder / "nodes.json"
    yaml_path.write_text("\n".join(_block_yaml(doc)) + "\n")
    json_path.write_text(json.dumps(doc))
    return {"yaml": yaml_path, "json": json_path}


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_load_node_dump(benchmark, node_dumps, fmt):
    path = node_dumps[fmt]
    workload = benchmark.pedantic(kschedcore.load_workload, args=(path,), rounds=3, iterations=1)
    assert len(workload.nodes) == NODES
    benchmark.extra_info["objectsPerSecond"] = round(NODES / benchmark.stats.stats.median)
    benchmark.extra_info["megabytes"] = round(path.stat().st_size / 2**20, 1)
