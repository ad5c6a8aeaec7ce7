"""Lamina's GPU kernels: every kernel checked against NumPy, then f16 and
bf16 matmul at 4096^3 and the fused matmul + bias + gelu in TFLOP/s
against torch.matmul (cuBLAS), then whole programs as device-resident
engines (the examples, a GPT-2-small-sized block and a Llama-style block
at 8x1024 tokens, ResNet-50 at batch 32) against torch eager and
torch.compile.

    python bench/gpu.py                 # a GPU if there is one, else the emulation
    python bench/gpu.py --emulate       # the emulation even with a GPU
    python bench/gpu.py --emulate --no-kernels --models examples

    # Compile here, run on a GPU machine that has no LLVM toolchain:
    python bench/gpu.py --save-programs DIR
    python bench/gpu.py --programs DIR --isolate 90

With a GPU (an H200 is the reference: the sm_90a kernels need a Hopper
GPU; the sm_80 kernels run there from their PTX), every kernel of the
correctness list runs through the CUDA driver (`lamina.compile(...,
target="cuda:ARCH")`) and is compared with the NumPy reference of its
program; then each 4096^3 workload is compiled for each architecture, its
output compared with torch's, and timed with CUDA events (median of 20
runs after 3 warm-up runs) next to torch.matmul (cuBLAS) and, for the
fused workload, torch's unfused `gelu(a @ b + bias)`. Without a GPU the
same kernels run at their small shapes on the CPU through the emulation
(`--emulate`), ptxas's resources are reported per kernel, and the
TFLOP/s table says that it needs a GPU. Prints the tables and writes
bench/results-gpu.md. Runs in well under 8 minutes on an H200.

`--save-programs DIR` compiles every program of both lists for both
architectures (`CUDATarget.build`, no GPU needed) and writes each as a
GPU program file (`GPUProgram.save`, its manifest with ptxas's resources),
with the correctness cases' inputs and NumPy results; `--programs DIR` runs those
instead of compiling, so the GPU machine needs only the MLIR Python
bindings, NumPy, cuda-bindings and PyTorch. `--isolate SECONDS` runs each
kernel check and each timed workload in a process of its own, given at
most that long: a kernel that hangs (an mbarrier phase never completed)
or faults (which ends the CUDA context) is reported in its row and the
others still run.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import ml_dtypes  # noqa: F401  (bfloat16 for NumPy, as saved programs name it)
import numpy as np

import lamina
from lamina.cuda_runtime import CUDAError, CUDAFunction, GPUProgram, driver
from lamina.reference import compare, evaluate, random_inputs
from lamina.runtime import clone_module, entry_signature
from lamina.lowering.nn_to_hw import ConvertNNToHW
from lamina.targets import get_target
from lamina.types import numpy_dtype

HERE = os.path.dirname(os.path.abspath(__file__))
GPU_TESTS = os.path.join(HERE, os.pardir, "test", "GPU")
ARCHITECTURES = ("sm_80", "sm_90a")


def matmul_program(m: int, n: int, k: int, dtype: str, epilogue: str = "") -> str:
    """An nn matmul of M x K by K x N with an epilogue: "bias", "relu",
    "gelu", "gelu_tanh" and "residual", joined by "+"."""
    t = lambda *shape: f"tensor<{'x'.join(map(str, shape))}x{dtype}>"  # noqa: E731
    arguments = [f"%a: {t(m, k)}", f"%b: {t(k, n)}"]
    body = [f'  %0 = "nn.matmul"(%a, %b) : ({t(m, k)}, {t(k, n)}) -> {t(m, n)}']
    value = "%0"
    for number, step in enumerate(filter(None, epilogue.split("+")), start=1):
        if step in ("bias", "residual"):
            shape = (n,) if step == "bias" else (m, n)
            arguments.append(f"%{step}: {t(*shape)}")
            body.append(f'  %{number} = "nn.add"({value}, %{step}) : ({t(m, n)}, {t(*shape)}) '
                        f'-> {t(m, n)}')
        else:
            op, attributes = ("nn.relu", "") if step == "relu" else (
                "nn.gelu", ' {approximate = "tanh"}' if step == "gelu_tanh" else "")
            body.append(f'  %{number} = "{op}"({value}){attributes} : ({t(m, n)}) -> {t(m, n)}')
        value = f"%{number}"
    return (f"func.func @main({', '.join(arguments)}) -> {t(m, n)} {{\n" + "\n".join(body)
            + f"\n  return {value} : {t(m, n)}\n}}\n")


def correctness_cases() -> list[tuple[str, str]]:
    """(name, source) of every kernel kind Lamina generates, at small
    shapes that the tiles do not divide."""
    with open(os.path.join(GPU_TESTS, "Inputs", "matmul-chain.mlir")) as f:
        chain = f.read()
    with open(os.path.join(GPU_TESTS, "emulate-pipelined.mlir")) as f:
        pipelined = f.read()
    with open(os.path.join(GPU_TESTS, "nn-batched-matmul.mlir")) as f:
        batched = f.read()
    return [
        ("f16 200x136x200 +bias +relu", matmul_program(200, 136, 200, "f16", "bias+relu")),
        ("f16 96x200x136 +bias +gelu", matmul_program(96, 200, 136, "f16", "bias+gelu")),
        ("bf16 72x136x64 +residual +gelu(tanh)",
         matmul_program(72, 136, 64, "bf16", "residual+gelu_tanh")),
        ("f16 130x72x200 plain", matmul_program(130, 72, 200, "f16")),
        ("bf16 33x40x17 +residual (sync copies)",
         matmul_program(33, 40, 17, "bf16", "residual")),
        ("batched f16 3x72x136x40 +bias +gelu", batched),
        ("two kernels sharing a buffer", chain),
        ("hand-written hw: 3-stage cp.async", pipelined),
        ("f16 NCHW conv 2x32x14x14 3x3 +bias +relu (implicit GEMM)",
         conv_program((2, 32, 14, 14), (48, 32, 3, 3), "f16", "NCHW", padding=1)),
        ("bf16 NHWC conv 1x15x15x24 3x3 stride 2 +bias +relu (implicit GEMM)",
         conv_program((1, 15, 15, 24), (40, 24, 3, 3), "bf16", "NHWC", stride=2)),
        ("f32 depthwise conv 1x24x13x13 3x3 +bias +relu (direct)",
         conv_program((1, 24, 13, 13), (24, 1, 3, 3), "f32", "NCHW", padding=1, groups=24)),
    ]


def conv_program(x: tuple[int, ...], w: tuple[int, ...], dtype: str, layout: str,
                 stride: int = 1, padding: int = 0, groups: int = 1) -> str:
    """An nn.conv2d of an input `x` and an OIHW filter `w` in `layout`,
    with a bias of its channels and a relu."""
    from lamina.dialects import nn
    from lamina.types import TensorType

    def t(shape):
        return f"tensor<{'x'.join(map(str, shape))}x{dtype}>"
    view = nn.Conv2dOp.detached(strides=(stride, stride), padding=(padding,) * 4,
                                groups=groups, layout=layout)
    y = t(view.infer_type(TensorType(x, dtype), TensorType(w, dtype),
                          TensorType((w[0],), dtype)).shape)
    attributes = (f"strides = array<i64: {stride}, {stride}>, padding = array<i64: "
                  f"{', '.join([str(padding)] * 4)}>, groups = {groups} : i64, "
                  f"layout = \"{layout}\"")
    return (f"func.func @main(%x: {t(x)}, %w: {t(w)}, %b: {t((w[0],))}) -> {y} {{\n"
            f"  %y = \"nn.conv2d\"(%x, %w, %b) {{{attributes}}} : ({t(x)}, {t(w)}, "
            f"{t((w[0],))}) -> {y}\n"
            f"  %r = \"nn.relu\"(%y) : ({y}) -> {y}\n"
            f"  return %r : {y}\n}}\n")


def check_data(source: str, function) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Random inputs of a program and its NumPy reference's results on
    them (none for a kernel that writes its arguments in place)."""
    if not function.results:
        return [], []
    arrays = random_inputs(function.inputs, seed=1)
    return arrays, evaluate(lamina.parse(source), arrays, function.name)


