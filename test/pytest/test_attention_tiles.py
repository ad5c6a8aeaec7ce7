"""The attention kernels' tile model, the register layout of row
statistics (lamina.lowering.nn_to_hw.attention, lamina.targets.nvidia) and
the NumPy references of hw.contract and hw.mask against loops."""

import numpy as np
import pytest

from lamina.dialects import hw
from lamina.lowering.nn_to_hw.attention import (AttentionShape, AttentionTiles,
                                                choose_attention_tiles)
from lamina.targets import nvidia
from lamina.targets.nvidia import AccumulatorLayout, RowLayout, Thread, register_layout
from lamina.types import MemRefType


def test_warp_grid_chooses_the_accumulator_layout():
    # 64x64 would be a 2x2 grid by default; warps = (4, 1) stacks them.
    assert register_layout((64, 64), 128) == AccumulatorLayout(64, 64, 2, 2)
    assert register_layout((64, 64), 128, warps=(4, 1)) == AccumulatorLayout(64, 64, 4, 1)
    assert register_layout((64, 1), 128, warps=(4, 1)) == RowLayout(64, 4, 1)
    # A grid that does not divide the tile, or of the wrong size, is ignored.
    assert register_layout((32, 64), 128, warps=(4, 1)) == register_layout((32, 64), 128)
    assert register_layout((64, 1), 256, warps=(4, 1)) != RowLayout(64, 4, 1)


@pytest.mark.parametrize("rows,cols,warps", [(64, 64, (4, 1)), (128, 32, (4, 1)),
                                              (64, 16, (2, 2))])
def test_row_statistics_are_held_by_the_threads_of_their_rows(rows, cols, warps):
    accumulator = register_layout((rows, cols), 128, warps=warps)
    statistics = register_layout((rows, 1), 128, warps=warps)
    assert statistics.accumulates(accumulator)
    holders = {}
    for tid in range(128):
        thread = Thread(tid)
        placement = accumulator.placement(thread)
        stat_rows = [row for (row, _), _ in statistics.positions(thread)]
        # The thread's slot r of the statistics is the row of its
        # accumulator cells (r, c): what elementwise ops broadcast.
        assert stat_rows == placement.rows
        for row in stat_rows:
            holders.setdefault(row, set()).add(tid)
    assert sorted(holders) == list(range(rows))
    # Each row is held by the four lanes of a quad in each warp of its row
    # of the warp grid.
    assert all(len(threads) == 4 * warps[1] for threads in holders.values())


def shape(queries=128, keys=128, depth=64, dtype="f16", causal=False, mask=False, batch=12):
    return AttentionShape(batch, queries, keys, depth, depth, dtype, causal, mask)


