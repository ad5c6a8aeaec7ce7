"""Reading upstream's `shard` dialect (the grids of a sharded program).

The sharding passes and lowerings (`nn-shard-partition`,
`convert-shard-collectives-to-mpi`) and `lamina.sharding` all read the
`shard.grid` ops of a module; the helper lives here, below both layers.
"""

from __future__ import annotations

from mlir import ir


def grids(module: ir.Operation) -> dict[str, tuple[int, ...]]:
    """The `shard.grid` ops at the top of a module: name -> shape."""
    found = {}
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "shard.grid":
            name = ir.StringAttr(op.attributes["sym_name"]).value
            found[name] = tuple(ir.DenseI64ArrayAttr(op.attributes["shape"]))
    return found