def check_kernel(function, arrays: list[np.ndarray], expected: list[np.ndarray]) -> str:
    """Runs a compiled program and compares it with NumPy: `expected`, the
    nn reference's results on `arrays`, or for the hand-written hw kernel
    (its arguments written in place) relu(A @ B + bias)."""
    if function.results:
        got = function(*arrays)
        got = list(got) if isinstance(got, tuple) else [got]
        comparisons = [compare(g, e, spec.dtype)
                       for g, e, spec in zip(got, expected, function.results)]
        worst = max(c.worst_ratio for c in comparisons)
        ok = all(c.ok for c in comparisons)
        return f"{'ok' if ok else 'MISMATCH'} (worst error/tolerance {worst:.2f})"
    rng = np.random.default_rng(1)
    a, b, bias, c = (rng.uniform(-1, 1, spec.shape).astype(np.float16)
                     for spec in function.inputs)
    c[...] = 0
    function(a, b, bias, c)
    f = lambda x: x.astype(np.float32)  # noqa: E731
    want = np.maximum(f(a) @ f(b) + f(bias), 0)
    error = float(np.abs(f(c) - want).max())
    ok = np.allclose(f(c), want, rtol=1e-2, atol=2e-2)
    return f"{'ok' if ok else 'MISMATCH'} (max abs error {error:.3g} vs NumPy)"


