"""The layers of the model suite one at a time: each distinct convolution
and linear layer of a torchvision model, as a program of its own, in
Lamina beside ONNX Runtime and OpenVINO, in one process.

    pip install -e '.[bench]'
    python bench/layers.py                                   # resnet50, mobilenet_v2; 2 threads
    python bench/layers.py --models vit_b_16 --threads 1 --rounds 6

What a model's table explains: which layer shapes hold its time and how
far each is from the engines', the number a whole-model ratio
(`bench/models.py`) cannot give. Each layer is recorded where the model
runs it (a forward hook on every `Conv2d` and `Linear`: its input's shape
and its parameters; batch norm is not included, as every system folds it
into the convolution) and made a module of its own, the layer then ReLU,
with seeded random weights: layers alike in shape and parameters are one
row, `n` says how many the model has. Every system computes the same module
on the same input (NCHW, one image):

* `lamina`: `lamina.from_torch(module, inputs, params="constants")`, then
  `lamina.compile` for `cpu:threads=N`;
* `onnxruntime`: the module exported to ONNX, an `InferenceSession` with
  `intra_op_num_threads` threads;
* `openvino`: the same ONNX file, `openvino.compile_model` with
  `INFERENCE_NUM_THREADS` and the latency hint.

A layer alone has the program's edges around it: Lamina computes
convolutions channels-last and transposes an NCHW input and result at
the edges of the program (within a model they are at the model's edges
only), and the engines reorder to their blocked layouts likewise. So a
row is an upper bound on a layer's time inside a model, for every system.

Columns: the layer, `n`, its GFLOP, each system's best and median time of
interleaved rounds (each round times every system for about `--budget`
seconds in turn), Lamina's ratio to the faster engine (> 1: Lamina is
faster) and `n x` Lamina's median, the share of the model's layer time the
shape holds; rows sorted by that share. Lamina's results are checked
against PyTorch's (1e-4 of the largest magnitude).

Writes bench/results-layers.md (`--output` elsewhere).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import models  # noqa: E402

SYSTEMS = ("lamina", "onnxruntime", "openvino")


@dataclass(frozen=True)
class Layer:
    """A convolution (`kind` "conv": in channels, out channels, kernel,
    stride, padding, groups, dilation) or a linear layer (`kind`
    "linear": in features, out features) on an input of `shape`."""

    kind: str
    shape: tuple[int, ...]
    parameters: tuple

    def describe(self) -> str:
        if self.kind == "conv":
            c, f, k, s, p, g, d = self.parameters
            text = f"conv {k[0]}x{k[1]} {c}->{f} at {self.shape[2]}x{self.shape[3]}"
            if s != (1, 1):
                text += f" stride {s[0]}"
            if g > 1:
                text += " depthwise" if g == c == f else f" groups {g}"
            return text
        k, n = self.parameters
        return f"linear {k}->{n} on {'x'.join(map(str, self.shape))}"

    def module(self):
        import torch
        torch.manual_seed(0)
        if self.kind == "conv":
            c, f, k, s, p, g, d = self.parameters
            layer = torch.nn.Conv2d(c, f, k, s, p, groups=g, dilation=d)
        else:
            layer = torch.nn.Linear(*self.parameters)
        return torch.nn.Sequential(layer, torch.nn.ReLU()).eval()

    def gflop(self) -> float:
        import math
        if self.kind == "conv":
            c, f, k, s, p, g, d = self.parameters
            n, _, h, w = self.shape
            oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
            ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
            return 2.0 * n * f * oh * ow * (c // g) * k[0] * k[1] / 1e9
        k, n = self.parameters
        return 2.0 * math.prod(self.shape[:-1]) * k * n / 1e9


def model_layers(name: str) -> dict[Layer, int]:
    """The distinct convolution and linear layers of model `name`, in the
    order the model first runs them, with how many it has of each."""
    import torch
    model, inputs = models.build(name)
    found: dict[Layer, int] = {}

    def hook(module, args, _output):
        shape = tuple(args[0].shape)
        if isinstance(module, torch.nn.Conv2d):
            if not isinstance(module.padding, tuple):
                return  # "same"/"valid" strings: none in the suite
            layer = Layer("conv", shape, (module.in_channels, module.out_channels,
                                          module.kernel_size, module.stride, module.padding,
                                          module.groups, module.dilation))
        else:
            layer = Layer("linear", shape, (module.in_features, module.out_features))
        found[layer] = found.get(layer, 0) + 1

    handles = [m.register_forward_hook(hook) for m in model.modules()
               if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    with torch.inference_mode():
        model(*inputs)
    for handle in handles:
        handle.remove()
    return found


def _onnx(module, inputs, path: str) -> str:
    """`module` exported to ONNX by TorchScript tracing (a layer has no
    control flow; the exporter's deprecation warning is silenced)."""
    import warnings

    import torch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, tuple(inputs), path, input_names=["input"], dynamo=False)
    return path


