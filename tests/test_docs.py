"""The documentation: every public name of the API reference has a docstring and a place on the
reference pages, and the site builds with `mkdocs build --strict` (when MkDocs is installed)."""
import ast
import dataclasses
import importlib
import importlib.util
import inspect
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
REFERENCE = ROOT / "docs" / "reference"

#: the modules the API reference documents; each one's `__all__` is its public names
MODULES = (
    "kschedcore", "kschedcore.errors", "kschedcore.scheduler", "kschedcore.scheduler.loop",
    "kschedcore.scheduler.live", "kschedcore.capacity", "kschedcore.replay", "kschedcore.sweep",
    "kschedcore.perf", "kschedcore.testing", "kschedcore.custom", "kschedcore.framework.interface",
    "kschedcore.framework.status", "kschedcore.framework.registry", "kschedcore.plugins.coscheduling",
    "kschedcore.backend.cache", "kschedcore.backend.queue", "kschedcore.reference", "kschedcore.extender",
    *(("kschedcore.gym",) if importlib.util.find_spec("gymnasium") else ()),    # the gym extra
    "kschedcore.live",
)


def module_path(name: str) -> Path:
    base = SRC.joinpath(*name.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def attribute_docstring(module: str, name: str, seen=()) -> str | None:
    """The string literal right after `name = ...` at the top level of the module that assigns
    it (following `from .x import name` re-exports), as MkDocs' Python handler reads it."""
    tree = ast.parse(module_path(module).read_text())
    for i, node in enumerate(tree.body):
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            after = tree.body[i + 1] if i + 1 < len(tree.body) else None
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) \
                    and isinstance(after.value.value, str):
                return after.value.value
            return None
        if isinstance(node, ast.ImportFrom) and any(a.name == name and a.asname is None for a in node.names):
            package = module if module_path(module).name == "__init__.py" else module.rsplit(".", 1)[0]
            source = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            return None if source in seen else attribute_docstring(source, name, seen + (module,))
    return None


def own_docstring(obj) -> str | None:
    """A class's or function's own docstring: not inherited, not a dataclass's generated one."""
    doc = obj.__doc__
    if inspect.isclass(obj):
        if any(doc is getattr(base, "__doc__", None) for base in obj.__mro__[1:]):
            return None
        if dataclasses.is_dataclass(obj) and doc and doc.startswith(obj.__name__ + "("):
            return None
    return doc


def public_names():
    for module in MODULES:
        mod = importlib.import_module(module)
        for name in mod.__all__:
            yield module, name, getattr(mod, name)


def undocumented() -> list:
    missing = []
    for module, name, obj in public_names():
        if inspect.isclass(obj) or inspect.isroutine(obj):
            doc = own_docstring(obj)
        else:
            doc = attribute_docstring(module, name)
        if not (doc and doc.strip()):
            missing.append(f"{module}.{name}")
    return missing


def referenced() -> dict:
    """module -> the names listed under its `::: module` directive's `members:` on the pages."""
    found = {}
    for page in sorted(REFERENCE.glob("*.md")):
        text = page.read_text()
        for m in re.finditer(r"^::: ([\w.]+)\n((?:[ \t]+.*\n?)*)", text, re.M):
            members = re.search(r"members:\s*\n((?:\s+- .*\n?)*)", m.group(2))
            names = re.findall(r"- (\S+)", members.group(1)) if members else []
            found.setdefault(m.group(1), set()).update(names)
    return found


def test_every_public_name_has_a_docstring():
    assert undocumented() == []


def test_every_public_name_is_on_the_reference_pages():
    pages = referenced()
    missing = [f"{module}.{name}" for module, name, _ in public_names()
               if name not in pages.get(module, ())]
    assert missing == []


def test_the_reference_pages_name_only_public_names():
    stray = [f"{module}.{name}" for module, names in referenced().items()
             for name in names - set(importlib.import_module(module).__all__)]
    assert stray == []


def test_the_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs", reason="MkDocs is not installed (pip install '.[docs]')")
    pytest.importorskip("mkdocstrings", reason="mkdocstrings is not installed (pip install '.[docs]')")
    pytest.importorskip("material", reason="mkdocs-material is not installed (pip install '.[docs]')")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-4000:]
    assert (tmp_path / "site" / "reference" / "scheduler" / "index.html").exists()


def test_the_readme_links_to_files_that_exist():
    readme = (ROOT / "README.md").read_text()
    targets = {m.group(1) for m in re.finditer(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme) if "://" not in m.group(1)}
    assert targets and sorted(t for t in targets if not (ROOT / t).exists()) == []


# ---- the command pages show what the commands print ------------------------------------------
COMMANDS = ROOT / "docs" / "commands"
#: the width the pages' outputs were printed at (rich tables and argparse wrap to COLUMNS)
WIDTH = {"getting-started.md": "110"}
#: what differs from run to run: timings, and the review's creation time
VOLATILE = re.compile(r"(wallSeconds|podsPerSecond|loadSeconds|eventsPerSecond)\s+[\d.]+|"
                      r'"creationTimestamp":"[^"]*"')
#: pages whose examples need files outside the repository, minutes of a busy machine or a live cluster
NOT_RUN = {"perf.md", "sweep.md", "run.md", "snapshot.md", "record.md", "extender.md"}


def shown_commands(page: Path):
    """(command, expected lines) for each `$ kschedcore ...` line of the page's plain blocks."""
    for block in re.findall(r"```\n(\$ .*?)```", page.read_text(), re.S):
        yield [(m.group(1), m.group(2).splitlines())
               for m in re.finditer(r"^\$ (.*)\n((?:(?!\$ ).*\n)*)", block, re.M)]


def documented_pages():
    return sorted(p for p in COMMANDS.glob("*.md") if p.name not in NOT_RUN) + [ROOT / "docs" / "getting-started.md"]


def shell(command: str, cwd: Path, width: str) -> list:
    python = shlex.quote(sys.executable)
    command = re.sub(r"(^|\| |&& )kschedcore ", rf"\1{python} -m kschedcore ", command)
    env = dict(os.environ, COLUMNS=width, PYTHONPATH=os.pathsep.join(sys.path))
    run = subprocess.run(command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return [VOLATILE.sub(r"\1", line.rstrip()) for line in (run.stdout + run.stderr).splitlines()]


BAD_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1.2.3"}}}]}}


@pytest.mark.parametrize("page", documented_pages(), ids=lambda p: p.name)
def test_the_page_shows_what_its_commands_print(page, tmp_path):
    if page.name == "report.md":
        pytest.importorskip("matplotlib")
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(BAD_POD))
    blocks = list(shown_commands(page))
    assert blocks
    for block in blocks:                          # the commands of a block run in order, in one folder
        for command, expected in block:
            want = [VOLATILE.sub(r"\1", line.rstrip()) for line in expected]
            assert shell(command, tmp_path, WIDTH.get(page.name, "90")) == want, command


@pytest.mark.parametrize("command", ["simulate", "explain", "capacity", "whatif", "replay", "report", "perf", "sweep",
                                     "run", "snapshot", "record", "extender serve"])
def test_the_page_shows_the_commands_usage(command, tmp_path):
    page = (COMMANDS / f"{command.split()[0]}.md").read_text()
    usage = re.search(r"## Usage\n\n```\n(.*?)```", page, re.S).group(1).splitlines()
    assert shell(f"kschedcore {command} --help", tmp_path, "90") == [line.rstrip() for line in usage]