def pipeline_for(arch: str, tiles: str | None):
    """The cuda target's pipeline, with the kernels' tiling forced to
    `tiles` (BMxBNxBKxSTAGES) when given."""
    pipeline = get_target(f"cuda:{arch}").pipeline()
    if tiles:
        for item in pipeline.stage("hw").passes:
            if isinstance(item, ConvertNNToHW):
                item.tiles = tiles
    return pipeline


def build(source: str, arch: str, tiles: str | None = None) -> GPUProgram:
    """A program compiled for `arch` (no GPU needed), its tiling forced to
    `tiles` when given."""
    return get_target(f"cuda:{arch}").build(lamina.parse(source),
                                             pipeline=pipeline_for(arch, tiles))


def resources(program: GPUProgram) -> str:
    """ptxas's registers, spills and shared memory of a program's kernels,
    and the blocks an SM holds, as its manifest says."""
    manifest = program.manifest
    if not manifest.get("kernels"):
        return "no ptxas"
    dynamic = {launch["kernel"]: launch["dynamic_shared_memory"]
               for launch in manifest["launches"]}
    parts = []
    for name, r in sorted(manifest["kernels"].items()):
        spills = r["spill_stores"] + r["spill_loads"]
        parts.append(f"{r['registers']} regs, {'no' if not spills else spills} spill bytes, "
                     f"{dynamic[name] // 1024} KiB dyn + {r['static_shared_memory']} B smem, "
                     f"{r['blocks_per_sm']} blocks/SM"
                     + (f", {r['sass_instructions']} instructions" if "sass_instructions" in r
                        else ""))
    return "; ".join(parts)


def check_row(index: int, arch: str, gpu, emulate: bool, programs: str | None) -> dict:
    """Correctness case `index` of `correctness_cases()` on `arch`."""
    name, source = correctness_cases()[index]
    target = get_target(f"cuda:{arch}")
    program = (GPUProgram.load(program_path(programs, "check", index, arch)) if programs
               else target.build(lamina.parse(source)))
    row = {"kernel": name, "arch": arch, "resources": resources(program)}
    if emulate:
        row["where"] = "CPU emulation"
    elif arch == "sm_90a" and gpu.capability != (9, 0):
        row.update(where="-", result="needs a Hopper GPU")
        return row
    else:
        row["where"] = gpu.name
    start = time.perf_counter()
    try:
        if emulate:
            function = target.emulation().compile(lamina.parse(source))
        else:
            function = CUDAFunction(program)
        if programs:
            arrays, expected = load_arrays(programs, index)
        else:
            arrays, expected = check_data(source, function)
        row["result"] = check_kernel(function, arrays, expected)
        if hasattr(function, "image_kind"):
            row["where"] += f" ({function.image_kind})"
    except lamina.CompileError as error:  # CUDAError included
        row["result"] = f"FAILED: {str(error).splitlines()[0]}"
    row["seconds"] = time.perf_counter() - start
    return row


PERFORMANCE = [
    ("f16 matmul", "f16", ""),
    ("bf16 matmul", "bf16", ""),
    ("f16 matmul+bias+gelu", "f16", "bias+gelu"),
]


# Tilings (BMxBNxBKxSTAGES) that --sweep times for the f16 matmul and the
# fused matmul + bias + gelu, to check the cost model's choice against.
SWEEP = {
    "sm_80": ["128x128x32x4", "128x128x32x3", "128x128x32x2", "128x128x64x3", "128x64x32x4",
              "64x128x32x4", "64x64x32x4"],
    "sm_90a": ["128x128x64x4", "128x128x64x3", "128x128x64x2", "128x64x64x4", "128x64x64x3",
               "64x128x64x4", "64x64x64x4"],
}


def sweep_units() -> list[tuple[int, str, str]]:
    """(PERFORMANCE index, arch, tiles) of the sweep."""
    return [(index, arch, tiles) for index in (0, 2) for arch in ARCHITECTURES
            for tiles in SWEEP[arch]]


