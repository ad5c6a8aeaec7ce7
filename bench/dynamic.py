"""A program with '?' dims compiled once, beside the static compile of each
size: `mlp_dynamic`, `gelu(x @ W1 + b1) @ W2` with x `?x256`, W1 256x512,
W2 512x256, at 1, 17, 128 and 512 rows.

    python bench/dynamic.py                        # 1 thread
    python bench/dynamic.py --threads 2 --rounds 5

For each size: the dynamic program's median time (one compile serves
every size), the static program's (compiled for that size), their ratio
(dynamic / static: 1.0 is as fast as a static compile) and the compile
times; then the same with the weights bound (`ArrayFunction.bind`: their
packing runs once, in the initialiser, as a server runs it). Rounds interleave the two, and each time is the best of the
rounds' medians, so that a loaded machine slows both alike. The results
are checked against NumPy (1e-4).

Writes bench/results-dynamic.md (`--output` elsewhere).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

SIZES = (1, 17, 128, 512)

MLP = """
func.func @main(%x: tensor<ROWSx256xf32> ATTRS, %w1: tensor<256x512xf32>,
                %b1: tensor<512xf32>, %w2: tensor<512x256xf32>) -> tensor<ROWSx256xf32> {
  %h = "nn.matmul"(%x, %w1) : (tensor<ROWSx256xf32>, tensor<256x512xf32>) -> tensor<ROWSx512xf32>
  %hb = "nn.add"(%h, %b1) : (tensor<ROWSx512xf32>, tensor<512xf32>) -> tensor<ROWSx512xf32>
  %g = "nn.gelu"(%hb) : (tensor<ROWSx512xf32>) -> tensor<ROWSx512xf32>
  %y = "nn.matmul"(%g, %w2) : (tensor<ROWSx512xf32>, tensor<512x256xf32>) -> tensor<ROWSx256xf32>
  return %y : tensor<ROWSx256xf32>
}
"""


def source(rows: int | None) -> str:
    """The MLP with `rows` rows (None: '?', named S)."""
    if rows is None:
        return MLP.replace("ROWS", "?").replace("ATTRS", '{nn.dims = ["S"]}')
    return MLP.replace("ROWS", str(rows)).replace("ATTRS", "")


def median_seconds(call, budget: float) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < 0.1:
        call()
    times = []
    start = time.perf_counter()
    while time.perf_counter() - start < budget or len(times) < 5:
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=0.3, help="seconds per measurement")
    parser.add_argument("--output", default=os.path.join(HERE, "results-dynamic.md"))
    options = parser.parse_args(argv)

    import lamina
    target = lamina.get_target(f"cpu:threads={options.threads}")
    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((256, 512)) / 16).astype(np.float32)
    b1 = rng.standard_normal(512).astype(np.float32)
    w2 = (rng.standard_normal((512, 256)) / 22).astype(np.float32)

    start = time.perf_counter()
    dynamic = lamina.compile(lamina.parse(source(None)), target=target)
    dynamic_compile = time.perf_counter() - start
    bound_dynamic = dynamic.bind({1: w1, 2: b1, 3: w2})
    rows = []
    for size in SIZES:
        x = rng.standard_normal((size, 256)).astype(np.float32)
        start = time.perf_counter()
        static = lamina.compile(lamina.parse(source(size)), target=target)
        static_compile = time.perf_counter() - start
        expected = static(x, w1, b1, w2)
        got = dynamic(x, w1, b1, w2)
        scale = float(np.abs(expected).max()) or 1.0
        if float(np.abs(got - expected).max()) > 1e-4 * scale:
            raise SystemExit(f"mlp_dynamic at {size} rows differs from the static compile")
        weights = {1: w1, 2: b1, 3: w2}
        functions = {"dynamic": (dynamic, [x, w1, b1, w2]), "static": (static, [x, w1, b1, w2]),
                     "dynamic bound": (bound_dynamic, [x]),
                     "static bound": (static.bind(weights), [x])}
        times = {name: [] for name in functions}
        for _ in range(options.rounds):
            for name, (function, args) in functions.items():
                arrays = function.check_arguments(args)
                results = function.allocate_results(arrays)
                times[name].append(median_seconds(
                    lambda: function.call_with_results(arrays, results), options.budget))
        best = {name: min(values) for name, values in times.items()}
        rows.append((size, best, static_compile))
        print(f"mlp_dynamic S={size}: " + ", ".join(f"{name} {t * 1e6:.0f} us"
                                                   for name, t in best.items()))

    lines = [
        "# One compile for every size: mlp_dynamic",
        "",
        f"`python bench/dynamic.py --threads {options.threads} --rounds {options.rounds}`, "
        f"{datetime.date.today()}, {platform.machine()} ({os.cpu_count()} CPUs; the machine "
        "is shared, so the times are the best of interleaved rounds' medians).",
        "`gelu(x @ W1 + b1) @ W2`, x `?x256`, W1 256x512, W2 512x256. The dynamic program "
        f"compiled once in {dynamic_compile:.2f} s.",
        "",
        "| rows | dynamic (us) | static (us) | dynamic / static | weights bound: dynamic (us) "
        "| static (us) | dynamic / static | static compile (s) |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for size, best, compile_s in rows:
        dyn, stat = best["dynamic"], best["static"]
        bound_dyn, bound_stat = best["dynamic bound"], best["static bound"]
        lines.append(f"| {size} | {dyn * 1e6:.0f} | {stat * 1e6:.0f} | {dyn / stat:.2f} "
                     f"| {bound_dyn * 1e6:.0f} | {bound_stat * 1e6:.0f} "
                     f"| {bound_dyn / bound_stat:.2f} | {compile_s:.2f} |")
    with open(options.output, "w") as out:
        out.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
