"""The package type-checks clean: mypy with the configuration in pyproject.toml (`[tool.mypy]`),
so that users who embed kschedcore can rely on its annotations (the package ships py.typed)."""
import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
#: the compiled modules' stubs, wherever their package lies
STUBS = sorted((SRC / "kschedcore").rglob("*.pyi"))


def test_mypy_is_clean():
    """`mypy` (the files and strictness of pyproject.toml) reports no error on the package."""
    pytest.importorskip("mypy", reason="mypy is not installed (pip install '.[test]')")
    env = {**os.environ, "MYPY_FORCE_COLOR": "0"}
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-pretty", "--no-error-summary"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"mypy found errors:\n{proc.stdout}{proc.stderr}"


def test_package_is_marked_typed():
    """py.typed is in the package and declared as package data, so installs carry it."""
    assert (ROOT / "src" / "kschedcore" / "py.typed").is_file()
    import tomllib
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data["kschedcore"]


def _stub_names(stub: Path) -> list[str]:
    tree = ast.parse(stub.read_text())
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return names


@pytest.mark.parametrize("stub", STUBS, ids=lambda p: p.stem)
def test_kernel_stub_names_exist(stub):
    """Every name a compiled module's stub declares is in the compiled module (a renamed or removed
    function fails here rather than type-checking against a stub that lies)."""
    name = ".".join(stub.relative_to(SRC).with_suffix("").parts)
    try:
        module = importlib.import_module(name)
    except ImportError:
        pytest.skip(f"{name} is not built here")
    missing = [n for n in _stub_names(stub) if not hasattr(module, n)]
    assert not missing, f"{stub.name} declares names the compiled module lacks: {missing}"
