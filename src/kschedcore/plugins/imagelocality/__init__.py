from .image_locality import ImageLocality

__all__ = ["ImageLocality"]
