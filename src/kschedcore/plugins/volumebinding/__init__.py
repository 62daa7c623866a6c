from .volume_binding import VolumeBinding

__all__ = ["VolumeBinding"]
