"""The regression gate on ratios: each benchmark's median divided by the machine reference
timed around it in the same run (bench/conftest.py; kschedcore.testing.reference), compared
between a saved baseline run and this one. A busy or slower machine slows both the benchmark
and its reference, so the ratio moves only when kschedcore does.

    python bench/gate.py BASELINE.json CURRENT.json [--fail 15]     # two pytest-benchmark saves
    python -m pytest bench/ --benchmark-only --benchmark-autosave --ratio-gate 15   # vs the last save
"""
import argparse
import json
import sys
from pathlib import Path


def ratios(benchmarks) -> dict:
    """fullname -> ratio, from pytest-benchmark's saved JSON `benchmarks` entries."""
    return {b["fullname"]: b["extra_info"]["ratio"] for b in benchmarks if "ratio" in b.get("extra_info", {})}


def compare(base: dict, now: dict, fail_percent: float):
    """(rows, regressions): per benchmark in both runs, (name, base ratio, current ratio,
    change in %); a regression is a ratio more than fail_percent above the baseline's."""
    rows = [(name, base[name], now[name], 100.0 * (now[name] / base[name] - 1.0))
            for name in sorted(base.keys() & now.keys())]
    return rows, [r for r in rows if r[3] > fail_percent]


def latest_save(root=".benchmarks", exclude=None):
    """The newest pytest-benchmark save under root (NNNN_*.json, any machine folder)."""
    saves = sorted(Path(root).glob("*/[0-9][0-9][0-9][0-9]_*.json"), key=lambda p: p.name)
    saves = [p for p in saves if exclude is None or p.resolve() != Path(exclude).resolve()]
    return saves[-1] if saves else None


def report(rows, regressions, fail_percent, write=print) -> bool:
    write(f"{'benchmark':70} {'baseline':>9} {'current':>9} {'change':>8}")
    for name, b, n, change in rows:
        mark = "  REGRESSION" if change > fail_percent else ""
        write(f"{name[-70:]:70} {b:9.4f} {n:9.4f} {change:+7.1f}%{mark}")
    write(f"{len(rows)} compared, {len(regressions)} slower by more than {fail_percent}% relative to the machine")
    return not regressions


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("baseline")
    ap.add_argument("current")
    ap.add_argument("--fail", type=float, default=15.0, metavar="PERCENT")
    args = ap.parse_args(argv)
    base, now = (ratios(json.loads(Path(p).read_text())["benchmarks"]) for p in (args.baseline, args.current))
    rows, regressions = compare(base, now, args.fail)
    if not rows:
        print("no benchmark with a ratio in both runs", file=sys.stderr)
        return 2
    return 0 if report(rows, regressions, args.fail) else 1


if __name__ == "__main__":
    sys.exit(main())
