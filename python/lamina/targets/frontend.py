"""The stages every target's pipeline starts with: from Lamina's operators
to upstream linalg on tensors.

* `nn`: operator-level simplification (`nn-canonicalize`);
* `fused`: composite ops decomposed into primitive nn ops (`nn-decompose`;
  attention stays whole) and the nn ops partitioned into fusion groups,
  each an `nn.fused` op calling an outlined function (`nn-fuse`);
* `linalg`: `convert-nn-to-linalg` (fusion groups become calls of their
  lowered bodies), upstream cleanup and elementwise fusion on tensors within
  each group, then the groups inlined with their ops marked
  `lamina.fusion_group` / `lamina.fusion_kind` (`nn-inline-fused`), which
  is what a schedule tiles and fuses.

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
        Stage("fused", [
            "nn-decompose",
            "nn-fuse",
        ], description="primitive operators in fusion groups (nn.fused)"),
        Stage("linalg", [
            "convert-nn-to-linalg",
            "canonicalize",
            "linalg-fuse-elementwise-ops",
            "cse",
            "canonicalize",
            "nn-inline-fused",
        ], description="upstream linalg/tensor/arith/math on tensors, ops marked by fusion group"),
    ]
