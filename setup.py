"""Build the compiled hot path (kschedcore._kernels) with Cython.

Optimised, but without fast-math and without FP contraction: scores must match Go's
IEEE float64 arithmetic bit for bit.
"""
import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("KSCHEDCORE_DEBUG") == "1"

extensions = [
    Extension(
        "kschedcore._kernels",
        ["src/kschedcore/_kernels.pyx"],
        depends=["src/kschedcore/_pool.h", "src/kschedcore/_kernels.pxd"],
        include_dirs=[np.get_include(), "src/kschedcore"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3", "-fno-fast-math", "-ffp-contract=off", "-pthread"],
        extra_link_args=["-pthread"],
    )
]

setup(
    ext_modules=cythonize(
        extensions,
        language_level=3,
        compiler_directives={
            # KSCHEDCORE_DEBUG=1 builds with bounds and initialisation checks, for debugging
            "boundscheck": DEBUG,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": DEBUG,
        },
    )
)
