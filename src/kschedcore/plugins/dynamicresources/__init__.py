from .dynamic_resources import DynamicResources

__all__ = ["DynamicResources"]
