"""What Lamina's CPU schedules know about the CPU they compile for: the
width and number of its vector registers, its cache sizes, the threads a
program splits its work over, and how many vectors a loop nest's step
covers. The schedule kinds (lamina.schedules) choose their tiles from it;
the tuner (lamina.tuning) varies it per fusion group.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class CPUModel:
    """What the cost model knows about the CPU."""

    vector_bits: int = 512
    vector_registers: int = 32
    l1_bytes: int = 48 * 1024
    l2_bytes: int = 1024 * 1024
    threads: int = 1
    unroll: int = 4

    @classmethod
    def for_features(cls, features: tuple[str, ...], threads: int) -> "CPUModel":
        """The model of a CPU with LLVM features such as `+avx512f`."""
        if "+avx512f" in features:
            return cls(vector_bits=512, vector_registers=32, threads=threads)
        if "+avx2" in features or "+avx" in features:
            return cls(vector_bits=256, vector_registers=16, threads=threads)
        return cls(vector_bits=128, vector_registers=16, threads=threads)

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
