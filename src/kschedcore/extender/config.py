"""One entry of KubeSchedulerConfiguration v1 `extenders` (config/v1 types.go `Extender`),
decoded and validated (`validateExtenders`)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ManagedResource:
    """An extended resource the extender manages (`ExtenderManagedResource`)."""
    name: str
    ignored_by_scheduler: bool = False


@dataclass(frozen=True)
class ExtenderTLSConfig:
    """`tlsConfig` of an HTTPS extender (`ExtenderTLSConfig`): files or inline PEM data."""
    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: bytes = b""
    key_data: bytes = b""
    ca_data: bytes = b""


@dataclass(frozen=True)
class ExtenderConfig:
    """An extender as configured. Verbs left empty are not called; `http_timeout` in seconds
    (the v1 default, 5 s, applied by the decoder)."""
    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: int = 0
    bind_verb: str = ""
    enable_https: bool = False
    tls_config: ExtenderTLSConfig | None = None
    http_timeout: float = 5.0
    node_cache_capable: bool = False
    managed_resources: tuple[ManagedResource, ...] = ()
    ignorable: bool = False
