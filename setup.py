"""Build the compiled hot path with Cython: the pass (kschedcore._kernels, NodeKernel) and the
modules it is built on (the package kschedcore._native).

Optimised, but without fast-math and without FP contraction: scores must match Go's
IEEE float64 arithmetic bit for bit. Every module gets the same code-generation flags: the
per-node Filter and Score functions are inlined from .pxd files into the module that runs the
pass.

The build is parallel: Cython translates the modules in processes (cythonize's nthreads) and
the C compiler runs once per module in threads (build_ext's parallel), one per CPU unless
`-j` says otherwise, largest module first. Cython's memoryview support, otherwise about 28,000
lines of C in every module, is compiled once into a shared utility module (_native._cyutility).
No debug information (-g0): the same instructions (objdump of _kernels.o), about 30% less C
compile time.
"""
import glob
import os

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("KSCHEDCORE_DEBUG") == "1"
PACKAGE = "src/kschedcore"
NATIVE = f"{PACKAGE}/_native"
#: the modules the pass is built on, the largest generated C first (the parallel build's order)
NATIVE_MODULES = ["cross_copies", "pod", "equivalence", "spread", "custom", "cycle", "volumes", "table",
                  "inter_pod", "ids"]
SHARED_UTILITY = "kschedcore._native._cyutility"
FLAGS = ["-O3", "-fno-fast-math", "-ffp-contract=off", "-pthread"] + ([] if DEBUG else ["-g0"])


def has_libyaml() -> bool:
    """Whether libyaml's header and library are there to link (its loader is optional: without
    it, YAML is read by PyYAML's loader, the same objects, slower)."""
    import tempfile
    from setuptools._distutils.ccompiler import new_compiler
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as f:
            f.write("#include <yaml.h>\nint main(void) { yaml_parser_t p; return !yaml_parser_initialize(&p); }\n")
        try:
            compiler = new_compiler()
            objects = compiler.compile([src], output_dir=tmp)
            compiler.link_executable(objects, os.path.join(tmp, "probe"), libraries=["yaml"])
        except Exception:   # noqa: BLE001 -- setuptools versions raise different CompileError classes
            return False    # any failure to build the probe means: no libyaml, read YAML with PyYAML
    return True


def extension(name: str, source: str, libraries=()) -> Extension:
    """One compiled module, with the flags every module shares."""
    import numpy as np
    return Extension(
        name,
        [source],
        libraries=list(libraries),
        # a module is rebuilt when any .pxd it may cimport (or the pool) changes
        depends=sorted(glob.glob(f"{PACKAGE}/*.pxd") + glob.glob(f"{NATIVE}/*.pxd")) + [f"{NATIVE}/pool.h"],
        include_dirs=[np.get_include(), NATIVE],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=FLAGS,
        extra_link_args=["-pthread"],
    )


def extensions() -> list:
    """The pass first (the largest), the shared utility module, the pass's modules, the YAML loader."""
    mods = [extension("kschedcore._kernels", f"{PACKAGE}/_kernels.pyx"),
            extension(SHARED_UTILITY, f"{NATIVE}/_cyutility.c")]
    mods += [extension(f"kschedcore._native.{name}", f"{NATIVE}/{name}.pyx") for name in NATIVE_MODULES]
    if os.environ.get("KSCHEDCORE_NO_LIBYAML") != "1" and has_libyaml():
        mods.append(extension("kschedcore._native.yaml_events", f"{NATIVE}/yaml_events.pyx", libraries=["yaml"]))
    return mods


class BuildExt(build_ext):
    """build_ext that translates with Cython when the command is set up (not when setup.py is
    read: pip reads it several times) and compiles the modules in parallel."""

    def finalize_options(self) -> None:
        from Cython.Build import cythonize
        if not self.parallel:           # a plain `pip install .` or build_ext without -j
            self.parallel = os.cpu_count() or 1
        self.distribution.ext_modules = cythonize(
            self.distribution.ext_modules,
            nthreads=int(self.parallel) if int(self.parallel) > 1 else 0,
            language_level=3,
            shared_utility_qualified_name=SHARED_UTILITY,
            compiler_directives={
                # KSCHEDCORE_DEBUG=1 builds with bounds and initialisation checks, for debugging
                "boundscheck": DEBUG,
                "wraparound": False,
                "cdivision": True,
                "initializedcheck": DEBUG,
            },
        )
        super().finalize_options()


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})
