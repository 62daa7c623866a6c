"""Cluster state as the scheduler cache holds it (semantics §1.3, §3.5, §7).

One ``NodeInfo`` per node (pods, Requested, NonZeroRequested, used host ports, allocatable,
image names), the node-tree order (§7.2) and the image summaries (§7.3).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .requests import Resource, node_allocatable, pod_resource_on_node

DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"


def pod_key(pod: dict) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def pod_uid_key(pod: dict) -> str:
    uid = (pod.get("metadata") or {}).get("uid")
    return uid if uid else pod_key(pod)


def node_name(node: dict) -> str:
    return (node.get("metadata") or {}).get("name") or ""


# --- host ports (§3.5) ---------------------------------------------------------------------

def host_ports(pod: dict) -> list[tuple[str, str, int]]:
    """util.GetHostPorts: ports with hostPort > 0 of sidecars and app containers, as
    sanitized (hostIP or 0.0.0.0, protocol or TCP, hostPort)."""
    spec = pod.get("spec") or {}
    out = []
    containers = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    containers += list(spec.get("containers") or [])
    for c in containers:
        for p in c.get("ports") or []:
            port = int(p.get("hostPort") or 0)
            if port <= 0:
                continue
            ip = p.get("hostIP") or DEFAULT_BIND_ALL_HOST_IP
            proto = p.get("protocol") or "TCP"
            out.append((ip, proto, port))
    return out


def ports_conflict(used: dict[str, set[tuple[str, int]]], ip: str, proto: str, port: int) -> bool:
    """HostPortInfo.CheckConflict."""
    if port <= 0:
        return False
    if ip == DEFAULT_BIND_ALL_HOST_IP:
        for pairs in used.values():
            if (proto, port) in pairs:
                return True
        return False
    for key in (DEFAULT_BIND_ALL_HOST_IP, ip):
        if (proto, port) in used.get(key, set()):
            return True
    return False


# --- NodeInfo --------------------------------------------------------------------------------

@dataclass
class NodeInfo:
    node: dict
    allocatable: Resource
    pods: list[dict] = field(default_factory=list)
    requested: Resource = field(default_factory=Resource)
    non0_cpu: int = 0
    non0_mem: int = 0
    # HostPortInfo: ip -> {(protocol, port)} (a set, as upstream: removing a pod removes its
    # entries even if another pod on the node uses the same one).
    used_ports: dict[str, set[tuple[str, int]]] = field(default_factory=dict)
    image_names: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return node_name(self.node)

    def add_pod(self, pod: dict) -> None:
        """NodeInfo.AddPod / update(+1)."""
        self.pods.append(pod)
        self._update(pod, +1)

    def remove_pod(self, pod: dict) -> None:
        """NodeInfo.RemovePod: the last pod moves into the removed slot (pods are keyed by
        UID, as GetPodKey does; ns/name when a UID is missing)."""
        key = pod_uid_key(pod)
        for i, p in enumerate(self.pods):
            if pod_uid_key(p) == key:
                removed = self.pods[i]
                self.pods[i] = self.pods[-1]
                self.pods.pop()
                self._update(removed, -1)
                return
        raise KeyError(f"pod {key} not on node {self.name}")

    def _update(self, pod: dict, sign: int) -> None:
        pr = pod_resource_on_node(pod)
        self.requested.add_resource(pr.resource, sign)
        self.non0_cpu += sign * pr.non0_cpu
        self.non0_mem += sign * pr.non0_mem
        for ip, proto, port in host_ports(pod):
            if sign > 0:
                self.used_ports.setdefault(ip, set()).add((proto, port))
            else:
                pairs = self.used_ports.get(ip)
                if pairs is not None:
                    pairs.discard((proto, port))
                    if not pairs:
                        del self.used_ports[ip]


def new_node_info(node: dict) -> NodeInfo:
    names: list[str] = []
    for image in (node.get("status") or {}).get("images") or []:
        for name in image.get("names") or []:
            if name not in names:
                names.append(name)
    return NodeInfo(node=node, allocatable=node_allocatable(node), image_names=names)


# --- node tree order (§7.2) -----------------------------------------------------------------

def zone_key(node: dict) -> str:
    """utilnode.GetZoneKey: failure-domain.beta.* labels win over topology.kubernetes.io/*."""
    labels = (node.get("metadata") or {}).get("labels")
    if labels is None:
        return ""
    zone = labels.get("failure-domain.beta.kubernetes.io/zone")
    if zone is None:
        zone = labels.get("topology.kubernetes.io/zone", "")
    region = labels.get("failure-domain.beta.kubernetes.io/region")
    if region is None:
        region = labels.get("topology.kubernetes.io/region", "")
    if region == "" and zone == "":
        return ""
    return region + ":\x00:" + zone


def node_tree_order(nodes: list[dict]) -> list[str]:
    """nodeTree.list(): zones in first-seen order; the first node of each zone, then the
    second of each, and so on."""
    zones: list[str] = []
    tree: dict[str, list[str]] = {}
    for node in nodes:
        z = zone_key(node)
        if z not in tree:
            zones.append(z)
            tree[z] = []
        if node_name(node) not in tree[z]:
            tree[z].append(node_name(node))
    out: list[str] = []
    index = 0
    total = sum(len(v) for v in tree.values())
    while len(out) < total:
        for z in zones:
            if index < len(tree[z]):
                out.append(tree[z][index])
        index += 1
    return out


# --- the cluster -----------------------------------------------------------------------------

class Cluster:
    """The cache: NodeInfos by name, input order, node-tree order, image summaries."""

    def __init__(self, nodes: list[dict]):
        self.input_order: list[str] = []
        self.node_infos: dict[str, NodeInfo] = {}
        # §7.3: size from the first node (in add order) that reported the name.
        self.image_size: dict[str, int] = {}
        self.image_nodes: dict[str, set[str]] = {}
        for node in nodes:
            name = node_name(node)
            if name in self.node_infos:
                continue
            self.input_order.append(name)
            info = new_node_info(node)
            self.node_infos[name] = info
            for image in (node.get("status") or {}).get("images") or []:
                for image_name in image.get("names") or []:
                    if image_name not in self.image_size:
                        self.image_size[image_name] = int(image.get("sizeBytes") or 0)
                    self.image_nodes.setdefault(image_name, set()).add(name)
        self.tree_order: list[str] = node_tree_order([self.node_infos[n].node for n in self.input_order])

    def num_nodes(self) -> int:
        return len(self.node_infos)

    def image_num_nodes(self, image_name: str) -> int:
        """NumNodes of an image summary: the nodes currently having that name (§7.3, taken
        as never stale here)."""
        return len(self.image_nodes.get(image_name, ()))

    def add_pod(self, pod: dict, node: str) -> bool:
        """Add a bound or assumed pod to its node; False if the node is unknown."""
        info = self.node_infos.get(node)
        if info is None:
            return False
        info.add_pod(pod)
        return True