def time_row(index: int, arch: str, gpu, size: int, runs: int, programs: str | None,
             tiles: str | None = None) -> dict:
    """Workload `index` of PERFORMANCE at size^3 on `arch` (with its
    kernels' tiling forced to `tiles`), timed next to torch (cuBLAS) and
    checked against torch's result."""
    import torch
    name, dtype, epilogue = PERFORMANCE[index]
    source = matmul_program(size, size, size, dtype, epilogue)
    program = (GPUProgram.load(os.path.join(programs, program_key("time", index, arch, tiles)
                                            + ".json")) if programs
               else build(source, arch, tiles))
    row = {"workload": name, "arch": arch, "tiles": tiles or "cost model",
           "resources": resources(program)}
    if arch == "sm_90a" and gpu.capability != (9, 0):
        row.update(result="needs a Hopper GPU", torch={})
        return row
    flops = 2.0 * size ** 3
    rng = np.random.default_rng(0)
    torch_dtype = torch.float16 if dtype == "f16" else torch.bfloat16
    # The same float32 values rounded to the element type for both.
    host = [rng.standard_normal(shape, dtype=np.float32) * 0.1
            for shape in ((size, size), (size, size), (size,))]
    a, b, bias = (torch.from_numpy(x).to("cuda", torch_dtype) for x in host)
    arrays = [x.astype(numpy_dtype(dtype)) for x in host]
    matmul = lambda: torch.matmul(a, b)  # noqa: E731
    unfused = lambda: torch.nn.functional.gelu(torch.matmul(a, b) + bias)  # noqa: E731
    row["torch"] = {"torch.matmul": time_torch(torch, matmul, runs)}
    if epilogue:
        row["torch"]["torch gelu(a@b+bias)"] = time_torch(torch, unfused, runs)
    expected = (unfused if epilogue else matmul)().float()
    try:
        function = CUDAFunction(program)
        results = function.allocate_results()
        with function.bind(arrays[:len(function.inputs)], results) as call:
            seconds = statistics.median(call.time(runs))
            call.read_back()
        got = torch.from_numpy(results[0].astype(np.float32)).to("cuda")
        error = float((got - expected).abs().max() / expected.abs().max())
        row.update(seconds=seconds, tflops=flops / seconds / 1e12, relative_error=error,
                   image=function.image_kind, result="ok" if error < 2e-2 else "MISMATCH")
    except lamina.CompileError as error:  # CUDAError included
        row["result"] = f"FAILED: {str(error).splitlines()[0]}"
    return row



# ---------------------------------------------------------------------------
# Whole programs: the examples and models as deployed, device-resident
# engines (memory plan, launch graph, CUDA-graph replay).

EXAMPLES = os.path.join(HERE, os.pardir, "examples")
EXAMPLE_PROGRAMS = ("mlp.mlir", "attention.mlir", "llama_block.mlir", "convnet.mlir",
                    "odd_shapes.mlir")


def _gpt2_block(torch):
    """A GPT-2-small-sized block (width 768, 12 heads, GELU MLP of 3072),
    pre-norm with residuals, causal attention."""
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, dim=768, heads=12):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.up, self.down = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

        def forward(self, x):
            b, s, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)
                       for t in (q, k, v))
            a = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
            return x + self.down(nn.functional.gelu(self.up(self.ln2(x))))

    return Block()


def _llama_block(torch):
    """A Llama-style block (width 2048, 16 heads, SwiGLU MLP of 5632,
    RMSNorm), causal attention, no biases."""
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, dim=2048, heads=16, hidden=5632):
            super().__init__()
            self.heads = heads
            self.n1, self.n2 = nn.RMSNorm(dim, eps=1e-6), nn.RMSNorm(dim, eps=1e-6)
            self.q, self.k, self.v, self.o = (nn.Linear(dim, dim, bias=False) for _ in range(4))
            self.gate, self.up = (nn.Linear(dim, hidden, bias=False) for _ in range(2))
            self.down = nn.Linear(hidden, dim, bias=False)

        def forward(self, x):
            b, s, d = x.shape
            h = self.n1(x)
            q, k, v = (p(h).reshape(b, s, self.heads, d // self.heads).transpose(1, 2)
                       for p in (self.q, self.k, self.v))
            a = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.o(a.transpose(1, 2).reshape(b, s, d))
            h = self.n2(x)
            return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))

    return Block()


def _resnet50(torch):
    import torchvision
    return torchvision.models.resnet50(weights=None)


# (name, model builder, input shape, torch dtype name): the model rows.
TORCH_MODELS = [
    ("GPT-2-small block, 8x1024 tokens", _gpt2_block, (8, 1024, 768), "float16"),
    ("Llama-style block, 8x1024 tokens", _llama_block, (8, 1024, 2048), "bfloat16"),
    ("ResNet-50, batch 32", _resnet50, (32, 3, 224, 224), "float16"),
]


def model_names() -> list[str]:
    return [f"examples/{name}" for name in EXAMPLE_PROGRAMS] + [m[0] for m in TORCH_MODELS]


