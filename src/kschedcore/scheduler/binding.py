"""The binding cycle (schedule_one.go bindingCycle, runtime's Run*Plugins): Reserve, Permit
(waiting pods and their timeouts), PreBind, Bind, PostBind, and Unreserve on every failure, on
the loop's clock.

A binding-cycle plugin implements any of `reserve` / `unreserve` / `permit` / `pre_bind` /
`bind` / `post_bind`, each called as (state, pod, node_name, handle) -- `state` being the
CycleState of the pod's scheduling cycle -- run in the order given. A Reserve or PreBind failure
unreserves every Reserve plugin in reverse order, forgets the pod and requeues it; the first
Bind plugin that does not return SKIP binds (else the loop's `binder`). A failed Bind requeues
the pod on the error backoff, so no pod is lost or bound twice.
"""
import heapq

from ..extender.runtime import extenders_binding
from ..framework.interface import SKIP, CycleState, Status
from ..framework.status import Code
from ..plugins.helper.predicates import ParseError, required_node_affinity_matches, untolerated
from ..util.gomath import go_duration


class BindingPlugins:
    """Binding-cycle plugins by the extension points they implement, in the order given."""

    def __init__(self, plugins):
        self.any = bool(plugins)
        self.permit = [p for p in plugins if hasattr(p, "permit")]
        self.reserve = [p for p in plugins if hasattr(p, "reserve") or hasattr(p, "unreserve")]
        self.pre_bind = [p for p in plugins if hasattr(p, "pre_bind")]
        self.bind = [p for p in plugins if hasattr(p, "bind")]
        self.post_bind = [p for p in plugins if hasattr(p, "post_bind")]


