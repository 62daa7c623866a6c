"""Workloads for non-default configurations, checked against hand-computed values.

Each tests/data/workloads/NAME.json runs through the command line with NAME.config.yaml:
``kschedcore explain --config NAME.config.yaml --percentage-of-nodes-to-score 100
--tie-break first -o jsonl NAME.json``. The expected numbers come from the formulas of the
semantics document (§3.6, §3.9, §4.1, §4.2, §4.3, §4.7); the arithmetic is next to them.
Go integer division truncates toward zero; float scores are rounded half away from zero.
Memory in Mi (Gi = 1024 Mi) where only ratios matter.
"""
import json
from pathlib import Path

import pytest

from kschedcore.cli import main

DATA = Path(__file__).parent / "data" / "workloads"
INSUFFICIENT_GPU = ["Insufficient example.com/gpu"]
SPREAD_REJECTED = {"ok": False, "code": "Unschedulable", "plugin": "PodTopologySpread",
                   "reasons": ["node(s) didn't match pod topology spread constraints"]}


def explain(name, capsys):
    """Pod name -> explain record, through the CLI entry point."""
    rc = main(["explain", "--config", str(DATA / f"{name}.config.yaml"), "--percentage-of-nodes-to-score", "100",
               "--tie-break", "first", "-o", "jsonl", str(DATA / f"{name}.json")])
    assert rc == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return {r["pod"].split("/", 1)[1]: r for r in records}


def scores(rec, key):
    """Node -> one score field ("total", a plugin's weighted score, or "raw:<plugin>")."""
    return {node: s[key] for node, s in rec["scores"].items()}


def test_most_allocated_with_extended_resource_weights(capsys):
    """cpu 1, memory 2, example.com/gpu 5. n1: 4 cpu, 8Gi, 4 gpu (b1: 1 cpu, 2Gi, 1 gpu);
    n2: 8 cpu, 16Gi, 2 gpu (b2: 2 cpu, 4Gi); n3: 4 cpu, 8Gi, no gpu."""
    recs = explain("most_allocated", capsys)

    p1 = recs["p1"]            # 500m, 1Gi, 1 gpu
    # n3 has no gpu: 1 > allocatable 0 -> UnschedulableAndUnresolvable (§3.6)
    assert p1["filter"] == {"n3": {"ok": False, "code": "UnschedulableAndUnresolvable",
                                   "plugin": "NodeResourcesFit", "reasons": INSUFFICIENT_GPU}}
    # n1: cpu (1000+500)*100/4000 = 37; mem 3Gi*100/8Gi = 37; gpu (1+1)*100/4 = 50
    #     (37*1 + 37*2 + 50*5) / 8 = 361/8 = 45
    # n2: cpu 2500*100/8000 = 31; mem 5Gi*100/16Gi = 31; gpu 1*100/2 = 50
    #     (31*1 + 31*2 + 50*5) / 8 = 343/8 = 42
    assert scores(p1, "NodeResourcesFit") == {"n1": 45, "n2": 42}
    # BalancedAllocation (cpu, memory): n1 .375/.375, n2 .3125/.3125 -> std 0 -> 100
    assert scores(p1, "NodeResourcesBalancedAllocation") == {"n1": 100, "n2": 100}
    # + TaintToleration 3 * 100: n1 300 + 45 + 100 = 445, n2 300 + 42 + 100 = 442
    assert scores(p1, "total") == {"n1": 445, "n2": 442}
    assert p1["node"] == "n1"

    p2 = recs["p2"]            # 1 cpu, 1Gi, no gpu: the gpu is left out of the sums
    # n1 (b1, p1): cpu 2500*100/4000 = 62; mem 4Gi*100/8Gi = 50; (62 + 50*2) / 3 = 162/3 = 54
    # n2 (b2):     cpu 3000*100/8000 = 37; mem 5Gi*100/16Gi = 31; (37 + 31*2) / 3 = 99/3 = 33
    # n3:          cpu 1000*100/4000 = 25; mem 1Gi*100/8Gi = 12; (25 + 12*2) / 3 = 49/3 = 16
    assert scores(p2, "NodeResourcesFit") == {"n1": 54, "n2": 33, "n3": 16}
    # Balanced: n1 |.625 - .5|/2 = .0625 -> int(93.75) = 93; n2 |.375 - .3125|/2 -> 96.875 -> 96;
    # n3 |.25 - .125|/2 = .0625 -> 93
    assert scores(p2, "NodeResourcesBalancedAllocation") == {"n1": 93, "n2": 96, "n3": 93}
    assert scores(p2, "total") == {"n1": 300 + 54 + 93, "n2": 300 + 33 + 96, "n3": 300 + 16 + 93}
    assert p2["node"] == "n1"

    p3 = recs["p3"]            # 3 gpu: n1 has 2 of 4 left (U); n2 (2) and n3 (0) have fewer in all (UU)
    assert {n: s["code"] for n, s in p3["filter"].items()} == {
        "n1": "Unschedulable", "n2": "UnschedulableAndUnresolvable", "n3": "UnschedulableAndUnresolvable"}
    assert all(s["reasons"] == INSUFFICIENT_GPU for s in p3["filter"].values())
    assert p3["node"] is None
    assert p3["fitError"] == "0/3 nodes are available: 3 Insufficient example.com/gpu."


