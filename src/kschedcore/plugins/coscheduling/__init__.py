from .coscheduling import POD_GROUP_LABEL, Coscheduling, PodGroup

__all__ = ["Coscheduling", "POD_GROUP_LABEL", "PodGroup"]
