"""The worked example in examples/ runs and decides as its comments say."""
import runpy
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "custom_plugins.py"


def test_custom_plugins_example(capsys):
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    lines = capsys.readouterr().out.splitlines()
    # red may use rack-2 only; FreeGpus prefers its node with the most GPUs (r2-n2: 6)
    assert lines[0] == "one decision: r2-n2"
    assert lines[1] == "no racks: 0/9 nodes are available: tenant green has no racks."
    # the gang of three binds together, on blue's racks (0 and 1) only
    gang = [line.split(": ")[1].split()[0] for line in lines[2:]]
    assert len(gang) == 3 and all(n.startswith(("r0-", "r1-")) for n in gang)
