# RUN: %PYTHON %s | FileCheck %s
#
# The tile sizes and stages of nn matmuls come from a per-architecture cost
# model: small problems get small tiles (more blocks than SMs), large ones
# the largest tiles the register budget allows; stages fill the shared
# memory, up to the number of K steps, as long as two blocks still fit in
# an SM (on sm_90a, 3 stages of 128x128x64 rather than 4); TMA kernels step
# K by 64.

from lamina.lowering.nn_to_hw import TileConfig, choose_tiles
from lamina.targets.nvidia import ARCHITECTURES


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def show(m, n, k, chip, tma=False):
    t = choose_tiles(m, n, k, chip, tma)
    fits = t.shared_bytes() <= ARCHITECTURES[chip].shared_memory_bytes and t.block_m * t.block_n // 128 <= 128
    print(f"{m}x{n}x{k} {chip}{' tma' if tma else ''}: {t.block_m}x{t.block_n}x{t.block_k} "
          f"stages {t.stages}, {t.shared_bytes()} bytes, fits {fits}")


# CHECK-LABEL: TEST: sizes
# CHECK: 4096x4096x4096 sm_80: 128x128x32 stages 4, 65536 bytes, fits True
# CHECK: 4096x4096x4096 sm_90a tma: 128x128x64 stages 3, 98304 bytes, fits True
# CHECK: 200x136x200 sm_80: 64x64x32 stages 4, 32768 bytes, fits True
# CHECK: 1024x64x512 sm_80: 64x64x32 stages 4, 32768 bytes, fits True
# CHECK: 100x100x40 sm_80: 64x64x32 stages 2, 16384 bytes, fits True
# CHECK: 64x64x16 sm_90a tma: 64x64x64 stages 1, 16384 bytes, fits True
@run
def sizes():
    show(4096, 4096, 4096, "sm_80")
    show(4096, 4096, 4096, "sm_90a", tma=True)
    show(200, 136, 200, "sm_80")
    show(1024, 64, 512, "sm_80")
    show(100, 100, 40, "sm_80")
    show(64, 64, 16, "sm_90a", tma=True)


# CHECK-LABEL: TEST: shared_bytes
# CHECK-NEXT: 98304
@run
def shared_bytes():
    print(TileConfig(128, 128, 32, 6).shared_bytes())


# f32 on tensor cores (mma.sync, 4-byte elements): 3xTF32 holds each
# k-step's fragments twice (big and small parts), so its largest tile is
# 128x64 (112 registers of the 160 budget; 128x128 would take 192); one
# tf32 product fits 128x128. Stages as for f16, at twice the bytes: two
# blocks of 128x64x32 f32 tiles fit an sm_80 SM at 3 stages, of 128x128x32
# at 2.
# CHECK-LABEL: TEST: f32_tiles
# CHECK-NEXT: 4096x4096x4096 sm_80 3xtf32: 128x64x32 stages 3, 73728 bytes
# CHECK-NEXT: 4096x4096x4096 sm_90a 3xtf32: 128x64x32 stages 4, 98304 bytes
# CHECK-NEXT: 4096x4096x4096 sm_80 tf32_rounded: 128x128x32 stages 2, 65536 bytes
# CHECK-NEXT: 100x100x40 sm_80 3xtf32: 64x64x32 stages 2, 32768 bytes
# CHECK-NEXT: registers 128x128: f16 160, 3xtf32 192
@run
def f32_tiles():
    from lamina.targets.nvidia import mma_sync_registers
    for m, n, k, chip, precision in ((4096, 4096, 4096, "sm_80", "3xtf32"),
                                     (4096, 4096, 4096, "sm_90a", "3xtf32"),
                                     (4096, 4096, 4096, "sm_80", "tf32_rounded"),
                                     (100, 100, 40, "sm_80", "3xtf32")):
        t = choose_tiles(m, n, k, chip, dtype="f32", precision=precision)
        print(f"{m}x{n}x{k} {chip} {precision}: {t.block_m}x{t.block_n}x{t.block_k} "
              f"stages {t.stages}, {t.shared_bytes(4)} bytes")
    print(f"registers 128x128: f16 {mma_sync_registers(128, 128, 128)}, "
          f"3xtf32 {mma_sync_registers(128, 128, 128, 3)}")