def test_requested_to_capacity_ratio_three_point_shape(capsys):
    """Shape (0, 0), (50, 100), (100, 20) (scores x 10); cpu weight 3, memory 1.
    f(x) = s[k-1] + (s[k] - s[k-1]) * (x - u[k-1]) / (u[k] - u[k-1]) for the first u[k] >= x,
    truncated toward zero. m1, m2: 4 cpu, 8Gi (b1 1500m, 2Gi on m1; b2 3, 6Gi on m2); m3: 2 cpu, 4Gi."""
    recs = explain("requested_to_capacity_ratio", capsys)

    q1 = recs["q1"]            # 500m, 1Gi
    # m1: cpu 2000*100/4000 = 50 -> 100; mem 3Gi*100/8Gi = 37 -> 100*37/50 = 74
    #     round((100*3 + 74) / 4) = round(93.5) = 94
    # m2: cpu 3500*100/4000 = 87 -> 100 + (-80*37)/50 = 100 - 59 = 41 (-59.2 truncates to -59);
    #     mem 7Gi*100/8Gi = 87 -> 41; round((41*3 + 41) / 4) = 41
    # m3: cpu 500*100/2000 = 25 -> 100*25/50 = 50; mem 1Gi*100/4Gi = 25 -> 50; 50
    assert scores(q1, "raw:NodeResourcesFit") == {"m1": 94, "m2": 41, "m3": 50}
    # Balanced: m1 |.5 - .375|/2 = .0625 -> 93; m2 .875/.875 -> 100; m3 .25/.25 -> 100
    assert scores(q1, "NodeResourcesBalancedAllocation") == {"m1": 93, "m2": 100, "m3": 100}
    assert scores(q1, "total") == {"m1": 300 + 94 + 93, "m2": 300 + 41 + 100, "m3": 300 + 50 + 100}
    assert q1["node"] == "m1"

    q2 = recs["q2"]            # 1 cpu, 512Mi, after q1 on m1
    # m1: cpu 3000*100/4000 = 75 -> 100 + (-80*25)/50 = 60; mem 3584Mi*100/8192Mi = 43 -> 86
    #     round((60*3 + 86) / 4) = round(66.5) = 67
    # m2: cpu 4000*100/4000 = 100 -> 100 + (-80*50)/50 = 20; mem 6656*100/8192 = 81 ->
    #     100 + (-80*31)/50 = 100 - 49 = 51 (-49.6 truncates to -49); round((20*3 + 51) / 4) = round(27.75) = 28
    # m3: cpu 1000*100/2000 = 50 -> 100; mem 512*100/4096 = 12 -> 24; round((300 + 24) / 4) = 81
    assert scores(q2, "NodeResourcesFit") == {"m1": 67, "m2": 28, "m3": 81}
    # Balanced: m1 |.75 - .4375|/2 = .15625 -> 84; m2 |1 - .8125|/2 = .09375 -> 90;
    # m3 |.5 - .125|/2 = .1875 -> 81
    assert scores(q2, "NodeResourcesBalancedAllocation") == {"m1": 84, "m2": 90, "m3": 81}
    assert scores(q2, "total") == {"m1": 300 + 67 + 84, "m2": 300 + 28 + 90, "m3": 300 + 81 + 81}
    assert q2["node"] == "m3"


