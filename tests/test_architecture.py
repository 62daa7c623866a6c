"""The package's rooms keep their rules (docs/architecture.md): which room may import which, no
import cycle, short files and classes, no private name used across modules.

Read from the source with `ast` (every import, also those inside functions).
"""
import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "kschedcore"
MAX_FILE_LINES = 600
MAX_CLASS_LINES = 400
#: rooms every room may use: leaves that import nothing of the package above them
LEAVES = {"errors", "util", "_kernels", "_native"}
#: the package's front door (top-level modules: the CLI, the public names) may import any room
FRONT = {"", "__main__", "cli", "custom"}
#: room -> the rooms it may import (besides itself and the leaves)
ALLOWED = {
    "_native": set(),       # the compiled modules: leaves, each importing only its own room
    "objects": set(),
    "extender": {"objects"},
    "dra": {"objects"},
    "framework": {"objects", "extender"},
    "backend": {"framework", "objects", "dra"},
    "plugins": {"framework", "backend", "objects", "extender", "dra"},
    "scheduler": {"framework", "backend", "plugins", "objects", "output", "extender", "reference"},
    "output": {"framework", "objects", "scheduler"},
    "sources": {"objects"},
    "reference": {"objects", "framework", "sources"},
    "replay": {"scheduler", "sources", "objects", "output"},
    "capacity": {"scheduler", "framework", "sources", "objects"},
    # dra: allocResourceClaims runs the structured allocator, as upstream's test driver does
    "perf": {"scheduler", "framework", "sources", "objects", "dra"},
    "sweep": {"scheduler", "framework", "sources", "replay", "capacity"},
    "testing": {"scheduler", "framework", "sources"},
    "gym": {"scheduler", "framework", "sources", "objects", "replay"},
    "live": {"scheduler", "sources", "objects", "extender"},
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
#: the compiled modules (Cython), by their import name: rooms as the Python modules are
COMPILED = {".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts) for p in PACKAGE.rglob("*.pyx")}


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


def _typing_only_lines(path):
    """The lines of the imports under `if TYPE_CHECKING:`: read by the type checker, never run."""
    lines = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            lines.update(n.lineno for b in node.body for n in ast.walk(b) if isinstance(n, (ast.Import, ast.ImportFrom)))
    return lines


def _graph(runtime_only=False):
    """Module -> the package's modules it imports; runtime_only leaves out typing-only imports."""
    edges = defaultdict(set)
    where = {}
    for name, path in MODULES.items():
        typing_only = _typing_only_lines(path) if runtime_only else set()
        for target, line, _ in _imports(name, path):
            if target.startswith("kschedcore") and (target in MODULES or target in COMPILED) and target != name \
                    and line not in typing_only:
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
    """No cycle among the imports that run (a type annotation's import under TYPE_CHECKING may
    point back: it is never executed)."""
    edges, _ = _graph(runtime_only=True)
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
        if n not in seen:
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


def test_no_test_hides_another():
    """No test or bench module defines a top-level name twice: the second definition would
    hide the first, which then never runs."""
    hidden = []
    for path in sorted([*PACKAGE.parents[1].joinpath("tests").glob("*.py"),
                        *PACKAGE.parents[1].joinpath("bench").glob("*.py")]):
        seen: set = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                if node.name in seen:
                    hidden.append(f"{path.name}: {node.name} (line {node.lineno})")
                seen.add(node.name)
    assert not hidden, hidden


def test_one_status_code_enum():
    """The kernel's status codes are framework.status.Code's."""
    from kschedcore import _native
    from kschedcore.framework.status import Code
    assert (Code.NOT_EXAMINED, Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE) == (
        _native.C_NOT_EXAMINED, _native.C_SUCCESS, _native.C_UNSCHEDULABLE, _native.C_UNRESOLVABLE)


def test_the_compiled_hot_path_layout():
    """The pass (NodeKernel) is the one compiled module at the package's top, _kernels.pyx with
    its .pxd; every other compiled module is in _native/, which never imports the pass from
    Python; setup.py builds each of them; NodeKernel is used from the pass's own module."""
    top = sorted(p.name for p in PACKAGE.glob("*.pyx"))
    assert top == ["_kernels.pyx"] and (PACKAGE / "_kernels.pxd").exists()
    assert "cdef class NodeKernel" in (PACKAGE / "_kernels.pxd").read_text()
    native = {p.stem for p in (PACKAGE / "_native").glob("*.pyx")}
    assert COMPILED == {"kschedcore._kernels"} | {f"kschedcore._native.{n}" for n in native}
    setup = (PACKAGE.parents[1] / "setup.py").read_text()
    assert '"kschedcore._kernels"' in setup and all(f'"{n}"' in setup for n in native - {"yaml_events"})
    edges, _ = _graph()
    assert not {m for m in edges if m.startswith("kschedcore._native")
                and "kschedcore._kernels" in edges[m]}
    assert "kschedcore._kernels" in edges["kschedcore.framework.framework"]


def test_the_checks_can_fail(tmp_path, monkeypatch):
    """The import rules see an import across them (a check that cannot fail proves nothing)."""
    fake = dict(MODULES)
    bad = tmp_path / "bad.py"
    bad.write_text("from ..plugins.nodename import NodeName\n")
    fake["kschedcore.framework.bad"] = bad
    monkeypatch.setattr(__import__(__name__), "MODULES", fake)
    with pytest.raises(AssertionError, match="framework.bad -> kschedcore.plugins.nodename"):
        test_rooms_import_only_what_they_may()
