"""Whole-graph layouts on the CPU: torchvision models compiled with
`nn-assign-layouts{layout=NCHW}` (every activation NCHW, transposed around
each convolution) and with the default `layout=auto`, timed in interleaved
rounds in one process.

    python bench/layouts.py                                # resnet18, mobilenet_v2, 2 threads
    python bench/layouts.py --models resnet50 --threads 1 --rounds 12

Each model (random seeded weights, one 3x224x224 image, weights as
constants) is compiled both ways with an empty cache; each round times
every variant for about a second in turn, so that a slow moment of the
machine falls on both. Printed per variant: the compile time, the largest
difference from eager PyTorch, the transposes between NCHW and NHWC left
in the scheduled linalg, and the median and best of the rounds' median
latencies.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("LAMINA_CACHE", "0")

import numpy as np  # noqa: E402

import lamina  # noqa: E402
from lamina.pipeline import Pipeline  # noqa: E402

VARIANTS = ("NCHW", "auto")


def pipeline(target: str, layout: str) -> Pipeline:
    return Pipeline.for_target(target).replace(
        "nn-assign-layouts", f"nn-assign-layouts{{layout={layout}}}", stage="layout")


def activation_transposes(module, pipe: Pipeline) -> int:
    scheduled = str(pipe.run(lamina.parse(str(module)), until="schedule"))
    return sum(1 for line in scheduled.splitlines() if "linalg.transpose" in line and (
        "permutation = [0, 2, 3, 1]" in line or "permutation = [0, 3, 1, 2]" in line))


def measure(name: str, threads: int, rounds: int) -> None:
    import torch
    import torchvision
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    with torch.inference_mode():
        expected = model(x).numpy()
    module = lamina.from_torch(model, (x,), params="constants")
    target = f"cpu:threads={threads}"
    compiled = {}
    for layout in VARIANTS:
        pipe = pipeline(target, layout)
        start = time.perf_counter()
        compiled[layout] = lamina.compile(module, target=target, pipeline=pipe)
        seconds = time.perf_counter() - start
        error = float(np.max(np.abs(compiled[layout](x.numpy()) - expected)))
        print(f"{name} threads={threads} layout={layout}: compile {seconds:.1f} s, "
              f"max abs error vs eager {error:.1e}, "
              f"{activation_transposes(module, pipe)} activation transposes", flush=True)
    image = x.numpy()
    medians = {layout: [] for layout in compiled}
    for _ in range(rounds):
        for layout, function in compiled.items():
            function(image)
            times, end = [], time.perf_counter() + 1.0
            while time.perf_counter() < end:
                start = time.perf_counter()
                function(image)
                times.append(time.perf_counter() - start)
            medians[layout].append(statistics.median(times))
    for layout, values in medians.items():
        print(f"{name} threads={threads} layout={layout}: median {statistics.median(values) * 1e3:.1f}"
              f" ms, best round {min(values) * 1e3:.1f} ms ({rounds} rounds)", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet18,mobilenet_v2")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args(argv)
    for name in args.models.split(","):
        measure(name, args.threads, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
