"""The node table's pod-by-pod row writes in C (NodeTable.rows, TableRows) against the NumPy
path a fork's journal takes, and the utilisation sums over the rows in use."""
import numpy as np

from kschedcore import Scheduler
from kschedcore.replay.departures import Departure, Departures

from test_fork import node, pod

COLUMNS = ("requested", "nonzero", "pod_count", "image_nn")


def _columns(s):
    t = s.cache.table
    return {name: getattr(t, name).copy() for name in COLUMNS}


def _same(a, b):
    return all(np.array_equal(a[name], b[name]) for name in COLUMNS)


def test_a_removed_pod_leaves_its_row_as_it_was_and_touched():
    s = Scheduler([node(i, image=i % 2 == 0) for i in range(4)], seed=1)
    t = s.cache.table
    s.add_pod(s.parse_pod(pod("keep", cpu="700m", node_name="n0")))
    t.refresh_snapshot()
    before, generation, seq = _columns(s), t.generation.copy(), int(t.change_seq[0])
    s.add_pod(s.parse_pod(pod("leaves", cpu="1500m", node_name="n0")))
    row = t.row_of["n0"]
    assert t.requested[row].sum() > before["requested"][row].sum()
    t.refresh_snapshot()
    s.remove_pod("default/leaves")
    assert row in t.stale_images           # n0 lists an image: its snapshot copy goes stale
    t.refresh_snapshot()
    assert _same(_columns(s), before)
    assert t.generation[row] == generation[row] + 2 and int(t.change_seq[0]) == seq + 2
    assert t.change_log[seq + 1] == row


def test_row_writes_in_c_equal_those_of_a_fork():
    def run(in_fork):
        s = Scheduler([node(i, image=i % 2 == 0) for i in range(4)], seed=1)
        for i in range(6):
            s.add_pod(s.parse_pod(pod(f"p{i}", cpu=f"{300 + 100 * i}m", node_name=f"n{i % 4}")))
        if not in_fork:
            for i in (1, 2, 4):
                s.remove_pod(f"default/p{i}")
            s.cache.table.refresh_snapshot()
            return _columns(s)
        with s.fork():          # the journal's path: NumPy, each row saved first
            assert s.cache.forked
            for i in (1, 2, 4):
                s.remove_pod(f"default/p{i}")
            s.cache.table.refresh_snapshot()
            return _columns(s)
    assert _same(run(False), run(True))


def test_utilization_counts_only_the_rows_in_use():
    s = Scheduler([node(i, cpu=4) for i in range(5)], seed=1)
    for i in range(5):
        s.add_pod(s.parse_pod(pod(f"p{i}", cpu="1", node_name=f"n{i}")))
    assert s.utilization()["cpu"] == 0.25
    s.remove_node("n1")                  # its row goes free: the rows in use are no longer 0..n-1
    s.remove_pod("default/p1")
    s.remove_pod("default/p3")
    assert s.utilization()["cpu"] == round(3 / 16, 4)
    assert s.utilization()["pods"] == round(3 / 80, 4)


def test_departures_come_soonest_first_and_in_the_order_made_at_one_time():
    d = Departures()
    for t, key in [(5.0, "a"), (2.0, "b"), (5.0, "c"), (2.0, "d"), (9.5, "e"), (5.0, "f")]:
        d.push(t, Departure(key))
    assert d.times[0] == 2.0 and len(d) == 6
    order = []
    while d:
        order.append(d.pop().key)
    assert order == ["b", "d", "a", "c", "f", "e"]


def test_departures_popped_and_put_back_come_again_in_their_order():
    d = Departures()
    made = [(5.0, "a"), (2.0, "b"), (5.0, "c"), (7.0, "d"), (5.0, "e"), (7.0, "f"), (1.0, "g")]
    for t, key in made:
        d.push(t, Departure(key))
    popped = [(d.times[0], d.pop()) for _ in range(5)]          # g b a c e
    assert [x.key for _, x in popped] == ["g", "b", "a", "c", "e"]
    assert d.peek().key == "d"
    for t, x in reversed(popped[1:]):
        d.unpop(t, x)
    d.push(5.0, Departure("h"))         # made after them: last at its time
    order = []
    while d:
        order.append(d.pop().key)
    assert order == ["b", "a", "c", "e", "h", "d", "f"]
