"""The fields of KubeSchedulerConfiguration v1 and of the in-tree plugins' args
(k8s.io/kube-scheduler/config/v1), for strict decoding: kube-scheduler decodes its
configuration with the strict serializer and refuses a field it does not know, naming every
one (`strict decoding error: unknown field "profiles[0].schedulerNam"`).

A schema is a dict of field -> sub-schema; LIST(s) is a list of s; ANY is a value not checked
(a Kubernetes type kschedcore reads elsewhere, e.g. a NodeAffinity, whose own reader validates).
"""
ANY = None


class LIST:
    def __init__(self, item):
        self.item = item


_TYPE_META = {"apiVersion": ANY, "kind": ANY}
_PLUGIN = {"name": ANY, "weight": ANY}
_PLUGIN_SET = {"enabled": LIST(_PLUGIN), "disabled": LIST(_PLUGIN)}
_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve",
           "permit", "preBind", "bind", "postBind", "multiPoint")
PROFILE = {
    "schedulerName": ANY, "percentageOfNodesToScore": ANY,
    "plugins": {p: _PLUGIN_SET for p in _POINTS},
    "pluginConfig": LIST({"name": ANY, "args": ANY}),
}
_EXTENDER = {"urlPrefix": ANY, "filterVerb": ANY, "preemptVerb": ANY, "prioritizeVerb": ANY, "weight": ANY,
             "bindVerb": ANY, "enableHTTPS": ANY, "tlsConfig": ANY, "httpTimeout": ANY, "nodeCacheCapable": ANY,
             "managedResources": ANY, "ignorable": ANY}
CONFIG = {
    **_TYPE_META, "parallelism": ANY,
    "leaderElection": {"leaderElect": ANY, "leaseDuration": ANY, "renewDeadline": ANY, "retryPeriod": ANY,
                       "resourceLock": ANY, "resourceName": ANY, "resourceNamespace": ANY},
    "clientConnection": {"kubeconfig": ANY, "acceptContentTypes": ANY, "contentType": ANY, "qps": ANY, "burst": ANY},
    "healthzBindAddress": ANY, "metricsBindAddress": ANY, "enableProfiling": ANY, "enableContentionProfiling": ANY,
    "percentageOfNodesToScore": ANY, "podInitialBackoffSeconds": ANY, "podMaxBackoffSeconds": ANY,
    "profiles": LIST(PROFILE), "extenders": LIST(_EXTENDER), "delayCacheUntilActive": ANY,
}
_RESOURCE = {"name": ANY, "weight": ANY}
_SHAPE = LIST({"utilization": ANY, "score": ANY})
#: the args of the in-tree plugins that take any, by plugin name
PLUGIN_ARGS = {
    "NodeResourcesFit": {**_TYPE_META, "ignoredResources": ANY, "ignoredResourceGroups": ANY,
                         "scoringStrategy": {"type": ANY, "resources": LIST(_RESOURCE),
                                             "requestedToCapacityRatio": {"shape": _SHAPE}}},
    "NodeResourcesBalancedAllocation": {**_TYPE_META, "resources": LIST(_RESOURCE)},
    "PodTopologySpread": {**_TYPE_META, "defaultConstraints": ANY, "defaultingType": ANY},
    "InterPodAffinity": {**_TYPE_META, "hardPodAffinityWeight": ANY, "ignorePreferredTermsOfExistingPods": ANY},
    "NodeAffinity": {**_TYPE_META, "addedAffinity": ANY},
    "DefaultPreemption": {**_TYPE_META, "minCandidateNodesPercentage": ANY, "minCandidateNodesAbsolute": ANY},
    "VolumeBinding": {**_TYPE_META, "bindTimeoutSeconds": ANY, "shape": _SHAPE},
    "DynamicResources": {**_TYPE_META, "filterTimeout": ANY, "bindingTimeout": ANY},
}


def unknown_fields(value, schema, path: str = "") -> list:
    """The paths of the fields `value` has and `schema` does not, in document order."""
    out: list[str] = []
    if schema is ANY:
        return out
    if isinstance(schema, LIST):
        if isinstance(value, list):
            for i, item in enumerate(value):
                out += unknown_fields(item, schema.item, f"{path}[{i}]")
        return out
    if not isinstance(value, dict):
        return out            # a wrong type is the reader's error, with its own message
    for key, sub in value.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in schema:
            out.append(where)
        else:
            out += unknown_fields(sub, schema[key], where)
    return out


def wrong_type(value, schema, path: str = ""):
    """(path, expected, the value) of the first value that is not the list or object its schema
    says, or None (a null is an unset field)."""
    if schema is ANY or value is None:
        return None
    if isinstance(schema, LIST):
        if not isinstance(value, list):
            return path, "a list", value
        return next((w for i, item in enumerate(value) if (w := wrong_type(item, schema.item, f"{path}[{i}]"))), None)
    if not isinstance(value, dict):
        return path, "an object", value
    return next((w for key, sub in value.items() if key in schema
                 and (w := wrong_type(sub, schema[key], f"{path}.{key}" if path else str(key)))), None)


def strict_error(paths) -> str:
    return "strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in paths)
