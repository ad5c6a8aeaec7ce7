"""Reads a kernel manifest on stdin and prints, per kernel, whether ptxas's
resources keep the contract: at most 255 registers, no spills, no stack
frame (local memory)."""

import json
import sys

manifest = json.load(sys.stdin)
for name, resources in sorted(manifest["kernels"].items()):
    kept = (resources["registers"] <= 255 and resources["spill_stores"] == 0
            and resources["spill_loads"] == 0 and resources["stack_frame"] == 0)
    print(f"{name}: " + ("registers <= 255, no spills, no stack frame" if kept
                         else f"BROKEN {resources}"))
