"""A sweep on a Ray cluster (`--ray [ADDRESS]`, the `ray` extra): the same tasks as the local
pool, one CPU each.

Each workload's payload goes into the object store once (ray.put); a task gets its ObjectRef
inside a list, so Ray does not fetch it for every task: a worker fetches a workload the first
time one of its tasks needs it and keeps it for the next. Rows stream back with ray.wait, as
tasks end, in whatever order they end. Tasks are submitted longest first, as locally.
"""
from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from typing import Any

from ..errors import ValidationError
from .extras import require
from .tasks import Plan, Task, attempt, order

#: this worker's fetched workloads: ObjectRef id -> pickled Inputs
FETCHED: dict = {}


def run_on_worker(task: Task, boxed_ref: list) -> dict:
    import ray
    ref = boxed_ref[0]
    payload = FETCHED.get(ref.hex())
    if payload is None:
        payload = FETCHED[ref.hex()] = ray.get(ref)
    return attempt(task, payload)


def run_ray(plan: Plan, address: str | None, on_result: Callable[[dict], Any]) -> dict:
    """Runs every task on the cluster at `address` (None: ray.init()'s choice -- the local
    cluster if one runs, else a new local instance); on_result(result) as each one ends.
    Returns what the run used: the address (None: ray.init()'s), the cluster's CPUs."""
    ray = require("ray", "--ray", "ray")
    if address:
        check_listening(address)
    try:
        ray.init(address=address or None, logging_level=logging.ERROR, log_to_driver=False)
    except (ConnectionError, ValueError) as e:
        raise ValidationError("--ray", "", f"cannot connect to Ray at {address or 'a local instance'}: {e}") from None
    try:
        used = {"address": address or None, "cpus": int(ray.cluster_resources().get("CPU", 0))}
        refs = {name: ray.put(payload) for name, payload in plan.payloads.items()}
        remote = ray.remote(num_cpus=1)(run_on_worker)
        pending = [remote.remote(task, [refs[task.workload]]) for task in order(plan)]
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    on_result(ray.get(ref))
        except BaseException:
            for ref in pending:
                ray.cancel(ref)
            raise
        return used
    finally:
        ray.shutdown()


def check_listening(address: str) -> None:
    """An ADDRESS (host:port, ray://host:port) nothing listens on is an error in seconds, not
    after Ray's retries (minutes). Other forms ("auto") are left to Ray."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as e:
        raise ValidationError("--ray", "", f"no Ray cluster at {address}: {e.strerror or e}") from None
