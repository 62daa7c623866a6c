"""Public calls given an argument they cannot act on refuse it with one error naming the object,
instead of a TypeError from deep inside or a silently wrong state."""
import pytest

from kschedcore import Scheduler, StateError, ValidationError, capacity
from kschedcore.capacity.podspec import default_pod


def _node(name, cpu="2"):
    return {"kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def _pod(name, cpu="1"):
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}


def _template(**fields):
    pod = default_pod({"metadata": {"name": "web"}, "spec": {"containers": [
        {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}})
    return capacity.Template(pod, "<test>", **fields)


def test_assume_scheduled_refuses_a_result_without_a_node():
    """A failed cycle's result chose no node: assuming the pod there is refused, and the cache
    does not count the pod anywhere."""
    sched = Scheduler([_node("n1")])
    pod = sched.parse_pod(_pod("big", cpu="4"))
    result = sched.schedule(pod)
    assert result.node is None
    with pytest.raises(StateError, match=r"pod default/big: its cycle chose no node: 0/1 nodes are available"):
        sched.assume_scheduled(pod, result)
    assert pod.key not in sched.cache and sched.cache.orphan_count() == 0


def test_assume_scheduled_refuses_a_summary_result():
    """ScheduleResult.summary() drops the cycle record that assuming needs."""
    sched = Scheduler([_node("n1")])
    pod = sched.parse_pod(_pod("web"))
    result = sched.schedule(pod)
    assert result.node == "n1"
    with pytest.raises(StateError, match=r"pod default/web: .*no cycle record"):
        sched.assume_scheduled(pod, result.summary())
    sched.assume_scheduled(pod, result)
    assert pod.key in sched.cache


def test_gangs_that_fit_refuses_a_template_that_is_not_a_gang():
    sched = Scheduler([_node("n1", cpu="4")])
    with pytest.raises(ValidationError, match=r"template default/web: minMember: not a gang"):
        capacity.gangs_that_fit(sched, _template())
    assert capacity.gangs_that_fit(sched, _template(min_member=2)).placed == 4


def test_fit_templates_refuses_a_template_without_a_target():
    sched = Scheduler([_node("n1", cpu="4")])
    with pytest.raises(ValidationError, match=r"template default/web: target: fit_templates needs a target count"):
        capacity.fit_templates(sched, [_template()])
    assert capacity.fit_templates(sched, [_template(target=3)])[0].placed == 3
