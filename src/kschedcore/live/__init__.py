"""kschedcore on a live cluster: a client of the API server, snapshots and recordings of a
cluster, and `Runner`, the scheduler that binds a cluster's pending pods."""
from .client import ApiError, Client, connect
from .lists import list_objects, snapshot, snapshot_document
from .record import Recorder
from .reflector import Reflector
from .resources import RESOURCES, Resource
from .runner import Runner

__all__ = ["ApiError", "Client", "connect", "list_objects", "snapshot", "snapshot_document", "Recorder",
           "Reflector", "RESOURCES", "Resource", "Runner"]
