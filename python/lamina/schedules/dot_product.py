"""Integer contractions on the CPU's dot-product instructions: the packed
scheme of the contraction kind, with the operands laid out as AVX512-VNNI's
`vpdpbusd` reads them.

`vpdpbusd` multiplies groups of four unsigned bytes by four signed bytes
and adds each group's sum to one i32 lane: a 512-bit one does 16 columns
times 4 k's per instruction. The contraction it serves is the u8 x s8 form
that `cpu-vnni-contractions` gives a signed i8 matmul (`zext(A') *
sext(B)` summed into i32). The packing is over n by 16 (one vector of i32
lanes) and over k by 4 (one byte group): B becomes `[N/16, K/4, 16, 4]`
(64 bytes per k group and panel, one vector load), A `[M, K/4, 4]` (each
row's group of four bytes one 32-bit broadcast), the result `[M, N/16,
16]`; edges are padded with zeros, which add nothing. The register tile
is `mr` rows by `nv` panels of accumulators; its `vector.contract` over one
k group is what `cpu-x86-dot-products` turns into `vpdpbusd`s.

The kind applies where the CPU model has `avx512vnni` (512-bit vectors);
elsewhere the contraction kind computes the same generic on widened
operands.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from typing import ClassVar

from lamina.schedules.analysis import Group, LinalgOp, contraction_dims
from lamina.schedules.contraction import (ContractionSchedule, Packing, initialising_fills,
                                         register_tile_rows)
from lamina.schedules.kind import Schedule, ScheduleKind
from lamina.schedules.loop_nest import loop_nest_schedules
from lamina.schedules.op_tiling import fill_tilings, largest_divisor
from lamina.targets.cpu_model import CPUModel

# vpdpbusd's shape: i32 lanes of a 512-bit vector, bytes per lane.
VNNI_LANES = 16
VNNI_GROUP = 4
VNNI_FEATURE = "avx512vnni"


@dataclass(frozen=True)
class DotProductSchedule(ContractionSchedule):
    """A packed contraction whose register tile runs on `instruction`."""

    kind: ClassVar[str] = "dot_product"

    instruction: str = "vpdpbusd"

    def decisions(self) -> list[str]:
        return [f"  {self.instruction}, k groups of {VNNI_GROUP}"] + super().decisions()

    # The operands' extensions move before their broadcasts, so that the
    # broadcasts fold into the register tile's `vector.contract` and it
    # reads A's row groups and B's panel vectors themselves.
    sinks_extensions: ClassVar[bool] = True


def is_unsigned_by_signed_bytes(linalg: LinalgOp) -> bool:
    """A contraction body `acc + zext(a_i8) * sext(b_i8)` into i32."""
    op = linalg.op
    if op.name != "linalg.generic":
        return False
    block = op.regions[0].blocks[0]
    names = [o.name for o in block.operations]
    if names != ["arith.extui", "arith.extsi", "arith.muli", "arith.addi", "linalg.yield"]:
        return False
    types = [str(a.type) for a in block.arguments]
    return types == ["i8", "i8", "i32"]


class DotProductKind(ScheduleKind):
    """u8 x s8 contractions on the model's dot-product instruction (see the
    module docstring); the rest of the group gets loop nests."""

    name = "dot_product"

    def choose(self, group: Group, model: CPUModel) -> list[Schedule] | None:
        if VNNI_FEATURE not in model.dot_products or model.vector_bits < 512:
            return None
        for linalg in group.ops:
            dims = contraction_dims(linalg)
            if dims is None or dims.batch or not is_unsigned_by_signed_bytes(linalg):
                continue
            fills = initialising_fills(group, linalg)
            schedule = vnni_schedule(f"{group.name}_dot_product", linalg, fills, model)
            rest = [op for op in group.ops if op is not linalg and op not in fills]
            return [schedule] + loop_nest_schedules(group.name, rest, model)
        return None


def vnni_schedule(group: str, linalg: LinalgOp, fills: list[LinalgOp],
                  model: CPUModel) -> DotProductSchedule:
    """The packed schedule of a 2-D u8 x s8 contraction for vpdpbusd."""
    dims = contraction_dims(linalg)
    extents = linalg.extents
    m, n, k = extents[dims.m], extents[dims.n], extents[dims.k]
    packed_sizes = [0] * linalg.rank
    packed_sizes[dims.n] = VNNI_LANES
    packed_sizes[dims.k] = VNNI_GROUP
    panels, groups = ceil(n / VNNI_LANES), ceil(k / VNNI_GROUP)
    # Rows of the register tile: they divide M (A is not packed over m), at
    # most 8, so that 8 x 2 accumulators, two B vectors and a broadcast of A
    # fit the 32 registers.
    mr = largest_divisor(m, register_tile_rows(model))
    nv = 2 if panels % 2 == 0 else 1
    # Loops of the packed op: m, n panels, k groups, then the 16 columns and
    # 4 bytes of a group.
    rank = linalg.rank + 2
    threads = [0] * rank
    if model.threads > 1:
        if panels >= model.threads and panels % (model.threads * nv) == 0:
            threads[dims.n] = panels // model.threads
        elif m % (model.threads * mr) == 0:
            threads[dims.m] = m // model.threads
    # kc groups of a B panel pair stay in L1 (half of it); mc rows of A
    # (4 kc bytes each) in half of L2.
    panel_bytes = nv * VNNI_LANES * VNNI_GROUP
    kc = max(1, min(groups, (model.l1_bytes // 2) // panel_bytes, 256))
    mc = largest_divisor(threads[dims.m] or m, max(mr, min(256, (model.l2_bytes // 2)
                                                           // (kc * VNNI_GROUP))), mr)
    cache = [0] * rank
    register = [0] * rank
    cache[dims.m], register[dims.m] = mc, mr
    cache[dims.n], register[dims.n] = largest_divisor(threads[dims.n] or panels, 8, nv), nv
    cache[dims.k], register[dims.k] = kc, 1
    packed_extents = list(extents) + [VNNI_LANES, VNNI_GROUP]
    packed_extents[dims.n], packed_extents[dims.k] = panels, groups
    for d in range(rank):
        if cache[d] >= packed_extents[d]:
            cache[d] = 0
        if register[d] >= (cache[d] or packed_extents[d]):
            register[d] = 0
    if threads[dims.n] >= panels:
        threads[dims.n] = 0
    # A: [M, K/4, 4]; B: [K/4, N/16, 16, 4] -> [N/16, K/4, 16, 4]; C: [M, N/16, 16].
    pack_tiles = ((1, 1, 0), (1, 1, 1, 0), (1, 1, 0), (1, 1, 0))
    return DotProductSchedule(
        group=group, root=linalg.tag, threads=tuple(threads) if any(threads) else (),
        tile_sizes=(tuple(cache), tuple(register)),
        packing=Packing(tuple(packed_sizes), (), (1, 0), True),
        unroll=(mr, nv), hoist=bool(register[dims.k]), fills=fill_tilings(fills, model),
        pack_tiles=pack_tiles)