def prepare(system: str, module, inputs, threads: int, workdir: str):
    """A call of `module` on `inputs` in `system`, and its result's check."""
    import numpy as np
    arrays = [t.numpy() for t in inputs]
    if system == "lamina":
        import lamina
        compiled = lamina.compile(lamina.from_torch(module, tuple(inputs), params="constants"),
                                  target=f"cpu:threads={threads}")
        return lambda: compiled(*arrays)
    path = os.path.join(workdir, "layer.onnx")
    if not os.path.exists(path):
        _onnx(module, inputs, path)
    if system == "onnxruntime":
        import onnxruntime
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(path, options,
                                               providers=["CPUExecutionProvider"])
        feeds = {session.get_inputs()[0].name: arrays[0]}
        return lambda: session.run(None, feeds)[0]
    if system == "openvino":
        import openvino
        compiled = openvino.compile_model(path, "CPU", {"INFERENCE_NUM_THREADS": threads,
                                                        "PERFORMANCE_HINT": "LATENCY",
                                                        "INFERENCE_PRECISION_HINT": "f32"})
        request = compiled.create_infer_request()
        return lambda: np.asarray(request.infer(arrays)[compiled.output(0)])
    raise ValueError(f"unknown system '{system}' (systems: {', '.join(SYSTEMS)})")


def time_layer(layer: Layer, systems: list[str], threads: int, rounds: int,
               budget: float) -> dict[str, tuple[float, float] | str]:
    """Each system's (best, median) seconds for `layer`, or why it did not
    run."""
    import numpy as np
    import torch
    torch.set_num_threads(threads)
    module = layer.module()
    inputs = (torch.randn(*layer.shape, generator=torch.Generator().manual_seed(1)),)
    with torch.inference_mode():
        expected = module(*inputs).numpy()
    calls, results = {}, {}
    with tempfile.TemporaryDirectory() as workdir:
        for system in systems:
            try:
                call = prepare(system, module, inputs, threads, workdir)
                output = np.asarray(call())
                scale = float(np.max(np.abs(expected))) or 1.0
                error = float(np.max(np.abs(output - expected))) / scale
                if system == "lamina" and error > 1e-4:
                    results[system] = f"differs from PyTorch by {error:.1e} of its largest value"
                    continue
                calls[system] = call
            except Exception as error:  # a system that cannot run the layer says why
                results[system] = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
    medians = {system: [] for system in calls}
    best = {system: float("inf") for system in calls}
    for _ in range(rounds):
        for system, call in calls.items():
            times = []
            start = time.perf_counter()
            while time.perf_counter() - start < budget or len(times) < 3:
                before = time.perf_counter()
                call()
                times.append(time.perf_counter() - before)
            medians[system].append(statistics.median(times))
            best[system] = min(best[system], min(times))
    for system in calls:
        results[system] = (best[system], statistics.median(medians[system]))
    return results


def _ms(value) -> str:
    if isinstance(value, str):
        return value
    best, median = value
    return f"{best * 1e3:.3f} / {median * 1e3:.3f}"


def table(name: str, rows: list[tuple[Layer, int, dict]], systems: list[str]) -> str:
    lamina_total = sum(n * r["lamina"][1] for _, n, r in rows if isinstance(r.get("lamina"), tuple))
    lines = [f"| {name} layer | n | GFLOP | " + " | ".join(f"{s} best / median ms" for s in systems)
             + " | x faster engine | share of Lamina's layer time |",
             "|---|---|---|" + "---|" * len(systems) + "---|---|"]

    def share(row):
        result = row[2].get("lamina")
        return row[1] * result[1] if isinstance(result, tuple) else 0.0

    for layer, n, results in sorted(rows, key=share, reverse=True):
        engines = [results[s][1] for s in systems
                   if s != "lamina" and isinstance(results.get(s), tuple)]
        ratio = "-"
        if engines and isinstance(results.get("lamina"), tuple):
            ratio = f"{min(engines) / results['lamina'][1]:.2f}"
        part = f"{share((layer, n, results)) / lamina_total * 100:.1f}%" if lamina_total else "-"
        lines.append(f"| {layer.describe()} | {n} | {layer.gflop():.4f} | "
                     + " | ".join(_ms(results.get(s, "-")) for s in systems)
                     + f" | {ratio} | {part} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet50,mobilenet_v2",
                        help=f"comma-separated, of: {', '.join(models.VISION)}")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=0.2,
                        help="seconds per system per round")
    parser.add_argument("--output", default=os.path.join(HERE, "results-layers.md"))
    args = parser.parse_args(argv)
    names = [m for m in args.models.split(",") if m]
    systems = [s for s in args.systems.split(",") if s]
    for name in names:
        if name not in models.VISION:
            parser.error(f"unknown model '{name}' (models: {', '.join(models.VISION)})")
    for system in systems:
        if system not in SYSTEMS:
            parser.error(f"unknown system '{system}' (systems: {', '.join(SYSTEMS)})")
    sections = [f"# Layers of the model suite, one at a time\n\n"
                f"{datetime.date.today()}, {platform.machine()}, {args.threads} thread(s), "
                f"`python bench/layers.py --models {','.join(names)} --threads {args.threads} "
                f"--rounds {args.rounds}`; best / median of interleaved rounds (ms). Each layer "
                f"is a program of its own (the layer, then ReLU; NCHW in and out), see "
                f"the script's docstring.\n"]
    for name in names:
        rows = []
        for layer, count in model_layers(name).items():
            results = time_layer(layer, systems, args.threads, args.rounds, args.budget)
            rows.append((layer, count, results))
            print(f"{name}: {layer.describe()} x{count}: "
                  + ", ".join(f"{s} {_ms(r)}" for s, r in results.items()), flush=True)
        sections.append(f"## {name}\n\n" + table(name, rows, systems) + "\n")
    text = "\n".join(sections)
    print(text)
    with open(args.output, "w") as file:
        file.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
