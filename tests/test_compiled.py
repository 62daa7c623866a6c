"""The modules compiled from their own Python source: compiled in this build, the same
decisions as their source run by the interpreter, and an edited source never shadowed by the
module compiled before the edit."""
import importlib
import importlib.machinery
import json
import os
import subprocess
import sys

import pytest

import kschedcore
from kschedcore.compiled import MANIFEST, MODULES, PURE_PYTHON, SourceFirst, digest, stale

SUFFIXES = tuple(importlib.machinery.EXTENSION_SUFFIXES)


def _needs_extra(module):
    return module.startswith("gym.") and importlib.util.find_spec("gymnasium") is None


@pytest.mark.parametrize("module", MODULES)
def test_each_module_is_compiled_in_this_build(module):
    if _needs_extra(module):
        pytest.skip("needs the gym extra")
    if os.environ.get(PURE_PYTHON) == "1":
        pytest.skip(f"{PURE_PYTHON}=1 imports the sources")
    assert importlib.import_module(f"kschedcore.{module}").__file__.endswith(SUFFIXES)
    assert not stale(modules=(module,))


def _placements(env):
    code = ("import json, kschedcore.scheduler.loop as l; from kschedcore import Scheduler; "
            "from kschedcore.replay import load_replay; "
            "r = load_replay(['tests/data/parity/replay_churn_a.cluster.json.gz', "
            "'tests/data/parity/replay_churn_a.events.jsonl.gz'], arrival='settle'); r.run(); "
            "print(json.dumps([l.__file__, {k: [v.node, v.attempts, v.messages] "
            "for k, v in r.recorder.records.items()}]))")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True,
                         check=True, cwd=os.path.dirname(os.path.dirname(__file__)))
    return json.loads(out.stdout)


def test_the_sources_run_by_the_interpreter_decide_the_same():
    compiled_file, compiled = _placements({PURE_PYTHON: "0"})
    source_file, source = _placements({PURE_PYTHON: "1"})
    assert compiled_file.endswith(SUFFIXES) and source_file.endswith(".py")
    assert source == compiled and len(compiled) > 200


def _package(tmp_path, body):
    """A package `pkg` with one module `mod` whose compiled file beside it cannot be loaded."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text(body)
    (pkg / f"mod{SUFFIXES[0]}").write_bytes(b"not a shared object")
    return pkg


def test_an_edited_source_is_stale_until_rebuilt(tmp_path):
    pkg = _package(tmp_path, "X = 1\n")
    assert stale(pkg, ("mod",)) == ["mod"]                 # nothing recorded: stale
    (pkg / MANIFEST).write_text(json.dumps({"mod": digest(pkg / "mod.py")}))
    assert stale(pkg, ("mod",)) == []
    (pkg / "mod.py").write_text("X = 2\n")
    assert stale(pkg, ("mod",)) == ["mod"]
    (pkg / f"mod{SUFFIXES[0]}").unlink()
    assert stale(pkg, ("mod",)) == []                      # nothing compiled to shadow it


def test_a_stale_module_is_imported_from_its_source(tmp_path):
    pkg = _package(tmp_path, "X = 2\n")
    sys.path.insert(0, str(tmp_path))
    finder = SourceFirst(["mod"], pkg, "pkg")
    sys.meta_path.insert(0, finder)
    try:
        mod = importlib.import_module("pkg.mod")       # the compiled file would not even load
        assert mod.X == 2 and mod.__file__ == str(pkg / "mod.py")
    finally:
        sys.meta_path.remove(finder)
        sys.path.remove(str(tmp_path))
        for name in ("pkg.mod", "pkg"):
            sys.modules.pop(name, None)


def test_the_package_imports_without_a_warning():
    out = subprocess.run([sys.executable, "-W", "error", "-c", "import kschedcore.scheduler.loop"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert not kschedcore.compiled.stale()