def model_program(index: int):
    """Model row `index`: its nn module, the torch model and example input
    (None for an example), and the weights the function takes first."""
    if index < len(EXAMPLE_PROGRAMS):
        return lamina.parse_file(os.path.join(EXAMPLES, EXAMPLE_PROGRAMS[index])), None, None, []
    import torch
    from lamina.importers.torch_import import weights
    _, make, shape, dtype = TORCH_MODELS[index - len(EXAMPLE_PROGRAMS)]
    torch.manual_seed(0)
    model = make(torch).eval().to(getattr(torch, dtype))
    x = torch.randn(shape).to(getattr(torch, dtype))
    module = lamina.from_torch(model, (x,))
    return module, model, x, weights(module, model)


def model_row(index: int, arch: str, gpu, emulate: bool, runs: int) -> dict:
    """Model row `index` on `arch`: its memory plan and launch graph (the
    host-side costs: compile, graph build), and where it runs (the
    emulation for the examples; the GPU for all), its check against
    NumPy, its time per call as a CUDA-graph replay and one launch at a
    time, its host time per replay, and torch eager and torch.compile."""
    from lamina.cuda_runtime import HostProgram, LaunchGraph
    name = model_names()[index]
    module, model, x, weights = model_program(index)
    target = get_target(f"cuda:{arch}")
    row = {"model": name, "arch": arch}
    start = time.perf_counter()
    staged = clone_module(module)
    target.pipeline().run(staged, until="hw")
    row["hw_seconds"] = time.perf_counter() - start
    host = HostProgram.from_module(staged, "main")
    start = time.perf_counter()
    inputs = len(host.parameters) - len(entry_signature(module, None)[2])
    graph = LaunchGraph.from_host(host, None, inputs)
    row["graph_microseconds"] = (time.perf_counter() - start) * 1e6
    plan = host.memory_plan or {"arena_bytes": graph.arena_bytes, "buffers": 0,
                                "buffer_bytes": graph.arena_bytes}
    row.update(launches=len(graph.launches), arena_bytes=plan["arena_bytes"],
               buffer_bytes=plan["buffer_bytes"], buffers=plan["buffers"])
    if emulate:
        if model is not None:
            row["result"] = "needs a GPU (too large for the CPU emulation)"
            return row
        function = target.emulation().compile(module)
        arrays = random_inputs(function.inputs, seed=1)
        got = function(*arrays)
        got = list(got) if isinstance(got, tuple) else [got]
        expected = evaluate(module, arrays)
        ok = all(compare(g, e, spec.dtype).ok
                 for g, e, spec in zip(got, expected, function.results))
        row["result"] = "ok (CPU emulation)" if ok else "MISMATCH (CPU emulation)"
        return row
    if arch == "sm_90a" and gpu.capability != (9, 0):
        row["result"] = "needs a Hopper GPU"
        return row
    import torch
    try:
        program = target.build(module)
        function = CUDAFunction(program)
        arrays = ([np.asarray(w) for w in weights] + [x.float().numpy().astype(
            numpy_dtype(function.inputs[-1].dtype))] if model is not None
            else random_inputs(function.inputs, seed=1))
        results = function.allocate_results()
        with function.bind(arrays, results) as call:
            row["seconds"] = statistics.median(call.time(runs))
            row["host_microseconds"] = call.host_seconds() * 1e6
            function.graphs = False
            row["seconds_no_graphs"] = statistics.median(call.time(runs))
            function.graphs = True
            call.read_back()
        if model is None:
            expected = evaluate(module, arrays)
            ok = all(compare(r, e, spec.dtype).ok
                     for r, e, spec in zip(results, expected, function.results))
            row["result"] = "ok" if ok else "MISMATCH"
        else:
            device_model, device_x = model.cuda(), x.cuda()
            with torch.no_grad():
                want = device_model(device_x).float()
                row["torch_eager"] = time_torch(torch, lambda: device_model(device_x), runs)
                compiled = torch.compile(device_model)
                row["torch_compile"] = time_torch(torch, lambda: compiled(device_x), runs)
            got = torch.from_numpy(results[0].astype(np.float32)).cuda()
            error = float((got - want).abs().max() / want.abs().max())
            row["result"] = ("ok" if error < 5e-2 else "MISMATCH") + f" (rel. error {error:.1e})"
    except lamina.CompileError as error:  # CUDAError included
        row["result"] = f"FAILED: {str(error).splitlines()[0]}"
    return row


