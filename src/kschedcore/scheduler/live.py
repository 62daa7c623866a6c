"""The loop on real threads: one scheduling thread, a pool of binder threads.

`LiveScheduler` runs the same state machine as `Simulation` on the wall clock. The scheduling
thread blocks on the queue, runs cycles and assumes pods; Bind calls (the `binder`, e.g. an API
client's POST of the binding) run on binder threads and report back. Event intake may come
from any thread. One lock serialises everything but the Bind calls themselves, so the cache
sees one change at a time. `stop()` ends the threads cleanly: bindings in flight finish.
"""
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ..extender.runtime import extenders_binding
from ..util.clock import RealClock
from .loop import Simulation

__all__ = ["LiveScheduler"]


class LiveScheduler:
    """The Simulation's loop on the wall clock: a scheduling thread blocking on the queue, Bind
    calls (`binder(pod, node_name)`, None or an error message) on `binder_threads` threads, event
    intake from any thread; `on_cycle(key, seconds)` hears each cycle's duration. `start()` / `stop()` or `with`; `wait_until_bound(keys)`."""

    def __init__(self, scheduler, *, binder=None, binder_threads: int = 4, on_cycle=None, **queue_options):
        self.sim = Simulation(scheduler, clock=RealClock(), bind_dispatch=self._start_binding, **queue_options)
        self.binder = binder
        self.lock = threading.RLock()
        self._pool = ThreadPoolExecutor(binder_threads, thread_name_prefix="kschedcore-bind")
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._in_flight = 0
        self._idle = threading.Condition(self.lock)
        #: on_cycle(pod key, seconds): told after each cycle, under the lock (metrics)
        self.on_cycle = on_cycle

    # ---- event intake (any thread) ----------------------------------------------------------
    def add_pod(self, pod):
        with self.lock:
            self.sim.add_pod(pod)

    def update_pod(self, pod):
        with self.lock:
            self.sim.update_pod(pod)

    def delete_pod(self, key, missing_ok=False):
        with self.lock:
            self.sim.delete_pod(key, missing_ok)

    def add_node(self, node):
        with self.lock:
            self.sim.add_node(node)

    def update_node(self, node):
        with self.lock:
            self.sim.update_node(node)

    def remove_node(self, name, missing_ok=False):
        with self.lock:
            self.sim.remove_node(name, missing_ok)

    def outcome(self, key):
        with self.lock:
            return self.sim.outcomes.get(key)

    # ---- the threads -------------------------------------------------------------------------
    def start(self) -> "LiveScheduler":
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="kschedcore-schedule", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stops scheduling, lets bindings in flight finish, and joins the threads."""
        self._stopping.set()
        self.sim.queue.close()
        if self._thread is not None:
            self._thread.join(timeout)
        self._pool.shutdown(wait=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _run(self):
        queue = self.sim.queue
        while not self._stopping.is_set():
            pinfo = queue.pop(timeout=0.05)       # wakes for backoff flushes and stop()
            with self.lock:
                if pinfo is not None:
                    t0 = time.perf_counter()
                    self.sim.process(pinfo)
                    if self.on_cycle is not None:
                        self.on_cycle(pinfo.pod.key, time.perf_counter() - t0)
                # the last victims of a preemption go after the next cycle (or at once when idle)
                self.sim.land_preemptions(idle=pinfo is None)

    def _start_binding(self, key, pinfo):
        node, pod = self.sim.binding[key], self.sim.pods[key]
        self._in_flight += 1

        def bind():
            error, by_extender = None, False
            try:
                # extendersBinding first: the first interested binder binds instead
                by_extender, error = extenders_binding(self.sim.sched.cycles.extenders, pod, node)
                if not by_extender:
                    error = self.binder(pod, node) if self.binder is not None else None
            except Exception as e:         # a failing binder must not lose the pod
                error = f"binding failed: {e}"
            with self.lock:
                if by_extender and error is None:
                    self.sim.bindings.by_extender.add(key)
                self.sim.finish_binding(key, pinfo, bind_error=error)
                self._in_flight -= 1
                self._idle.notify_all()

        self._pool.submit(bind)

    def wait_until_bound(self, keys, timeout: float = 10.0) -> bool:
        """Blocks until every pod in `keys` is bound (True) or the timeout passes (False)."""
        keys = set(keys)
        with self._idle:
            return self._idle.wait_for(lambda: keys <= set(self.sim.bound), timeout)
