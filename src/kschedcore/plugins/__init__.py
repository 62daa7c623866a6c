"""In-tree plugins, one folder each (as pkg/scheduler/framework/plugins/<name>/): the plugin,
its kernel glue (the compiled pod's fields, kernel ids and settings) and its queueing hints.
`registry.py` registers them by name; `helper/` holds what several share. Coscheduling is
scheduler-plugins' (out of tree): register it to enable it by name."""
from . import registry  # noqa: F401,E402  (fills framework.registry.IN_TREE)
