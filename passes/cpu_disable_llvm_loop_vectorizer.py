"""--cpu-disable-llvm-loop-vectorizer: LLVM's loop vectorizer leaves the
loops that Lamina's schedules vectorised alone.

The schedules vectorise the loop nests they cover in MLIR (register tiles
of vector FMAs, row loops of vectors); what reaches LLVM from them is
loops over vectors. LLVM's loop vectorizer, which `-O3` runs on every
loop, finds nothing to widen in those, but deciding so was the largest
cost of the JIT: 44% of `opt -O3`'s time on MobileNetV2 (19 of 43 CPU
seconds). Each `scf.for` whose body computes on vectors gets the loop
annotation `#llvm.loop_annotation<vectorize = #llvm.loop_vectorize<disable
= true>>`, which `convert-scf-to-cf` puts on the loop's back edge and LLVM
reads as `llvm.loop.vectorize.enable false`: the vectorizer skips the
loop at once. Scalar loops (what no schedule covered, lowered by
`convert-linalg-to-loops`) are still LLVM's to vectorise. Compiling
MobileNetV2 for one thread took 55 CPU seconds instead of 78.

Expects scf loops before `convert-scf-to-cf`. Guarantees: the loops and
their bodies are unchanged; a loop that has a loop annotation keeps it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.linalg_builders import matching_ops
from lamina.pass_registry import Pass, register_pass

ANNOTATION = "loop_annotation"


def computes_on_vectors(loop: ir.Operation) -> bool:
    """Whether the body of `loop` (nested loops included) has an op with a
    vector result."""
    return bool(matching_ops(loop, lambda op: any(
        isinstance(r.type, ir.VectorType) for r in op.results)))


@register_pass
@dataclass
class CPUDisableLLVMLoopVectorizer(Pass):
    """Marks the scf loops that compute on vectors so that LLVM's loop vectorizer skips them: the schedules vectorised them, and the vectorizer's analysis was most of the JIT's time."""

    argument = "cpu-disable-llvm-loop-vectorizer"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage

    def run(self, op: ir.Operation) -> None:
        with op.context:
            disabled = ir.Attribute.parse(
                "#llvm.loop_annotation<vectorize = #llvm.loop_vectorize<disable = true>>")
        for loop in matching_ops(op, lambda child: child.name == "scf.for"):
            if ANNOTATION not in loop.attributes and computes_on_vectors(loop):
                loop.attributes[ANNOTATION] = disabled
