"""--cpu-vectorize: one loop of each linalg.generic on memrefs becomes vector ops.

For each `linalg.generic`, one op at a time, a transform-dialect script runs
upstream's `transform.structured.tile_using_for` and
`transform.structured.vectorize`: the chosen loop is tiled by a vector
width, the other loops by 1 (loops of extent 1 are not tiled), and the tile
becomes `vector.transfer_read`s, vector arithmetic and
`vector.transfer_write`s (reductions: `vector.multi_reduction`) inside
`scf.for` loops.

The loop is the output's innermost dim or else the op's innermost loop,
whichever every operand reads contiguously (as its own innermost dim) or
does not read at all (broadcasts); its extent must be a multiple of one of
`vector-sizes`, tried in order. Ops this does not fit (convolution windows,
transposes, i1 buffers, tensors, dynamic shapes, odd extents) are left as
they are; if the vectorizer refuses a tiled op, the op stays tiled and
unvectorized. Either way the `loops` stage turns what is left into loops.

Expects `linalg.generic` ops on statically shaped memrefs (named ops
generalized by `linalg-generalize-named-ops`). Guarantees: the IR computes
the same values; only `linalg.generic` ops are rewritten, and the marker
attribute the transform script matches on is removed again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from lamina.pass_registry import Pass, register_pass

_VECTORIZE_SCRIPT = """
module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    %op = transform.structured.match attributes {{{tag}}} in %root
        : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:{count} = transform.structured.tile_using_for %op tile_sizes [{sizes}]
        : (!transform.any_op) -> (!transform.any_op{loop_types})
    transform.structured.vectorize %tiled : !transform.any_op
    transform.yield
  }}
}}
"""


@register_pass
@dataclass
class CPUVectorize(Pass):
    """Tiles one contiguous loop of each `linalg.generic` on memrefs by a vector width and vectorizes the tile."""

    argument = "cpu-vectorize"
    vector_sizes: tuple[int, ...] = (16, 8, 4)

    TAG: ClassVar[str] = "lamina.vectorize"

    def run(self, op: ir.Operation) -> None:
        from mlir.dialects.transform import interpreter
        generics = []

        def collect(child):
            if child.operation.name == "linalg.generic":
                generics.append(child.operation)
            return ir.WalkResult.ADVANCE

        op.walk(collect, ir.WalkOrder.PRE_ORDER)
        for generic in generics:
            sizes = self.tile_sizes(generic)
            if sizes is None:
                continue
            count = sum(1 for size in sizes if size)
            script = _VECTORIZE_SCRIPT.format(tag=self.TAG, count=count,
                                              sizes=", ".join(map(str, sizes)),
                                              loop_types=", !transform.any_op" * count)
            generic.attributes[self.TAG] = ir.UnitAttr.get()
            with generic.location:
                transform = ir.Module.parse(script)
                try:
                    interpreter.apply_named_sequence(op, transform.body.operations[0], transform)
                except ValueError:
                    # What the bindings raise when the vectorizer refuses the
                    # tile; the op stays, tiled, for the loops stage.
                    pass
            self._untag(op)

    def _untag(self, op):
        def visit(child):
            if self.TAG in child.operation.attributes:
                del child.operation.attributes[self.TAG]
            return ir.WalkResult.ADVANCE

        op.walk(visit, ir.WalkOrder.PRE_ORDER)

    def tile_sizes(self, generic: ir.Operation) -> list[int] | None:
        """Tile sizes (0 = not tiled) vectorizing one loop, or None."""
        maps = [ir.AffineMapAttr(a).value for a in generic.attributes["indexing_maps"]]
        for operand in generic.operands:
            t = operand.type
            element = ir.ShapedType(t).element_type if isinstance(t, ir.ShapedType) else t
            if str(element) == "i1" or (isinstance(t, ir.ShapedType) and
                                         not (isinstance(t, ir.MemRefType) and t.has_static_shape)):
                return None
        if not maps or not all(m.is_projected_permutation for m in maps):
            return None
        extents: list[int | None] = [None] * maps[0].n_dims
        for operand, indexing in zip(generic.operands, maps):
            if isinstance(operand.type, ir.MemRefType):
                for position, expr in enumerate(indexing.results):
                    dim = ir.AffineDimExpr(expr).position
                    extents[dim] = operand.type.shape[position]
        if not extents or None in extents:
            return None
        candidates = []
        if len(maps[-1].results):
            candidates.append(ir.AffineDimExpr(maps[-1].results[-1]).position)
        candidates.append(len(extents) - 1)
        for dim in candidates:
            contiguous = all(dim not in dims or dims[-1] == dim for dims in
                             ([ir.AffineDimExpr(e).position for e in m.results] for m in maps))
            if not contiguous:
                continue
            for width in self.vector_sizes:
                if extents[dim] % width == 0:
                    return [width if d == dim else (0 if extent == 1 else 1)
                            for d, extent in enumerate(extents)]
        return None
