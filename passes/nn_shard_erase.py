"""--nn-shard-erase: an nn program with shardings runs in one process.

Expects a module whose values may carry upstream `shard` annotations
(`shard.grid`, `shard.sharding`, `shard.shard`), as `nn-shard-partition`
takes them. Each `shard.shard` is replaced by the value it annotates, and
the `shard.sharding` and `shard.grid` ops are erased.

Guarantees: the program computes what it computes with its shardings (a
sharding says where values live, not what they are), on whole tensors and
without communication; no `shard` op remains. This is how a sharded
program runs in one process, and what its distributed runs are compared
with.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.pass_registry import Pass, register_pass

SHARD_OPS = ("shard.shard", "shard.sharding", "shard.grid")


@register_pass
@dataclass
class NNShardErase(Pass):
    """Removes upstream shard annotations (shard.shard, shard.sharding, shard.grid), so that a sharded program runs whole in one process."""

    argument = "nn-shard-erase"

    def run(self, op: ir.Operation) -> None:
        found: list[ir.Operation] = []

        def visit(inner):
            if inner.name in SHARD_OPS:
                found.append(inner)
            return ir.WalkResult.ADVANCE

        op.walk(visit, ir.WalkOrder.POST_ORDER)
        by_name = {name: [o for o in found if o.name == name] for name in SHARD_OPS}
        for shard in by_name["shard.shard"]:
            shard.results[0].replace_all_uses_with(shard.operands[0])
        for name in SHARD_OPS:
            for inner in by_name[name]:
                inner.erase()
