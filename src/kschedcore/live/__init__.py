"""kschedcore on a live cluster: a client of the API server, snapshots and recordings of a
cluster, `Runner`, the scheduler that binds a cluster's pending pods, and `ExtenderServer`, a
profile serving kube-scheduler's extender protocol."""
from .client import ApiError, Client, connect
from .extender_server import ExtenderServer
from .lists import list_objects, snapshot, snapshot_document
from .record import Recorder
from .reflector import Reflector
from .resources import RESOURCES, Resource
from .runner import Runner

__all__ = ["ApiError", "Client", "connect", "ExtenderServer", "list_objects", "snapshot", "snapshot_document",
           "Recorder", "Reflector", "RESOURCES", "Resource", "Runner"]