class BindingCycle:
    """The loop's binding cycles. `sim` is the loop: the framework handle plugins get, and
    where a pod goes on (bound, or back to the queue)."""

    def __init__(self, sim, plugin_sets: dict, default: BindingPlugins, dispatch=None):
        self.sim = sim
        self._table = sim.sched.cache.table
        self._sets, self._default = plugin_sets, default
        self.any_plugins = any(ps.any for ps in plugin_sets.values()) or default.any
        self.waiting: dict = {}         # pod key -> (QueuedPodInfo, [plugin names]): waiting at Permit
        self._permit_timers: list = []  # heap of (deadline, seq, pod key, plugin name, timeout)
        self._bindings: list = []       # heap of (completion time, seq, pod key, QueuedPodInfo)
        self._allowed: set[str] = set()  # allowed by another pod's Permit before its own Permit ended
        self._assumed_at: dict[str, int] = {}  # pod key -> the node table's version when it was assumed
        self._states: dict = {}         # pod key -> its cycle's CycleState, until its binding cycle ends
        self.by_extender: set[str] = set()  # pods an extender bound (no assigned-pod event follows)
        #: dispatch(key, pinfo): start a binding (default: on the virtual clock)
        self.dispatch = dispatch or self._on_clock

    def plugins(self, pod) -> BindingPlugins:
        """The binding-cycle plugins of the pod's profile."""
        return self._sets.get(pod.scheduler_name, self._default)

    def state(self, key) -> CycleState:
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = CycleState()
        return state

    # ---- after assume ----------------------------------------------------------------------------
    def begin(self, pod, node: str, pinfo, state) -> None:
        """Reserve and Permit of an assumed pod, then its binding (now or once allowed)."""
        self._assumed_at[pod.key] = self._table.node_version
        if self.any_plugins:
            self._states[pod.key] = state     # the binding cycle's plugins share it
            plugins = self.plugins(pod)
            if plugins.reserve and not self._reserve(pod, node, pinfo):
                return
            if plugins.permit and not self._permit(pod, node, pinfo):
                return
        self.dispatch(pod.key, pinfo)

    def _on_clock(self, key, pinfo) -> None:
        latency = self.sim.bind_latency
        if latency <= 0:
            if self.sim.binds_late(key):
                self.sim.late_binding(key, pinfo)
            else:
                self.finish(key, pinfo)
        else:
            heapq.heappush(self._bindings, (self.sim.clock.now() + latency, next(self.sim.seq), key, pinfo))

    def _reserve(self, pod, node, pinfo) -> bool:
        """RunReservePluginsReserve: in order; the first failure unreserves and rejects."""
        for plugin in self.plugins(pod).reserve:
            if not hasattr(plugin, "reserve"):          # an Unreserve-only plugin
                continue
            message = _failure(plugin.reserve(self.state(pod.key), pod, node, self.sim))
            if message:
                self.reject(pod.key, pinfo, plugin.name, f"0/1 nodes are available: 1 {message}.")
                return False
        return True

    def unreserve(self, pod, node) -> None:
        """RunReservePluginsUnreserve: every Reserve plugin, in reverse order (the pod's
        binding cycle ends: its CycleState goes). DynamicResources' Unreserve first: the pod's
        reservations of its claims are dropped (a claim reserved by nobody is deallocated)."""
        self.sim.sched.unreserve_claims(pod)
        if not self.any_plugins:
            return
        for plugin in reversed(self.plugins(pod).reserve):
            if hasattr(plugin, "unreserve"):
                plugin.unreserve(self.state(pod.key), pod, node, self.sim)
        self._states.pop(pod.key, None)

    # ---- Permit ------------------------------------------------------------------------------------
    def _permit(self, pod, node, pinfo) -> bool:
        """RunPermitPlugins: True when the pod may bind now; a rejection unreserves it, a wait
        parks it (with one timer per waiting plugin, the shortest deciding)."""
        waits = []
        for plugin in self.plugins(pod).permit:
            status = plugin.permit(self.state(pod.key), pod, node, self.sim)
            if status.code.rejects:
                self.reject(pod.key, pinfo, plugin.name, f"0/1 nodes are available: 1 {status.message}.")
                return False
            if status.code == Code.WAIT:
                waits.append((status.timeout, plugin.name))
        if pod.key not in self.sim.binding:          # a plugin's call rejected the pod meanwhile
            return False
        if not waits or pod.key in self._allowed:
            self._allowed.discard(pod.key)
            return True
        self.waiting[pod.key] = (pinfo, [name for _, name in waits])
        now = self.sim.clock.now()
        for timeout, name in waits:
            heapq.heappush(self._permit_timers, (now + timeout, next(self.sim.seq), pod.key, name, timeout))
        return False

    def allow(self, key) -> None:
        """A waiting pod may bind (all its waiting plugins at once, as coscheduling allows)."""
        entry = self.waiting.pop(key, None)
        if entry is None:
            self._allowed.add(key)                # allowed while its own Permit is still running
            return
        self.dispatch(key, entry[0])

    def reject_waiting(self, key, message) -> None:
        entry = self.waiting.pop(key, None)
        if entry is not None:
            self.reject(key, entry[0], entry[1][0], message)

    def reject(self, key, pinfo, plugin, message) -> None:
        """Unreserve: the assumed pod is forgotten and requeued with the plugin as rejector."""
        self.waiting.pop(key, None)
        self._assumed_at.pop(key, None)
        node = self.sim.binding.pop(key, None)
        if node is None:
            return
        self.unreserve(self.sim.pods[key], node)
        self.sim.given_up(key, node, pinfo, {plugin}, message)

    def forget(self, key):
        """The pod is deleted: its waiting entry (the QueuedPodInfo) and assume time go."""
        self._assumed_at.pop(key, None)
        entry = self.waiting.pop(key, None)
        return entry[0] if entry is not None else None

    def _fire_permit_timers(self) -> None:
        now = self.sim.clock.now()
        while self._permit_timers and self._permit_timers[0][0] <= now:
            _, _, key, name, timeout = heapq.heappop(self._permit_timers)
            if key not in self.waiting:
                continue
            plugin = next(p for p in self.plugins(self.sim.pods[key]).permit if p.name == name)
            others = plugin.on_timeout(key, self.sim) if hasattr(plugin, "on_timeout") else []
            self.reject_waiting(key, f"rejected due to timeout after waiting {go_duration(timeout)} at plugin {name}")
            for other in others:
                self.reject_waiting(other, f"rejected by {name}: its group timed out")

    # ---- binding ----------------------------------------------------------------------------------
    def pending(self) -> bool:
        return bool(self._bindings or self._permit_timers)

    def next_wakeup(self):
        times = [h[0][0] for h in (self._bindings, self._permit_timers) if h]
        return min(times) if times else None

    def complete_due(self) -> None:
        """The permit timeouts and bindings whose time has come."""
        if self._permit_timers:
            self._fire_permit_timers()
        now = self.sim.clock.now()
        while self._bindings and self._bindings[0][0] <= now:
            _, _, key, pinfo = heapq.heappop(self._bindings)
            self.finish(key, pinfo)

    def finish(self, key, pinfo, bind_error=None, bound_elsewhere=False) -> None:
        """The binding cycle's end: bound, or (Bind failed) Unreserve, forget the assumed pod
        and send it back to the queue on the error path. bound_elsewhere: the Bind call was
        made outside (a live binder thread) and returned `bind_error`."""
        sim = self.sim
        node = sim.binding.pop(key, None)
        if node is None:                     # deleted while binding
            sim.queue.done(pinfo.uid)
            return
        pod = sim.pods[key]
        error = self._bind(pod, node, None if bound_elsewhere else sim.binder, bound_elsewhere)
        if error is None:
            error = bind_error
        if error is None:
            if self.any_plugins:
                for plugin in self.plugins(pod).post_bind:
                    plugin.post_bind(self.state(key), pod, node, sim)
                self._states.pop(key, None)
            sim.bound_to(key, node, pinfo, in_api=key not in self.by_extender)
            self.by_extender.discard(key)
            return
        self.unreserve(pod, node)
        sim.given_up(key, node, pinfo, set(), error)

    def _bind(self, pod, node, binder, bound_elsewhere=False):
        t = self._table
        row = t.row_of.get(node)
        if row is None:
            return f'binding rejected: node "{node}" not found'
        if self._assumed_at.pop(pod.key, t.node_version) != t.node_version:
            reason = _admit(pod, t.nodes[row], t, row)    # the node changed since the pod was assumed
            if reason:
                return f"Pod admission rejected by the node: {reason}"
        if not self.any_plugins:
            return self._bind_call(pod, node, binder, bound_elsewhere)
        plugins = self.plugins(pod)
        for plugin in plugins.pre_bind:
            message = _failure(plugin.pre_bind(self.state(pod.key), pod, node, self.sim))
            if message:
                return f'running PreBind plugin "{plugin.name}": {message}'
        if not bound_elsewhere:
            by_extender, message = self._extenders_binding(pod, node)
            if by_extender:
                return message
            for plugin in plugins.bind:           # the first that does not skip binds
                message = plugin.bind(self.state(pod.key), pod, node, self.sim)
                if message is not SKIP:
                    message = _failure(message)
                    return f'running Bind plugin "{plugin.name}": {message}' if message else None
        return binder(pod, node) if binder is not None else None

    def _bind_call(self, pod, node, binder, bound_elsewhere):
        if not bound_elsewhere:
            by_extender, message = self._extenders_binding(pod, node)
            if by_extender:
                return message
        return binder(pod, node) if binder is not None else None

    def _extenders_binding(self, pod, node):
        """extendersBinding before the Bind plugins: (bound by an extender, its error). A pod
        an extender binds stays assumed: no API server hears of it here."""
        extenders = self.sim.sched.cycles.extenders
        if not extenders:
            return False, None
        by_extender, message = extenders_binding(extenders, pod, node)
        if by_extender and message is None:
            self.by_extender.add(pod.key)
        return by_extender, message

    def states_alive(self) -> set:
        """The pods whose binding cycle holds a CycleState (for checks)."""
        return set(self._states)


def _failure(answer):
    """A Reserve / PreBind / Bind answer's failure message: None, '' and Success are none."""
    if isinstance(answer, Status):
        return None if answer.code == Code.SUCCESS else answer.message
    return answer or None


def _admit(pod, node, table, row) -> str:
    """The kubelet's admission, simplified to what a node update can break: resources (the
    pod is counted on the row already), taints, node selector and required affinity."""
    if table.pod_count[row] > table.allowed_pods[row]:
        return "Too many pods"
    for name, amount in pod.requests.items():
        col = table.resources.get(name)
        if amount and col >= 0 and table.requested[row, col] > table.alloc[row, col]:
            return f"Insufficient {name}"
    if untolerated(node.taints, pod.tolerations):
        return "untolerated taint"
    try:
        if not required_node_affinity_matches(pod, node):
            return "node affinity/selector mismatch"
    except (ParseError, Exception):          # a term that does not parse matches nothing
        return "node affinity/selector mismatch"
    return ""