@pytest.mark.parametrize("chip", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("attention", [shape(), shape(depth=128), shape(dtype="f32"),
                                       shape(mask=True), shape(queries=1, keys=1, depth=16),
                                       shape(queries=37, keys=100, depth=37)])
def test_tiles_fit_the_architecture(chip, attention):
    arch = nvidia.architecture(chip)
    tiles = choose_attention_tiles(attention, chip)
    assert tiles.block_m % 64 == 0 and tiles.block_n % 16 == 0
    assert attention.shared_bytes(tiles) <= arch.shared_memory_bytes
    assert attention.registers(tiles, True) <= nvidia.REGISTERS_PER_THREAD


def test_causal_blocks_visit_the_keys_up_to_their_last_query():
    tiles = AttentionTiles(64, 64)
    assert shape(queries=256, keys=256).key_steps(tiles) == 4
    # Query blocks 0..3 visit 1, 2, 3 and 4 key tiles.
    assert shape(queries=256, keys=256, causal=True).key_steps(tiles) == 2.5
    # No keys beyond Sk: 100 keys are two tiles of 64 for every block.
    assert shape(queries=256, keys=100, causal=True).key_steps(tiles) == 1.75


def test_register_estimate_grows_with_the_tile_and_its_extras():
    tiles = AttentionTiles(64, 64)
    plain = shape().registers(tiles, True)
    assert shape(mask=True).registers(tiles, True) > plain
    assert shape(dtype="f32").registers(tiles, True) > plain
    assert shape().registers(tiles, False) > plain
    assert shape().registers(AttentionTiles(128, 64), True) > plain
    # GPT-sized heads get 64x64 tiles; Llama-sized (D = 128) fewer keys per
    # step, whose accumulator leaves less room.
    assert choose_attention_tiles(shape(), "sm_80") == AttentionTiles(64, 64)
    assert choose_attention_tiles(shape(depth=128), "sm_80") == AttentionTiles(64, 32)


def wgmma_shape(**kwargs):
    found = shape(**kwargs)
    return AttentionShape(found.batch, found.queries, found.keys, found.depth,
                          found.value_depth, found.dtype, found.causal, found.mask, True)


@pytest.mark.parametrize("attention", [wgmma_shape(), wgmma_shape(depth=128),
                                       wgmma_shape(mask=True, depth=128),
                                       wgmma_shape(queries=1, keys=1, depth=16),
                                       wgmma_shape(keys=2048, causal=True)])
def test_wgmma_tiles_are_a_warpgroup_and_a_ring_that_fits(attention):
    arch = nvidia.architecture("sm_90a")
    tiles = choose_attention_tiles(attention, "sm_90a")
    # One warpgroup per 64 query rows; keys in whole wgmma K steps.
    assert tiles.block_m == nvidia.WGMMA_M and tiles.block_n % nvidia.WGMMA_K == 0
    steps = -(-attention.keys // tiles.block_n)
    assert 1 <= tiles.stages <= min(steps, 3)
    assert attention.shared_bytes(tiles) <= arch.shared_memory_bytes
    # Head dims come in whole 128-byte swizzled rows.
    assert attention.padded_depth % 64 == 0 and attention.padded_value_depth % 64 == 0


def test_wgmma_ring_is_as_deep_as_two_blocks_allow():
    # D = 64: three stages of 64 keys (16 KiB of Q, 16 KiB a stage) leave
    # room for two blocks; D = 128 with a mask too, but only two stages.
    assert choose_attention_tiles(wgmma_shape(keys=1024), "sm_90a").stages == 3
    masked = choose_attention_tiles(wgmma_shape(keys=1024, depth=128, mask=True), "sm_90a")
    assert masked.stages == 2
    # A single key step needs one stage.
    assert choose_attention_tiles(wgmma_shape(keys=64), "sm_90a").stages == 1


def test_wgmma_contract_problem():
    class Box:
        def __init__(self, cols, swizzled=True):
            self.cols, self.swizzled = cols, swizzled

    def types(*shapes, dtype="f16"):
        return [MemRefType(s, dtype) for s in shapes]
    q, k, s = types((64, 128), (64, 128), (64, 64))
    problem = nvidia.wgmma_contract_problem
    assert problem(q, k, s, Box(64), Box(64), 128, True, False) is None
    p, v, o = types((64, 64), (64, 128), (64, 128))
    assert problem(p, v, o, None, Box(64), 128, False, True) is None
    # Two warpgroups, 128 rows, a B not TMA-loaded swizzled, f32, a V of
    # 40 columns (not whole boxes): mma.sync.
    assert "warpgroup" in problem(q, k, s, Box(64), Box(64), 256, True, False)
    assert "64 rows" in problem(*types((128, 128), (64, 128), (128, 64)), Box(64), Box(64), 128,
                                True, False)
    assert "tma_load" in problem(q, k, s, Box(64), Box(32, False), 128, True, False)
    assert "f16 or bf16" in problem(*types((64, 64), (64, 64), (64, 64), dtype="f32"), Box(16),
                                    Box(16), 128, True, False)
    assert "N must be whole" in problem(*types((64, 64), (64, 40), (64, 40)), None, Box(64),
                                        128, False, True)


def test_wgmma_k_offsets_walk_the_swizzled_boxes():
    box = nvidia.TmaBox(64, 64, "f16", True)  # 64 rows of 128 bytes
    k_major = [nvidia.wgmma_k_offset(box, k0, True) for k0 in (0, 16, 48, 64, 80)]
    # Along a box's rows 32 bytes a step, then the next box (8 KiB on).
    assert k_major == [0, 32, 96, 8192, 8224]
    # MN-major: 16 rows of 128 bytes a step.
    assert [nvidia.wgmma_k_offset(box, k0, False) for k0 in (0, 16, 32)] == [0, 2048, 4096]


def test_wgmma_leading_offset_is_the_box_stride():
    # An MN-major B of 128 columns is two boxes along N, whatever the
    # box's leading dims: 64 rows of 128 bytes, 32 of them.
    assert nvidia.wgmma_leading_offset(nvidia.TmaBox(64, 64, "f16", True)) == 8192
    assert nvidia.wgmma_leading_offset(nvidia.TmaBox(32, 64, "bf16", True)) == 4096


def test_contract_reference_against_loops():
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (4, 8)).astype(np.float16)
    b = rng.uniform(-1, 1, (6, 8)).astype(np.float16)
    c = rng.uniform(-1, 1, (4, 6)).astype(np.float32)
    expected = c.astype(np.float64).copy()
    for i in range(4):
        for j in range(6):
            expected[i, j] += sum(float(a[i, k]) * float(b[j, k]) for k in range(8))
    hw.ContractOp.detached(transpose_b=True).reference(a, b, c, [])
    np.testing.assert_allclose(c, expected, rtol=1e-6, atol=1e-6)


def test_mask_reference_against_loops():
    x = np.zeros((4, 6), np.float32)
    hw.MaskOp.detached(keys=5, causal=True).reference(x, 2, 1)
    for r in range(4):
        for c in range(6):
            hidden = 1 + c >= 5 or 1 + c > 2 + r
            assert (x[r, c] == -np.inf) == hidden
