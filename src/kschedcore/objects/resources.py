"""Resource names and their classification, as kube-scheduler folds them (semantics §1.2)."""
import re
from functools import lru_cache

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"
#: The three native resources with their own columns, in kube-scheduler's check order.
NATIVE = (CPU, MEMORY, EPHEMERAL_STORAGE)

DEFAULT_MILLI_CPU_REQUEST = 100                 # schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024      # schedutil.DefaultMemoryRequest

_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def is_prefixed_native(name: str) -> bool:
    return "kubernetes.io/" in name


def is_native(name: str) -> bool:
    return "/" not in name or is_prefixed_native(name)


def is_qualified_name(name: str) -> bool:
    """validation.IsQualifiedName: [prefix/]name with a DNS-1123 prefix."""
    prefix, slash, short = name.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(short) <= 63 and bool(_QUALIFIED_NAME.match(short))


@lru_cache(maxsize=4096)
def is_extended(name: str) -> bool:
    """v1helper.IsExtendedResourceName: domain-prefixed, not *kubernetes.io/*."""
    if is_native(name) or name.startswith("requests."):
        return False
    return is_qualified_name("requests." + name)


def is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


@lru_cache(maxsize=4096)
def is_scalar(name: str) -> bool:
    """schedutil.IsScalarResourceName: the names that become integer 'scalar' entries."""
    return (is_extended(name) or is_hugepages(name) or is_prefixed_native(name)
            or name.startswith("attachable-volumes-"))


@lru_cache(maxsize=4096)
def counts(name: str) -> bool:
    """True if a request/allocatable entry of this name takes part in scheduling."""
    return name in NATIVE or is_scalar(name)


@lru_cache(maxsize=4096)
def container_resource_error(name: str) -> str:
    """The API server's validateContainerResourceName: '' if `name` may be a container's
    request or limit, else its complaint."""
    if not is_qualified_name(name):
        return f'Invalid value: "{name}": must be a qualified name (an optional DNS subdomain prefix and "/")'
    if "/" not in name:
        if name not in NATIVE and not is_hugepages(name):
            return f'Invalid value: "{name}": must be a standard resource for containers'
    elif not is_native(name) and not is_extended(name):
        return f'Invalid value: "{name}": doesn\'t follow extended resource name standard'
    return ""


def is_pod_level_supported(name: str) -> bool:
    return name in (CPU, MEMORY) or is_hugepages(name)
