"""The machine code generation is for: LLVM's view of the host (triple,
CPU name, features), with a /proc/cpuinfo fallback."""

from __future__ import annotations

import ctypes
import functools
import platform
from dataclasses import dataclass

from lamina.toolchain import library_path


@dataclass(frozen=True)
class HostInfo:
    """The machine code generation is for: LLVM target triple, CPU name and
    feature list (`+avx512f`, `-amx-int8`, ...)."""

    triple: str
    cpu: str
    features: tuple[str, ...]

    def has(self, feature: str) -> bool:
        return f"+{feature}" in self.features


@functools.lru_cache(maxsize=None)
def detect_host() -> HostInfo:
    """The host as LLVM sees it (through the C API of the wheel's libLLVM),
    else from /proc/cpuinfo."""
    try:
        return _detect_with_llvm()
    except (OSError, AttributeError, FileNotFoundError):
        return _detect_from_cpuinfo()


def _detect_with_llvm() -> HostInfo:
    llvm = ctypes.CDLL(library_path("libLLVM.so"))

    def message(function_name: str) -> str:
        function = getattr(llvm, function_name)
        function.restype = ctypes.c_void_p
        pointer = function()
        try:
            return ctypes.string_at(pointer).decode()
        finally:
            llvm.LLVMDisposeMessage(ctypes.c_void_p(pointer))

    features = tuple(sorted(f for f in message("LLVMGetHostCPUFeatures").split(",") if f))
    return HostInfo(message("LLVMGetDefaultTargetTriple"), message("LLVMGetHostCPUName"),
                    features)


# /proc/cpuinfo flag -> LLVM feature, where the names differ.
_CPUINFO_FEATURES = {"sse4_1": "sse4.1", "sse4_2": "sse4.2", "pni": "sse3", "bmi1": "bmi",
                     "pclmulqdq": "pclmul", "abm": "lzcnt", "sha_ni": "sha",
                     "avx512_bf16": "avx512bf16", "avx512_vnni": "avx512vnni",
                     "avx512_vbmi2": "avx512vbmi2", "avx512_bitalg": "avx512bitalg",
                     "avx512_vpopcntdq": "avx512vpopcntdq", "avx512_fp16": "avx512fp16"}
_KNOWN_FEATURES = {"sse", "sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "avx", "avx2",
                   "fma", "f16c", "bmi", "bmi2", "lzcnt", "movbe", "aes", "pclmul", "sha", "adx",
                   "avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl", "avx512ifma",
                   "avx512vbmi", "avx512vbmi2", "avx512vnni", "avx512bitalg",
                   "avx512vpopcntdq", "avx512bf16", "avx512fp16", "cx16", "xsave"}


def _detect_from_cpuinfo() -> HostInfo:
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    features = sorted({_CPUINFO_FEATURES.get(f, f) for f in flags} & _KNOWN_FEATURES)
    machine = platform.machine() or "x86_64"
    return HostInfo(f"{machine}-unknown-linux-gnu", "x86-64" if machine == "x86_64" else "generic",
                    tuple(f"+{f}" for f in features))


def host_architecture() -> str:
    """The architecture of this machine by LLVM's name (`x86_64`, `aarch64`)."""
    machine = platform.machine().lower()
    return {"arm64": "aarch64", "amd64": "x86_64"}.get(machine, machine)


def host_architecture_name() -> str:
    return {"x86_64": "x86-64", "aarch64": "AArch64"}.get(host_architecture(), host_architecture())



AMX_FEATURES = ("amx-tile", "amx-bf16", "amx-int8")


def host_has_amx(host: HostInfo | None = None, permitted=None) -> bool:
    """Whether this machine runs AMX code: the CPU has the tiles and their
    bf16 and int8 products, and Linux lets this process use the tile state
    (`permitted()`, by default the runtime's request for it)."""
    host = host or detect_host()
    if not all(host.has(feature) for feature in AMX_FEATURES):
        return False
    if permitted is None:
        from lamina.runtime import request_amx_state
        permitted = request_amx_state
    return permitted()
