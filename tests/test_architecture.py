"""The package's rooms keep their rules (docs/architecture.md): which room may import which, no
import cycle, short files and classes, no private name used across modules.

Read from the source with `ast` (every import, also those inside functions); the deprecated
one-release re-exports are left out, as they exist only to point old paths at new rooms.
"""
import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "kschedcore"
#: old import paths kept for one release (they import the room that replaced them)
DEPRECATED = {"kschedcore.framework.loop", "kschedcore.framework.live", "kschedcore.framework.permit"}
MAX_FILE_LINES = 600
MAX_CLASS_LINES = 400
#: rooms every room may use: leaves that import nothing of the package above them
LEAVES = {"errors", "util", "_kernel"}
#: the package's front door (top-level modules: the CLI, the public names) may import any room
FRONT = {"", "__main__", "cli", "custom"}
#: room -> the rooms it may import (besides itself and the leaves)
ALLOWED = {
    "objects": set(),
    "dra": {"objects"},
    "framework": {"objects"},
    "backend": {"framework", "objects", "dra"},
    "plugins": {"framework", "backend", "objects", "dra"},
    "scheduler": {"framework", "backend", "plugins", "objects", "output"},
    "output": {"framework", "objects", "scheduler"},
    "sources": {"objects"},
    "reference": {"objects", "framework", "sources"},
    "replay": {"scheduler", "sources", "objects", "output"},
    "capacity": {"scheduler", "framework", "sources", "objects"},
    "perf": {"scheduler", "framework", "sources", "objects"},
    "sweep": {"scheduler", "framework", "sources", "replay", "capacity"},
    "testing": {"scheduler", "framework", "sources"},
}


def _modules():
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name, path):
    """(imported module, line, names) of every import in the module, relative ones resolved."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, node.lineno, ()
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")
                up = up[:len(up) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            names = tuple(a.name for a in node.names)
            # `from . import x` imports the submodule x when there is one
            subs = [f"{base}.{n}" for n in names if f"{base}.{n}" in MODULES]
            yield from ((s, node.lineno, ()) for s in subs)
            if not subs or len(subs) < len(names):
                yield base, node.lineno, names


def _graph():
    edges = defaultdict(set)
    where = {}
    for name, path in MODULES.items():
        if name in DEPRECATED:
            continue
        for target, line, _ in _imports(name, path):
            if target.startswith("kschedcore") and target in MODULES and target != name:
                edges[name].add(target)
                where[(name, target)] = line
    return edges, where


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_rooms_import_only_what_they_may():
    edges, where = _graph()
    bad = []
    for src, targets in edges.items():
        room = _room(src)
        if room in FRONT:
            continue
        if room not in ALLOWED:         # a new room says what it may import
            bad.append(f"{src}: room {room!r} is not in ALLOWED")
            continue
        for dst in targets:
            other = _room(dst)
            if other in (room, "", *LEAVES) or other in ALLOWED[room]:
                continue
            bad.append(f"{src} -> {dst} (line {where[(src, dst)]})")
    assert not bad, "imports across the rules:\n" + "\n".join(sorted(bad))


def test_plugins_import_no_other_plugin():
    """A plugin's folder uses the framework, the backend, the objects and plugins/helper (what
    several share); never another plugin's folder."""
    edges, where = _graph()
    bad = []
    for src, targets in edges.items():
        parts = src.split(".")
        if len(parts) < 4 or parts[1] != "plugins" or parts[2] in ("helper", "registry"):
            continue
        for dst in targets:
            d = dst.split(".")
            if d[1] == "plugins" and len(d) > 2 and d[2] not in (parts[2], "helper"):
                bad.append(f"{src} -> {dst} (line {where[(src, dst)]})")
    assert not bad, "\n".join(sorted(bad))


def test_no_import_cycles():
    edges, _ = _graph()
    seen, stack, cycles = {}, [], []

    def visit(n):
        seen[n] = "open"
        stack.append(n)
        for m in sorted(edges.get(n, ())):
            if seen.get(m) == "open":
                cycles.append(stack[stack.index(m):] + [m])
            elif m not in seen:
                visit(m)
        stack.pop()
        seen[n] = "done"

    for n in sorted(MODULES):
        if n not in seen and n not in DEPRECATED:
            visit(n)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("suffix", ["*.py", "*.pyx", "*.pxd"])
def test_no_long_files(suffix):
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob(suffix)
            if (n := len(p.read_text().splitlines())) > MAX_FILE_LINES}
    assert not long, long


def test_no_long_classes():
    long = {}
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES:
                long[f"{name}.{node.name}"] = node.end_lineno - node.lineno + 1
    assert not long, long


def _private_defs(tree) -> set:
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))
            and n.name.startswith("_") and not n.name.startswith("__")}


def test_no_private_name_used_across_modules():
    """No module calls another module's private method or imports its private names: a
    `x._name(...)` call names a method defined in the same module, or is on self / cls."""
    bad = []
    for name, path in MODULES.items():
        if name in DEPRECATED:
            continue
        tree = ast.parse(path.read_text())
        own = _private_defs(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level or (
                    isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kschedcore")):
                bad += [f"{name}: imports {a.name} (line {node.lineno})" for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")]
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                attr, value = node.func.attr, node.func.value
                if not attr.startswith("_") or attr.startswith("__") or attr in own:
                    continue
                if isinstance(value, ast.Name) and value.id in ("self", "cls"):
                    continue
                if isinstance(value, ast.Name) and value.id == "os" and attr == "_exit":
                    continue        # the standard library's own public name
                bad.append(f"{name}: calls .{attr}() (line {node.lineno})")
    assert not bad, "\n".join(bad)


def test_one_status_code_enum():
    """The kernel's status codes are framework.status.Code's."""
    from kschedcore import _kernel
    from kschedcore.framework.status import Code
    assert (Code.NOT_EXAMINED, Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE) == (
        _kernel.C_NOT_EXAMINED, _kernel.C_SUCCESS, _kernel.C_UNSCHEDULABLE, _kernel.C_UNRESOLVABLE)


def test_the_checks_can_fail(tmp_path, monkeypatch):
    """The import rules see an import across them (a check that cannot fail proves nothing)."""
    fake = dict(MODULES)
    bad = tmp_path / "bad.py"
    bad.write_text("from ..plugins.nodename import NodeName\n")
    fake["kschedcore.framework.bad"] = bad
    monkeypatch.setattr(__import__(__name__), "MODULES", fake)
    with pytest.raises(AssertionError, match="framework.bad -> kschedcore.plugins.nodename"):
        test_rooms_import_only_what_they_may()
