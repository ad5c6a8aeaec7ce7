"""The stages every target's pipeline starts with: from Lamina's operators
to upstream linalg on tensors.

* `nn`: operator-level simplification (`nn-canonicalize`);
* `linalg`: `convert-nn-to-linalg`, then upstream cleanup and elementwise
  fusion on tensors.

A target appends its own stages (bufferization and loops on the CPU,
hardware mapping on a GPU) after these.
"""

from __future__ import annotations

from lamina.pipeline import Stage


def frontend_stages() -> list[Stage]:
    """Fresh copies of the shared front-end stages, in order."""
    return [
        Stage("nn", [
            "nn-canonicalize",
        ], description="operators on tensors"),
        Stage("linalg", [
            "convert-nn-to-linalg",
            "canonicalize",
            "linalg-fuse-elementwise-ops",
            "cse",
            "canonicalize",
        ], description="upstream linalg/tensor/arith/math on tensors"),
    ]
