"""The CPU target model and what Lamina's CPU schedules read of it.

`CPUTargetModel` is a CPU as the cpu target compiles for it (triple, CPU
name, features, vector unit, FMA pipes, caches, dot-product instructions),
with presets for the CPUs users rent (`CPU_PRESETS`) and the host's model
(`host_model`). `CPUModel` is what the schedule kinds (lamina.schedules)
choose their tiles from: the width and number of the vector registers
(and whether vectors are scalable), the cache sizes, the threads a program
splits its work over, and how many vectors a loop nest's step covers; the
tuner (lamina.tuning) varies it per fusion group.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CPUModel:
    """What the cost model knows about the CPU."""

    vector_bits: int = 512
    vector_registers: int = 32
    l1_bytes: int = 48 * 1024
    l2_bytes: int = 1024 * 1024
    threads: int = 1
    unroll: int = 4
    scalable_vectors: int = field(default=0, metadata={"choice": False})
    """1: vectors are scalable (SVE), `vector_bits` being their minimum width:
    a fact of the target, which no tuned choice changes."""
    dot_products: tuple[str, ...] = field(default=(), metadata={"choice": False})
    """The target's dot-product and matrix instructions (`CPUTargetModel.
    dot_products`, by LLVM feature name): a fact of the target."""
    bf16_dot_products: int = field(default=0, metadata={"choice": False})
    """1: the CPU multiplies pairs of bf16 into f32 accumulators, one
    vector of them per instruction (AVX512-BF16's `vdpbf16ps`), which bf16
    contractions' register tiles use: a fact of the target."""

    @property
    def lanes(self) -> int:
        """f32 elements per vector (f16/bf16 are computed in f32)."""
        return self.vector_bits // 32


def default_threads() -> int:
    """`LAMINA_NUM_THREADS` if set, else every core this process may run on."""
    value = os.environ.get("LAMINA_NUM_THREADS", "").strip()
    if value:
        try:
            return max(1, int(value))
        except ValueError:
            raise ValueError(f"LAMINA_NUM_THREADS must be a positive integer, got '{value}'") from None
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


# ---------------------------------------------------------------------------
# The CPU target model: what a CPU is, for code generation and schedules.

# The instruction-set architectures the cpu target compiles for, by the
# name LLVM's `-mtriple` and `llc -mcpu=help` take, and their triples.
ARCHITECTURES = {"x86_64": "x86_64-unknown-linux-gnu", "aarch64": "aarch64-unknown-linux-gnu"}
ARCHITECTURE_NAMES = {"x86_64": "x86-64", "aarch64": "AArch64"}


@dataclass(frozen=True)
class CPUTargetModel:
    """A CPU as the cpu target compiles for it: the LLVM triple, CPU name
    and features code generation takes; the vector unit the schedules size
    their tiles for (`vector_bits` wide, fixed or `scalable`, with
    `vector_registers` architectural registers), its FMA pipes and their
    latency, the data caches per core, and the dot-product and matrix
    instructions it has. `sve_bits` is the SVE vector length code is
    specific to (0: none, or vector-length agnostic code)."""

    name: str
    arch: str
    cpu: str
    features: tuple[str, ...] = ()
    vector_bits: int = 128
    scalable: bool = False
    sve_bits: int = 0
    vector_registers: int = 16
    fma_units: int = 2
    fma_latency: int = 4
    l1_bytes: int = 32 * 1024
    l2_bytes: int = 1024 * 1024
    dot_products: tuple[str, ...] = ()
    fast_bf16_dots: bool = False
    """Whether its bf16 dot product (`vdpbf16ps`) computes more products
    per cycle than its f32 FMAs on widened operands: AMD's Zen 4 and 5 run
    it at the FMA's rate with twice the products; Intel's cores at a lower
    rate than their FMAs (bench/results.md), where bf16 contractions are
    faster widened."""

    @property
    def triple(self) -> str:
        return ARCHITECTURES[self.arch]

    @property
    def architecture_name(self) -> str:
        return ARCHITECTURE_NAMES[self.arch]

    def has(self, feature: str) -> bool:
        return f"+{feature}" in self.features

    @property
    def converts_bf16(self) -> bool:
        """Whether the CPU has an f32 -> bf16 conversion instruction (where
        not, LLVM's code calls the runtime's `__truncsfbf2`)."""
        if self.arch == "aarch64":
            return self.has("bf16")
        return self.has("avx512bf16") or self.has("avxneconvert")

    @property
    def bf16_dot_products(self) -> bool:
        """Whether bf16 contractions compute with a dot product of bf16
        pairs into f32 lanes of full-width vectors (AVX512-BF16's
        `vdpbf16ps` on 512-bit vectors): where the CPU has it and it is
        faster than f32 FMAs (`fast_bf16_dots`)."""
        return (self.arch == "x86_64" and "avx512bf16" in self.dot_products
                and self.vector_bits == 512 and self.fast_bf16_dots)

    def schedule_model(self, threads: int) -> CPUModel:
        """What the schedules read: one vector is `vector_bits` wide (the
        minimum width of a scalable one)."""
        return CPUModel(vector_bits=self.vector_bits, vector_registers=self.vector_registers,
                        l1_bytes=self.l1_bytes, l2_bytes=self.l2_bytes, threads=threads,
                        scalable_vectors=int(self.scalable), dot_products=self.dot_products,
                        bf16_dot_products=int(self.bf16_dot_products))

    def with_features(self, changes: tuple[str, ...]) -> "CPUTargetModel":
        """The model with `+name` / `-name` features changed, its vector
        unit and dot products following what the features enable."""
        features = _with_features(self.features, changes)
        enabled = {f[1:] for f in features if f[0] == "+"}
        disabled = {f[1:] for f in changes if f[0] == "-"}
        name = self.name + "".join(c if c[0] == "+" else f",{c}" for c in changes)
        model = dataclasses.replace(self, name=name, features=features)
        if self.arch == "x86_64":
            if "avx512f" in disabled or "avx2" in disabled or "avx512f" in enabled:
                wide = "avx512f" in enabled and "avx512f" not in disabled
                avx2 = wide or ("avx2" in enabled or (self.vector_bits >= 256
                                                      and "avx2" not in disabled))
                bits = 512 if wide else 256 if avx2 else 128
                model = dataclasses.replace(model, vector_bits=bits,
                                            vector_registers=32 if wide else 16)
        elif "sve" in disabled or "neon" in disabled:
            model = dataclasses.replace(model, vector_bits=128, scalable=False, sve_bits=0)
        elif "sve" in enabled and not self.has("sve"):
            model = dataclasses.replace(model, scalable=True)
        names = _DOT_PRODUCTS[self.arch]
        if self.arch == "x86_64" and model.vector_bits < 512:
            disabled |= {d for d in names if d.startswith("avx512")}
        return dataclasses.replace(model, dot_products=tuple(
            d for d in names if d in (enabled - disabled) or (d in self.dot_products
                                                               and d not in disabled)))


# The dot-product and matrix instructions the model records, by LLVM
# feature name.
_DOT_PRODUCTS = {"x86_64": ("avx512vnni", "avxvnni", "avx512bf16", "avx512fp16", "amx-bf16",
                            "amx-int8"),
                 "aarch64": ("dotprod", "i8mm", "bf16", "sve", "sve2", "sme")}


def _with_features(base: tuple[str, ...], changes) -> tuple[str, ...]:
    """`base` with each `+name` / `-name` of `changes` replacing what it
    said about that name."""
    signs = {feature[1:]: feature[0] for feature in base}
    for feature in changes:
        signs.pop(feature[1:], None)
        signs[feature[1:]] = feature[0]
    return tuple(sign + name for name, sign in signs.items())


_KIB, _MIB = 1024, 1024 * 1024


def _x86(name, cpu, bits, l1, l2, dots=(), fma_units=2, fma_latency=4, fast_bf16_dots=False):
    features = {512: ("+avx512f",), 256: ("+avx2", "+fma")}.get(bits, ())
    return CPUTargetModel(name, "x86_64", cpu, features, vector_bits=bits,
                          vector_registers=32 if bits == 512 else 16, fma_units=fma_units,
                          fma_latency=fma_latency, l1_bytes=l1, l2_bytes=l2, dot_products=dots,
                          fast_bf16_dots=fast_bf16_dots)


def _arm(name, cpu, features, l1, l2, sve_bits=0, scalable=False, fma_units=2, fma_latency=4):
    dots = tuple(d for d in _DOT_PRODUCTS["aarch64"] if f"+{d}" in features)
    return CPUTargetModel(name, "aarch64", cpu, ("+neon", *features),
                          vector_bits=max(128, sve_bits), scalable=scalable, sve_bits=sve_bits,
                          vector_registers=32, fma_units=fma_units, fma_latency=fma_latency,
                          l1_bytes=l1, l2_bytes=l2, dot_products=dots)


# The CPUs users rent, by the name a target spec gives (`cpu:NAME`). x86
# and AArch64 CPU names not here are taken from LLVM's list with the
# width their features give; `aarch64` is a generic NEON core (Apple M1
# and Graviton 2 class), `aarch64+sve` the same with vector-length
# agnostic SVE, `aarch64-sve256` / `-sve512` SVE code for that length.
CPU_PRESETS: dict[str, CPUTargetModel] = {m.name: m for m in (
    _x86("znver4", "znver4", 512, 32 * _KIB, 1 * _MIB, ("avx512vnni", "avx512bf16"),
         fma_latency=4, fast_bf16_dots=True),
    _x86("znver5", "znver5", 512, 48 * _KIB, 1 * _MIB, ("avx512vnni", "avx512bf16"),
         fma_latency=4, fast_bf16_dots=True),
    _x86("sapphirerapids", "sapphirerapids", 512, 48 * _KIB, 2 * _MIB,
         ("avx512vnni", "avx512bf16", "avx512fp16", "amx-bf16", "amx-int8")),
    _x86("icelake-server", "icelake-server", 512, 48 * _KIB, 1280 * _KIB, ("avx512vnni",)),
    _x86("haswell", "haswell", 256, 32 * _KIB, 256 * _KIB, fma_latency=5),
    _x86("x86-64-v3", "x86-64-v3", 256, 32 * _KIB, 256 * _KIB, fma_latency=5),
    _arm("aarch64", "generic", (), 64 * _KIB, 1 * _MIB),
    _arm("neoverse-n1", "neoverse-n1", ("+dotprod",), 64 * _KIB, 1 * _MIB),
    _arm("neoverse-v1", "neoverse-v1", ("+dotprod", "+i8mm", "+bf16", "+sve"), 64 * _KIB,
         1 * _MIB, sve_bits=256, fma_units=4),
    _arm("neoverse-v2", "neoverse-v2", ("+dotprod", "+i8mm", "+bf16", "+sve", "+sve2"),
         64 * _KIB, 1 * _MIB, fma_units=4),
    _arm("aarch64-sve256", "generic", ("+sve",), 64 * _KIB, 1 * _MIB, sve_bits=256),
    _arm("aarch64-sve512", "generic", ("+sve",), 64 * _KIB, 1 * _MIB, sve_bits=512),
)}


def _sysfs_cache_bytes(level: int) -> int | None:
    """The size of CPU 0's level-`level` data (or unified) cache, from sysfs."""
    for index in range(8):
        base = f"/sys/devices/system/cpu/cpu0/cache/index{index}/"
        try:
            with open(base + "level") as f:
                if int(f.read()) != level:
                    continue
            with open(base + "type") as f:
                if f.read().strip() not in ("Data", "Unified"):
                    continue
            with open(base + "size") as f:
                text = f.read().strip()
        except (OSError, ValueError):
            continue
        scale = {"K": _KIB, "M": _MIB}.get(text[-1:], 1)
        try:
            return int(text.rstrip("KM")) * scale
        except ValueError:
            return None
    return None


def model_for(arch: str, cpu: str, features: tuple[str, ...]) -> CPUTargetModel:
    """The model of an LLVM CPU name that is no preset, from its features."""
    base = next((m for m in CPU_PRESETS.values() if m.arch == arch and m.cpu == cpu
                 and m.name == cpu), None)
    if base is not None:
        return base.with_features(features) if features else base
    if arch == "x86_64":
        bits = 512 if "+avx512f" in features else 256 if ("+avx2" in features
                                                          or "+avx" in features) else 128
        model = _x86(cpu, cpu, bits, 32 * _KIB, 1 * _MIB)
        return dataclasses.replace(model, features=tuple(features),
                                   dot_products=tuple(d for d in _DOT_PRODUCTS[arch]
                                                      if f"+{d}" in features))
    model = _arm(cpu, cpu, tuple(f for f in features if f != "+neon"), 64 * _KIB, 1 * _MIB,
                 scalable="+sve" in features)
    return model


def host_model(triple: str, cpu: str, features: tuple[str, ...]) -> CPUTargetModel:
    """The model of the host LLVM detected (triple, CPU name, features),
    its caches read from sysfs where Linux gives them."""
    arch = "aarch64" if triple.startswith(("aarch64", "arm64")) else "x86_64"
    model = model_for(arch, cpu, ())
    vector_model = model_for(arch, "host", features)
    model = dataclasses.replace(model, name="host", features=tuple(features),
                                vector_bits=vector_model.vector_bits,
                                scalable=vector_model.scalable,
                                vector_registers=vector_model.vector_registers,
                                dot_products=vector_model.dot_products)
    l1, l2 = _sysfs_cache_bytes(1), _sysfs_cache_bytes(2)
    return dataclasses.replace(model, l1_bytes=l1 or model.l1_bytes, l2_bytes=l2 or model.l2_bytes)
