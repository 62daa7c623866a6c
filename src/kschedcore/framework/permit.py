"""Deprecated import path (kept for one release): the Permit statuses are in
kschedcore.framework.interface, Coscheduling in kschedcore.plugins.coscheduling."""
import warnings

from ..plugins.coscheduling import POD_GROUP_LABEL, Coscheduling, PodGroup  # noqa: F401
from .interface import MAX_PERMIT_TIMEOUT as MAX_TIMEOUT  # noqa: F401
from .interface import SKIP, Allow, PermitPlugin, Reject, Wait  # noqa: F401

warnings.warn("kschedcore.framework.permit is deprecated: import Coscheduling from kschedcore.plugins.coscheduling "
              "and Allow / Wait / Reject from kschedcore.framework.interface", DeprecationWarning, stacklevel=2)
