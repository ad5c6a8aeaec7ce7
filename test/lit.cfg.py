"""lit configuration for Lamina's FileCheck tests.

Puts Lamina's tools (lamina-opt, lamina-compile, lamina-run) and the pinned
wheels' tools (FileCheck, mlir-opt, mlir-translate, llc) on PATH, defines
%PYTHON, and turns optional tools and devices into lit features so that tests
needing them are unsupported, not failing, where they are absent.
"""

import os
import shutil
import subprocess
import sys

import lit.formats

from lamina.targets.cuda import find_nvdisasm, find_ptxas
from lamina.targets.host import detect_host, host_has_amx
from lamina.toolchain import tool_dirs

config.name = "Lamina"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir", ".py", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "Output")
config.excludes = ["lit.cfg.py", "pytest", "Inputs", "Output", "__pycache__", "conftest.py"]

scripts_dir = os.path.dirname(sys.executable)
path = [scripts_dir] + tool_dirs() + [config.environment.get("PATH", os.environ.get("PATH", ""))]
config.environment["PATH"] = os.pathsep.join(path)
for variable in ("HOME", "TMPDIR", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "LAMINA_DEBUG"):
    if variable in os.environ:
        config.environment[variable] = os.environ[variable]

# Compiled programs and tuned schedules are cached in a directory of this
# run's own, never the user's: a cached entry must not hide what a test
# checks, nor a test's tuning change another test's schedules.
cache_dir = os.path.join(config.test_exec_root, "lamina-cache")
shutil.rmtree(cache_dir, ignore_errors=True)
os.makedirs(cache_dir, exist_ok=True)
config.environment["LAMINA_CACHE_DIR"] = cache_dir

config.substitutions.append(("%PYTHON", sys.executable))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))


def _which(tool):
    return shutil.which(tool, path=config.environment["PATH"])


if _which("cc"):
    config.available_features.add("cc")
ptxas = find_ptxas()
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
if find_nvdisasm():
    config.available_features.add("nvdisasm")
if _which("nvidia-smi"):
    try:
        if subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=20).returncode == 0:
            config.available_features.add("cuda-gpu")
            # Hopper (compute capability 9.0) runs the sm_90a kernels too.
            capability = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap",
                                         "--format=csv,noheader"], capture_output=True,
                                        text=True, timeout=20).stdout.split()
            if capability and capability[0] == "9.0":
                config.available_features.add("cuda-sm_90a")
    except (OSError, subprocess.TimeoutExpired):
        pass
# AArch64 programs link with the cross compiler and run under QEMU
# (lamina.targets.cross): Debian's qemu-user, gcc-aarch64-linux-gnu,
# libc6-dev-arm64-cross.
_cross_gcc = _which("aarch64-linux-gnu-gcc")
if _which("qemu-aarch64") and _cross_gcc:
    _libc = subprocess.run([_cross_gcc, "-print-file-name=libc.a"], capture_output=True,
                           text=True).stdout.strip()
    if os.path.isabs(_libc):
        config.available_features.add("aarch64-run")
# The host's dot-product and matrix instructions, so that a test running
# code with them is unsupported, not failing, on a CPU without them.
_host = detect_host()
for _feature in ("avx512bf16", "avx512vnni"):
    if _host.has(_feature) and _host.has("avx512f"):
        config.available_features.add(_feature)
if host_has_amx(_host):
    config.available_features.add("amx")
if _which("mpiexec"):
    config.available_features.add("mpi")
# Graphviz's dot lays out --view-graph's pictures; %scripts is Lamina's tools
# alone, for tests of a PATH without dot.
if _which("dot"):
    config.available_features.add("dot")
config.substitutions.append(("%scripts", scripts_dir))
