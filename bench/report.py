"""Prints the benchmark table of docs/benchmarks.md from a saved pytest-benchmark JSON file.

    python bench/report.py .benchmarks/*/0001_*.json
"""
import json
import sys


def rows(data):
    for b in data["benchmarks"]:
        info, stats = b["extra_info"], b["stats"]
        yield b["name"], stats["median"], info


def main(path):
    data = json.load(open(path))
    print("| benchmark | median | pods/s | ns per node evaluated | kube-scheduler v1.34.1 pods/s | speed-up |")
    print("|---|---|---|---|---|---|")
    for name, median, info in rows(data):
        print(f"| {name.removeprefix('test_')} | {median:.4f} s | {info.get('podsPerSecond', info.get('simulatePodsPerSecond', '–'))} "
              f"| {info.get('nsPerNodeEvaluated', '–')} | {info.get('kubeSchedulerPodsPerSecond', '–')} "
              f"| {str(info['speedup']) + '×' if 'speedup' in info else '–'} |")
    for name, median, info in rows(data):
        if "peakRssMiB" in info:
            print(f"\nPeak RSS of `kschedcore simulate` on bench_basic_5000: {info['peakRssMiB']} MiB.")
        if "inProcessSeconds" in info:
            print(f"\nImport + first decision in a fresh interpreter: {median:.3f} s (whole process).")


if __name__ == "__main__":
    main(sys.argv[1])