def test_profile_with_disabled_plugins_and_weights(capsys):
    """TaintToleration and BalancedAllocation off; NodeAffinity x5, NodeResourcesFit x2,
    ImageLocality x3. t1: NoSchedule taint, disk=ssd, image app:v1 (500Mi); t2: disk=hdd;
    t3: PreferNoSchedule taint, disk=ssd, 8 cpu, 16Gi; t1, t2: 4 cpu, 8Gi."""
    recs = explain("disabled_plugins", capsys)

    r1 = recs["r1"]            # 1 cpu, 2Gi, image app:v1, prefers disk=ssd (weight 10)
    assert r1["filter"] == {} and r1["numFeasible"] == 3          # the NoSchedule taint is not checked
    assert "TaintToleration" not in r1["skippedFilterPlugins"] + r1["skippedScorePlugins"]
    assert {p for s in r1["scores"].values() for p in s} == {
        "NodeAffinity", "raw:NodeAffinity", "NodeResourcesFit", "raw:NodeResourcesFit",
        "ImageLocality", "raw:ImageLocality", "total"}
    # NodeAffinity raw 10, 0, 10 -> 100*s/10 = 100, 0, 100 -> x5
    assert scores(r1, "NodeAffinity") == {"t1": 500, "t2": 0, "t3": 500}
    # LeastAllocated: t1, t2 cpu 3000*100/4000 = 75, mem 6Gi*100/8Gi = 75 -> 75;
    # t3 cpu 7000*100/8000 = 87, mem 14Gi*100/16Gi = 87 -> 87; x2
    assert scores(r1, "NodeResourcesFit") == {"t1": 150, "t2": 150, "t3": 174}
    # ImageLocality t1: int64(524288000 * (1/3)) = 174762666;
    # 100 * (174762666 - 24117248) / (1048576000 - 24117248) = 15064541800/1024458752 = 14; x3
    assert scores(r1, "raw:ImageLocality") == {"t1": 14, "t2": 0, "t3": 0}
    assert scores(r1, "total") == {"t1": 500 + 150 + 42, "t2": 150, "t3": 500 + 174}
    assert r1["node"] == "t1"

    r2 = recs["r2"]            # 1 cpu, 1Gi, no preferred terms: NodeAffinity's PreScore skips
    assert "NodeAffinity" in r2["skippedScorePlugins"]
    # t1 (r1): cpu 2000*100/4000 = 50, mem 5Gi*100/8Gi = 62 -> (50 + 62)/2 = 56
    # t2: cpu 75, mem 7Gi*100/8Gi = 87 -> 81; t3: cpu 87, mem 15Gi*100/16Gi = 93 -> 90; x2
    assert scores(r2, "total") == {"t1": 112, "t2": 162, "t3": 180}
    assert r2["node"] == "t3"          # its PreferNoSchedule taint costs nothing here


def test_two_profiles_by_scheduler_name(capsys):
    """default-scheduler beside bin-packer (MostAllocated, weight 3, no BalancedAllocation).
    s1, s2: 4 cpu, 8Gi; b1 (2 cpu, 4Gi) on s1."""
    recs = explain("two_profiles", capsys)

    spread = recs["spread"]    # default profile, 1 cpu, 2Gi
    # LeastAllocated: s1 cpu 1000*100/4000 = 25, mem 2Gi*100/8Gi = 25 -> 25; s2 75
    # Balanced: .75/.75 and .25/.25 -> 100; totals 300 + 25 + 100, 300 + 75 + 100
    assert scores(spread, "total") == {"s1": 425, "s2": 475}
    assert spread["node"] == "s2"

    packed = recs["packed"]    # bin-packer, 1 cpu, 2Gi, after spread on s2
    # MostAllocated: s1 cpu 3000*100/4000 = 75, mem 6Gi*100/8Gi = 75 -> 75 x3 = 225;
    # s2 cpu 2000*100/4000 = 50, mem 4Gi*100/8Gi = 50 -> 50 x3 = 150
    assert scores(packed, "NodeResourcesFit") == {"s1": 225, "s2": 150}
    assert "NodeResourcesBalancedAllocation" not in packed["scores"]["s1"]
    assert scores(packed, "total") == {"s1": 300 + 225, "s2": 300 + 150}
    assert packed["node"] == "s1"

    stray = recs["stray"]
    assert stray["node"] is None and stray["error"] == 'no profile for schedulerName "nobody"'


