"""The kernel's plugin ids, status codes and limits as Python ints (declared in ids.pxd)."""
