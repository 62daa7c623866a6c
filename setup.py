"""Build the compiled hot path (the package kschedcore._kernel) with Cython.

Optimised, but without fast-math and without FP contraction: scores must match Go's
IEEE float64 arithmetic bit for bit. Every module gets the same flags: the per-node Filter
and Score functions are inlined from .pxd files into the module that runs the pass.
"""
import glob
import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("KSCHEDCORE_DEBUG") == "1"
KERNEL = "src/kschedcore/_kernel"
MODULES = ["ids", "table", "pod", "custom", "spread", "inter_pod", "volumes", "cycle", "equivalence", "node_kernel", "cross_copies"]


def has_libyaml() -> bool:
    """Whether libyaml's header and library are there to link (its loader is optional: without
    it, YAML is read by PyYAML's loader, the same objects, slower)."""
    import tempfile
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.errors import CompileError, LinkError
    compiler = new_compiler()
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as f:
            f.write("#include <yaml.h>\nint main(void) { yaml_parser_t p; return !yaml_parser_initialize(&p); }\n")
        try:
            objects = compiler.compile([src], output_dir=tmp)
            compiler.link_executable(objects, os.path.join(tmp, "probe"), libraries=["yaml"])
        except (CompileError, LinkError):
            return False
    return True


def extension(name, libraries=()):
    return Extension(
        f"kschedcore._kernel.{name}",
        [f"{KERNEL}/{name}.pyx"],
        libraries=list(libraries),
        # a module is rebuilt when any .pxd it may cimport (or the pool) changes
        depends=sorted(glob.glob(f"{KERNEL}/*.pxd")) + [f"{KERNEL}/pool.h"],
        include_dirs=[np.get_include(), KERNEL],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3", "-fno-fast-math", "-ffp-contract=off", "-pthread"],
        extra_link_args=["-pthread"],
    )


setup(
    ext_modules=cythonize(
        [extension(name) for name in MODULES]
        + ([extension("yaml_events", libraries=["yaml"])] if os.environ.get("KSCHEDCORE_NO_LIBYAML") != "1"
           and has_libyaml() else []),
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