def test_list_default_spread_constraints(capsys):
    """Defaults: zone DoNotSchedule maxSkew 1, hostname ScheduleAnyway maxSkew 1. Service web
    selects app=web, ReplicaSet api selects app=api. a1, a2 in zone a, b1 in zone b (4 cpu,
    8Gi); web-0 on a1; every pod 100m, 128Mi."""
    recs = explain("list_spread_defaults", capsys)

    web1 = recs["web-1"]       # zone a 1, b 0, min 0: a 1 + 1 - 0 = 2 > 1; b 0 + 1 - 0 = 1
    assert web1["filter"] == {"a1": SPREAD_REJECTED, "a2": SPREAD_REJECTED}
    assert web1["node"] == "b1" and web1["numFeasible"] == 1 and web1["scores"] == {}

    web2 = recs["web-2"]       # a 1, b 1, min 1: 1 + 1 - 1 = 1 everywhere
    assert web2["filter"] == {}
    # hostname: w = ln(3 + 2) = 1.6094; raw round(cnt * w + 0): a1 round(1.609) = 2, a2 0, b1 2
    # normalized 100 * (2 + 0 - s) / 2: a1 0, a2 100, b1 0; x2
    assert scores(web2, "raw:PodTopologySpread") == {"a1": 2, "a2": 0, "b1": 2}
    assert scores(web2, "PodTopologySpread") == {"a1": 0, "a2": 200, "b1": 0}
    # Fit: a1, b1 cpu 3800*100/4000 = 95, mem 7936*100/8192 = 96 -> 95; a2 cpu 97, mem 98 -> 97
    # Balanced: cpu .05 vs mem .03125 -> 99.06 -> 99; a2 .025 vs .015625 -> 99
    assert scores(web2, "total") == {"a1": 300 + 95 + 99, "a2": 300 + 97 + 99 + 200, "b1": 300 + 95 + 99}
    assert web2["node"] == "a2"

    web3 = recs["web-3"]       # a 2, b 1, min 1: a 2 + 1 - 1 = 2 > 1; b 1 + 1 - 1 = 1
    assert web3["filter"] == {"a1": SPREAD_REJECTED, "a2": SPREAD_REJECTED} and web3["node"] == "b1"

    batch = recs["batch-0"]    # selected by nothing: empty selector, the defaults are dropped
    assert "PodTopologySpread" in batch["skippedFilterPlugins"]
    assert "PodTopologySpread" in batch["skippedScorePlugins"]
    # Fit: a1, a2 95 (as above); b1 (web-1, web-3) cpu 3700*100/4000 = 92, mem 7808*100/8192 = 95
    # -> 93; Balanced b1 |.075 - .046875|/2 = .0140625 -> 98; a1 and a2 tie: first in input order
    assert scores(batch, "total") == {"a1": 494, "a2": 494, "b1": 300 + 93 + 98}
    assert batch["node"] == "a1"

    api = recs["api-0"]        # the ReplicaSet's selector app=api: no api pod anywhere
    assert "PodTopologySpread" not in api["skippedFilterPlugins"] + api["skippedScorePlugins"]
    # zones 0 and 0: 0 + 1 - 0 = 1 passes; hostname counts all 0 -> raw 0, max 0 -> 100 each, x2
    assert api["filter"] == {} and scores(api, "PodTopologySpread") == {"a1": 200, "a2": 200, "b1": 200}
    # a1 (web-0, batch-0) and b1 (web-1, web-3): Fit 93, Balanced 98; a2 (web-2): 95, 99
    assert scores(api, "total") == {"a1": 300 + 93 + 98 + 200, "a2": 300 + 95 + 99 + 200, "b1": 691}
    assert api["node"] == "a2"


@pytest.mark.parametrize("name", ["most_allocated", "requested_to_capacity_ratio", "disabled_plugins",
                                  "two_profiles", "list_spread_defaults"])
def test_every_pending_pod_has_a_record(name, capsys):
    pending = json.loads((DATA / f"{name}.json").read_text())["pending"]
    assert list(explain(name, capsys)) == [p["metadata"]["name"] for p in pending]
