"""Where each thread's slots of a register tile lie, as the NVIDIA target
model defines them (`lamina.targets.nvidia`: `AccumulatorLayout`,
`WgmmaLayout`) and convert-hw-to-nvgpu builds them, against the fragment
layouts the PTX ISA defines for mma.sync's m16n8 accumulator and wgmma's
m64nN accumulator, for every thread of a block. The index arithmetic the
lowering builds (`INDEX`) is evaluated here with the thread's warp and
lane as constants, and must agree with the model on integers. Also
checked: the contract the paired stores rely on (slots 2i and 2i + 1 hold
adjacent columns of one row, the first even) and that the threads cover
each element of the tile exactly once."""

from types import SimpleNamespace

import pytest
from mlir import ir
from mlir.dialects import arith, func

import lamina  # noqa: F401  (registers the dialects)
from lamina.lowering.hw_to_nvgpu import INDEX
from lamina.targets.nvidia import (AccumulatorLayout, ReplicatedLayout, RoundRobinLayout,
                                   Thread, VectorLayout, WgmmaLayout, architecture,
                                   elementwise_kernel_shape, register_layout, row_kernel_shape)

_ARITH = {"arith.addi": lambda a, b: a + b, "arith.muli": lambda a, b: a * b,
          "arith.divui": lambda a, b: a // b, "arith.remui": lambda a, b: a % b}


def value_of(value: ir.Value) -> int:
    """The value of index arithmetic on constants."""
    op = value.owner
    if op.name == "arith.constant":
        return ir.IntegerAttr(op.attributes["value"]).value
    return _ARITH[op.name](*(value_of(operand) for operand in op.operands))


def coordinates(layout, warps: int) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """Each slot's (row, col) in the tile, for each thread (warp, lane)."""
    found = {}
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            function = func.FuncOp("f", ([], []))
            with ir.InsertionPoint(function.add_entry_block()):
                index = ir.IndexType.get()
                for warp in range(warps):
                    for lane in range(32):
                        kernel = SimpleNamespace(warp=arith.constant(index, warp),
                                                 lane=arith.constant(index, lane))
                        placement = layout.placement(kernel, INDEX)
                        found[warp, lane] = [(value_of(placement.rows[r]),
                                              value_of(placement.cols[c]))
                                             for r, c in placement.cells]
                        on_integers = layout.placement(Thread(warp * 32 + lane))
                        assert found[warp, lane] == [(on_integers.rows[r], on_integers.cols[c])
                                                     for r, c in on_integers.cells]
                func.ReturnOp([])
    return found


def mma_sync_accumulator(layout: AccumulatorLayout, warp: int, lane: int):
    """The PTX ISA's m16n8 accumulator fragments (c0..c3 of each: rows
    groupID and groupID + 8, columns 2 * threadID_in_group + {0, 1}), of
    the warp's block of fragments."""
    group, thread = lane // 4, lane % 4
    row0 = (warp // layout.warp_cols) * (layout.rows // layout.warp_rows)
    col0 = (warp % layout.warp_cols) * (layout.cols // layout.warp_cols)
    return [(row0 + fi * 16 + group + 8 * (c // 2), col0 + fj * 8 + 2 * thread + c % 2)
            for fi in range(layout.frag_rows) for fj in range(layout.frag_cols)
            for c in range(4)]


def wgmma_accumulator(layout: WgmmaLayout, warp: int, lane: int):
    """The PTX ISA's wgmma m64nN accumulator (register i of a thread: row
    16 * warp + groupID + 8 * ((i // 2) % 2), column 8 * (i // 4) +
    2 * threadID_in_group + i % 2), per 64-row chunk of the tile."""
    group, thread = lane // 4, lane % 4
    return [(chunk * 64 + 16 * warp + group + 8 * ((i // 2) % 2),
             8 * (i // 4) + 2 * thread + i % 2)
            for chunk in range(layout.rows // 64) for i in range(layout.cols // 2)]


LAYOUTS = [
    (AccumulatorLayout(64, 64, 2, 2), 4, mma_sync_accumulator),
    (AccumulatorLayout(128, 128, 2, 2), 4, mma_sync_accumulator),
    (AccumulatorLayout(32, 64, 1, 4), 4, mma_sync_accumulator),
    (WgmmaLayout(64, 64), 4, wgmma_accumulator),
    (WgmmaLayout(128, 128), 4, wgmma_accumulator),
]


@pytest.mark.parametrize("layout,warps,reference", LAYOUTS,
                         ids=["mma.sync-64x64", "mma.sync-128x128", "mma.sync-32x64-1x4",
                              "wgmma-64x64", "wgmma-128x128"])
def test_slots_follow_the_ptx_fragment_layouts(layout, warps, reference):
    covered = []
    for (warp, lane), found in coordinates(layout, warps).items():
        assert found == reference(layout, warp, lane), (warp, lane)
        for first, second in zip(found[0::2], found[1::2]):
            assert second == (first[0], first[1] + 1) and first[1] % 2 == 0
        covered += found
    assert sorted(covered) == [(r, c) for r in range(layout.rows) for c in range(layout.cols)]


@pytest.mark.parametrize("shape,threads,expected", [
    ((128, 128), 128, AccumulatorLayout(128, 128, 2, 2)),
    ((32, 64), 128, AccumulatorLayout(32, 64, 1, 4)),
    ((64, 1), 128, RoundRobinLayout((64, 1), 128)),
    ((64,), 128, RoundRobinLayout((64,), 128)),
])
def test_register_layout_chooses_fragments_where_the_warps_divide_the_tile(shape, threads,
                                                                          expected):
    assert register_layout(shape, threads) == expected


def test_round_robin_covers_each_element_once():
    layout = RoundRobinLayout((5, 7), 16)
    held = [coordinates for tid in range(16)
            for coordinates, valid in layout.positions(Thread(tid)) if valid is not False]
    assert sorted(held) == [(r, c) for r in range(5) for c in range(7)]


@pytest.mark.parametrize("shape,threads,expected", [
    ((2048,), 256, VectorLayout(2048, 256, 4)),
    ((64,), 32, VectorLayout(64, 32, 2)),
    ((32,), 32, VectorLayout(32, 32, 1)),
    ((1,), 128, ReplicatedLayout((1,))),
    ((1, 1), 128, ReplicatedLayout((1, 1))),
])
def test_register_layout_holds_vectors_of_1d_tiles_and_replicates_one_element(shape, threads,
                                                                              expected):
    assert register_layout(shape, threads) == expected


@pytest.mark.parametrize("length,threads,width", [(2048, 256, 4), (64, 32, 2), (1024, 128, 4)])
def test_vector_layout_covers_each_element_once_in_contiguous_vectors(length, threads, width):
    layout = VectorLayout(length, threads, width)
    held = []
    for tid in range(threads):
        positions = [coordinates[0] for coordinates, valid in layout.positions(Thread(tid))]
        assert len(positions) == layout.slots
        for start in range(0, len(positions), width):
            vector = positions[start:start + width]
            assert vector == list(range(vector[0], vector[0] + width)) and vector[0] % width == 0
        held += positions
    assert sorted(held) == list(range(length))
    # Consecutive threads hold consecutive vectors (coalesced loads).
    assert [layout.positions(Thread(t))[0][0][0] for t in range(3)] == [0, width, 2 * width]


def test_replicated_layout_gives_every_thread_the_element():
    layout = ReplicatedLayout((1,))
    assert all(layout.positions(Thread(tid)) == [((0,), None)] for tid in (0, 31, 500))


@pytest.mark.parametrize("columns,expected", [
    (1, (32, 1, 1)), (33, (32, 2, 1)), (256, (32, 8, 1)), (1000, (128, 8, 1)),
    (4096, (512, 8, 1)), (16384, (1024, 16, 1)), (16385, (1024, 8, 3)), (50257, (1024, 8, 7)),
    (0, (32, 1, 1)),
])
def test_row_kernel_shape_holds_the_row_in_registers_or_walks_it_in_chunks(columns, expected):
    assert row_kernel_shape(columns) == expected


def test_elementwise_kernel_shape_strides_over_tiles():
    arch = architecture("sm_80")
    assert elementwise_kernel_shape(100, arch) == (256, 8, 1)
    assert elementwise_kernel_shape(1 << 24, arch) == (256, 8, 8 * arch.sms)
