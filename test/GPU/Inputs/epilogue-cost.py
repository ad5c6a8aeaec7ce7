"""Reads two kernel manifests, a plain matmul's and the same matmul's with
an epilogue, and prints the machine instructions the epilogue adds per
element each thread stores, against a budget.

    epilogue-cost.py PLAIN.json FUSED.json ELEMENTS BUDGET

ELEMENTS is the number of elements of the result."""

import json
import sys

plain, fused = (json.load(open(path)) for path in sys.argv[1:3])
elements, budget = int(sys.argv[3]), float(sys.argv[4])
launch = fused["launches"][0]
threads = 1
for extent in launch["grid"] + launch["block"]:
    threads *= extent
per_thread = elements // threads
(kernel,) = fused["kernels"]
added = fused["kernels"][kernel]["sass_instructions"] \
    - plain["kernels"][kernel]["sass_instructions"]
cost = added / per_thread
print(f"{fused['target']}: {per_thread} elements per thread, "
      f"{cost:.1f} instructions per element: "
      + ("within budget" if cost <= budget else f"OVER the budget of {budget}"))
