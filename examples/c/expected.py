"""The NumPy reference of main.c's output: examples/mlp.mlir on main.c's
fixed inputs (element i of argument k is ((37 i + 11 k) mod 101) / 101 -
1/2, computed in float32 as C does), evaluated by Lamina's reference
evaluator (one NumPy call per nn op).

    python expected.py                 # prints what main.c should print
    ./main | python expected.py -      # compares main.c's output with it
    python expected.py --model ../mlp.mlir -   # the program (default: ../mlp.mlir)

Comparing prints `ok: N probabilities within rtol 1e-4, atol 1e-5` (exit
0) or the first mismatch (exit 1).
"""

import os
import sys

import numpy as np

import lamina
from lamina.reference import evaluate

HERE = os.path.dirname(os.path.abspath(__file__))


def inputs(module):
    from lamina.runtime import entry_signature
    _, types, _ = entry_signature(module, None)
    arrays = []
    for k, t in enumerate(types):
        i = np.arange(int(np.prod(t.shape)), dtype=np.int64)
        values = ((37 * i + 11 * k) % 101).astype(np.float32) / np.float32(101) - np.float32(0.5)
        arrays.append(values.astype(np.float32).reshape(t.shape))
    return arrays


def expected(model):
    module = lamina.parse_file(model)
    return evaluate(module, inputs(module))[0]


def main(argv):
    model = os.path.join(HERE, "..", "mlp.mlir")
    if argv[:1] == ["--model"] and len(argv) > 1:
        model, argv = argv[1], argv[2:]
    probabilities = expected(model)
    if not argv:
        for row, values in enumerate(probabilities):
            print(f"row {row}: {' '.join(f'{v:.6f}' for v in values)}  class {values.argmax()}")
        return 0
    text = sys.stdin.read() if argv[0] == "-" else open(argv[0]).read()
    rows = [line for line in text.splitlines() if line.startswith("row ")]
    if len(rows) != len(probabilities):
        print(f"expected {len(probabilities)} rows, got {len(rows)}")
        return 1
    for row, (line, values) in enumerate(zip(rows, probabilities)):
        fields = line.split(":", 1)[1].split()
        actual = np.array([float(f) for f in fields[:-2]], np.float32)
        if actual.shape != values.shape or not np.allclose(actual, values, rtol=1e-4, atol=1e-5):
            print(f"row {row}: got {actual}, expected {values}")
            return 1
        if int(fields[-1]) != int(values.argmax()):
            print(f"row {row}: class {fields[-1]}, expected {values.argmax()}")
            return 1
    print(f"ok: {probabilities.size} probabilities within rtol 1e-4, atol 1e-5")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