def model_table(rows: list[dict]) -> str:
    lines = ["| program | arch | launches | arena (peak) MB | buffers apart MB | hw stage s | "
             "launch graph us | Lamina ms (graph) | Lamina ms (no graph) | host us / replay | "
             "torch eager ms | torch.compile ms | check |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    ms = lambda r, key: f"{r[key] * 1e3:.3f}" if key in r else "-"  # noqa: E731
    for r in rows:
        host = f"{r['host_microseconds']:.1f}" if "host_microseconds" in r else "-"
        lines.append(f"| {r['model']} | {r['arch']} | {r['launches']} | "
                     f"{r['arena_bytes'] / 1e6:.3f} | {r['buffer_bytes'] / 1e6:.3f} | "
                     f"{r['hw_seconds']:.1f} | {r['graph_microseconds']:.0f} | "
                     f"{ms(r, 'seconds')} | {ms(r, 'seconds_no_graphs')} | {host} | "
                     f"{ms(r, 'torch_eager')} | {ms(r, 'torch_compile')} | {r['result']} |")
    return "\n".join(lines)

# ---------------------------------------------------------------------------
# Programs compiled on one machine and run on another.


def program_key(kind: str, index: int, arch: str, tiles: str | None = None) -> str:
    return f"{kind}{index}-{arch}" + (f"-{tiles}" if tiles else "")


def program_path(directory: str, kind: str, index: int, arch: str) -> str:
    return os.path.join(directory, program_key(kind, index, arch) + ".json")


@functools.lru_cache(maxsize=None)
def saved_index(directory: str) -> dict:
    with open(os.path.join(directory, "index.json")) as f:
        return json.load(f)


def save_arrays(directory: str, index: int, arrays, expected) -> None:
    """A case's inputs and NumPy results, as bytes with their dtypes
    (NumPy's files do not keep bfloat16)."""
    every = list(arrays) + list(expected)
    np.savez(os.path.join(directory, f"check{index}.npz"),
             **{f"a{i}": a.view(f"u{a.itemsize}") for i, a in enumerate(every)},
             dtypes=np.array([a.dtype.name for a in every]), inputs=len(arrays))


def load_arrays(directory: str, index: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    with np.load(os.path.join(directory, f"check{index}.npz")) as saved:
        dtypes = [str(d) for d in saved["dtypes"]]
        every = [saved[f"a{i}"].view(np.dtype(d)) for i, d in enumerate(dtypes)]
        inputs = int(saved["inputs"])
    return every[:inputs], every[inputs:]


def save_programs(directory: str, size: int, sweep: bool = False) -> None:
    """Compiles every program of both lists for both architectures into
    `directory` (see the module docstring)."""
    os.makedirs(directory, exist_ok=True)
    for number, (name, source) in enumerate(correctness_cases()):
        for arch in ARCHITECTURES:
            program = build(source, arch)
            program.save(program_path(directory, "check", number, arch))
        save_arrays(directory, number, *check_data(source, program))
        print(f"  {name}: saved", flush=True)
    units = [(number, arch, None) for number in range(len(PERFORMANCE))
             for arch in ARCHITECTURES] + (sweep_units() if sweep else [])
    for number, arch, tiles in units:
        program = build(matmul_program(size, size, size, *PERFORMANCE[number][1:]), arch, tiles)
        program.save(os.path.join(directory, program_key("time", number, arch, tiles) + ".json"))
        print(f"  {PERFORMANCE[number][0]} {size}^3 [{arch}{', ' + tiles if tiles else ''}]: "
              f"saved ({resources(program)})", flush=True)
    with open(os.path.join(directory, "index.json"), "w") as f:
        json.dump({"size": size}, f)


def isolated(unit: str, options, seconds: float) -> dict:
    """A unit of work ("check:INDEX:ARCH" or "time:INDEX:ARCH") run by a
    process of its own, given `seconds`; its row, or one saying how it
    ended."""
    command = [sys.executable, os.path.abspath(__file__), "--unit", unit,
               "--size", str(options.size), "--runs", str(options.runs)]
    if options.programs:
        command += ["--programs", options.programs]
    kind, index, arch, *tiles = unit.split(":")
    name = correctness_cases()[int(index)][0] if kind == "check" else PERFORMANCE[int(index)][0]
    row = ({"kernel": name, "where": "-"} if kind == "check" else
           {"workload": name, "torch": {}, "tiles": tiles[0] if tiles else "cost model"})
    row.update(arch=arch, resources="-")
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=seconds)
    except subprocess.TimeoutExpired:
        row["result"] = f"FAILED: no result after {seconds:.0f} s (hung)"
        return row
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("ROW "):
            return json.loads(line[4:])
    last = (done.stderr.strip().splitlines() or ["no output"])[-1]
    row["result"] = f"FAILED: the process ended with status {done.returncode}: {last}"
    return row


def time_torch(torch, call, runs: int) -> float:
    for _ in range(3):
        call()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(runs):
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def correctness_table(rows: list[dict]) -> str:
    lines = ["| kernel | arch | ran on | result | ptxas resources |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['arch']} | {r['where']} | {r['result']} | "
                     f"{r['resources']} |")
    return "\n".join(lines)


def performance_table(rows: list[dict] | None, size: int, reason: str = "") -> str:
    header = ["| workload | arch | Lamina ms | Lamina TFLOP/s | torch.matmul TFLOP/s | "
              "Lamina / torch.matmul | torch gelu(a@b+bias) TFLOP/s | check | ptxas resources |",
              "|---|---|---|---|---|---|---|---|---|"]
    if rows is None:
        return "\n".join(header + [
            f"| {name} {size}^3 | {arch} | - | - | - | - | - | {reason} | "
            f"{resources(build(matmul_program(size, size, size, dtype, epilogue), arch))} |"
            for name, dtype, epilogue in PERFORMANCE for arch in ARCHITECTURES])
    flops = 2.0 * size ** 3
    lines = []
    for r in rows:
        cublas = r["torch"].get("torch.matmul")
        cublas = flops / cublas / 1e12 if cublas else None
        unfused = r["torch"].get("torch gelu(a@b+bias)")
        unfused = f"{flops / unfused / 1e12:.1f}" if unfused else "-"
        arch = r["arch"] + (f" {r['tiles']}" if r.get("tiles", "cost model") != "cost model"
                            else "")
        if "tflops" in r and cublas:
            lines.append(f"| {r['workload']} {size}^3 | {arch} ({r['image']}) | "
                         f"{r['seconds'] * 1e3:.3f} | {r['tflops']:.1f} | {cublas:.1f} | "
                         f"{r['tflops'] / cublas:.2f} | {unfused} | {r['result']} (rel. error "
                         f"{r['relative_error']:.1e}) | {r['resources']} |")
        else:
            cublas = f"{cublas:.1f}" if cublas else "-"
            lines.append(f"| {r['workload']} {size}^3 | {arch} | - | - | {cublas} | - "
                         f"| {unfused} | {r['result']} | {r['resources']} |")
    return "\n".join(header + lines)


def epilogue_cost(rows: list[dict] | None) -> str:
    if not rows:
        return ""
    lines = []
    for arch in ARCHITECTURES:
        found = {r["workload"]: r for r in rows if r["arch"] == arch and "seconds" in r}
        if "f16 matmul" in found and "f16 matmul+bias+gelu" in found:
            cost = found["f16 matmul+bias+gelu"]["seconds"] / found["f16 matmul"]["seconds"] - 1
            lines.append(f"* {arch}: the fused bias + gelu epilogue costs {cost * 100:+.1f}% "
                         "over the plain f16 matmul.")
    return "\n".join(lines)


def sweep_epilogue_cost(rows: list[dict]) -> str:
    """Per swept tiling, what the fused epilogue costs over the plain matmul."""
    times = {(r["arch"], r["tiles"], r["workload"]): r["seconds"] for r in rows if "seconds" in r}
    lines = []
    for arch, tiles, workload in times:
        fused = times.get((arch, tiles, "f16 matmul+bias+gelu"))
        if workload == "f16 matmul" and fused:
            lines.append(f"* {arch} {tiles}: the fused bias + gelu epilogue costs "
                         f"{(fused / times[arch, tiles, workload] - 1) * 100:+.1f}%.")
    return "\n".join(lines)


def progress(row: dict) -> None:
    if "kernel" in row:
        print(f"  {row['kernel']} [{row['arch']}]: {row['result']}", flush=True)
    else:
        print(f"  {row['workload']} [{row['arch']}, {row.get('tiles')}]: "
              f"{row.get('tflops', 0):.1f} TFLOP/s, {row['result']}", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--emulate", action="store_true",
                        help="run the kernels on the CPU through the emulation, even with a GPU")
    parser.add_argument("--size", type=int, default=4096, help="M = N = K of the timed matmuls")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per workload")
    parser.add_argument("--output", default=os.path.join(HERE, "results-gpu.md"))
    parser.add_argument("--note", default="", help="a line written under the heading")
    parser.add_argument("--save-programs", metavar="DIR",
                        help="compile every program into DIR and stop (no GPU needed)")
    parser.add_argument("--programs", metavar="DIR",
                        help="run the programs --save-programs wrote instead of compiling")
    parser.add_argument("--isolate", type=float, metavar="SECONDS",
                        help="run each check and timed workload in a process of its own, "
                             "given at most SECONDS")
    parser.add_argument("--sweep", action="store_true",
                        help="also time the tilings of SWEEP (compiled by --save-programs "
                             "--sweep when running --programs)")
    parser.add_argument("--models", choices=("all", "examples", "none"), default="all",
                        help="the whole programs to run: the examples and the models "
                             "(GPT-2-small and Llama-style blocks, ResNet-50), the examples "
                             "only, or none")
    parser.add_argument("--no-kernels", action="store_true",
                        help="skip the kernel checks and the matmul timings")
    parser.add_argument("--unit", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    started = time.perf_counter()
    if options.save_programs:
        print(f"compiling into {options.save_programs}:", flush=True)
        save_programs(options.save_programs, options.size, options.sweep)
        return 0
    if options.programs:
        options.size = saved_index(options.programs)["size"]

    gpu, reason = None, "--emulate was given"
    if not options.emulate:
        try:
            gpu = driver()
        except CUDAError as error:
            reason = str(error).splitlines()[0].removeprefix("error: ").split("; run")[0]
    emulate = gpu is None
    if emulate and options.programs:
        print(f"gpu.py: error: --programs runs saved programs on a GPU ({reason})",
              file=sys.stderr)
        return 1

    def run(unit: str) -> dict:
        kind, index, arch, *tiles = unit.split(":")
        if options.unit or not options.isolate or emulate:
            if kind == "check":
                return check_row(int(index), arch, gpu, emulate, options.programs)
            return time_row(int(index), arch, gpu, options.size, options.runs, options.programs,
                            tiles[0] if tiles else None)
        return isolated(unit, options, options.isolate)

    if options.unit:
        print("ROW " + json.dumps(run(options.unit)), flush=True)
        return 0

    where = f"{gpu.name} (compute capability {gpu.capability[0]}.{gpu.capability[1]})" \
        if gpu else "none"
    print(f"GPU: {where}" + (f" [{reason}]" if emulate else ""), flush=True)

    print("correctness:", flush=True)
    checked = []
    for index in range(0 if options.no_kernels else len(correctness_cases())):
        for arch in ARCHITECTURES:
            checked.append(run(f"check:{index}:{arch}"))
            progress(checked[-1])
    timed = None
    if not emulate and not options.no_kernels:
        print(f"performance ({options.size}^3):", flush=True)
        timed = []
        for index in range(len(PERFORMANCE)):
            for arch in ARCHITECTURES:
                timed.append(run(f"time:{index}:{arch}"))
                progress(timed[-1])
    swept = []
    if options.sweep and not emulate:
        print(f"tilings ({options.size}^3):", flush=True)
        for index, arch, tiles in sweep_units():
            swept.append(run(f"time:{index}:{arch}:{tiles}"))
            progress(swept[-1])
    needs = "needs a GPU (none here)" if emulate else ""
    count = {"all": len(model_names()), "examples": len(EXAMPLE_PROGRAMS),
             "none": 0}[options.models]
    modelled = []
    if count:
        print("whole programs:", flush=True)
    for index in range(count):
        for arch in ARCHITECTURES:
            modelled.append(model_row(index, arch, gpu, emulate, options.runs))
            print(f"  {modelled[-1]['model']} [{arch}]: {modelled[-1]['launches']} launches, "
                  f"arena {modelled[-1]['arena_bytes']} bytes, {modelled[-1]['result']}",
                  flush=True)

    command = " ".join(["python bench/gpu.py"] + (argv if argv is not None else sys.argv[1:]))
    report = [
        "# Lamina GPU kernels",
        "",
        f"{datetime.date.today().isoformat()}, {platform.node() or 'unknown host'} "
        f"({platform.machine()}), `{command}`, {time.perf_counter() - started:.0f} s.",
        "",
        f"GPU: {where}." + (f" No H200 (or other GPU) was used in this run ({reason}): "
                            "the kernels ran on the CPU through the emulation, and the TFLOP/s "
                            "columns need a GPU." if emulate else ""),
        *([options.note, ""] if options.note else [""]),
        "## Correctness against NumPy",
        "",
        correctness_table(checked),
        "",
        f"## TFLOP/s at {options.size}^3 against torch.matmul (cuBLAS)",
        "",
        performance_table(timed, options.size, needs),
        "",
        epilogue_cost(timed),
        *(["", "## Whole programs, device-resident", "",
           "Each program's intermediates in one arena (hw-plan-memory: its peak beside the "
           "arguments, next to the bytes its buffers would take apart), its launches in a "
           "launch graph built once at load (the time to build it), run on one stream as a "
           "CUDA-graph replay and one launch at a time, with the host time per replay; the "
           "models next to torch eager and torch.compile (Inductor) on the same GPU."
           + (" Without a GPU the examples run their launch graphs in the CPU emulation and "
              "the models report their plans." if emulate else ""), "",
           model_table(modelled)] if modelled else []),
        *(["", f"## Tilings at {options.size}^3 (--sweep)", "",
           "The cost model's choice is the row without a tiling above.", "",
           performance_table(swept, options.size), "", sweep_epilogue_cost(swept)]
          if swept else []),
    ]
    text = "\n".join(report).rstrip() + "\n"
    print(text)
    with open(options.output, "w") as f:
        f.write(text)
    failed = any(not r["result"].startswith(("ok", "needs"))
                 for r in checked + (timed or []) + swept + modelled)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
