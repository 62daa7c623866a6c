"""ImageLocality (plugins/imagelocality): prefer nodes that already have the pod's images."""
import numpy as np

from ..._native import S_IMAGE_LOCALITY
from ...framework.kernel_plugin import EMPTY_I32, KernelPlugin


class ImageLocality(KernelPlugin):
    name = "ImageLocality"
    score_id = S_IMAGE_LOCALITY
    default_weight = 1

    def compile(self, pod, cp, table):
        # interning an image no node has is harmless: it just never matches
        ids = [table.image_id(name) for name in pod.images]
        cp.images = np.asarray(ids, np.int32) if ids else EMPTY_I32
        cp.n_containers = len(pod.images)
