from .interpod_affinity import InterPodAffinity

__all__ = ["InterPodAffinity"]
