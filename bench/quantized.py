"""Quantised (int8) models on the CPU: Lamina beside ONNX Runtime and
OpenVINO on the same QDQ ONNX model, in one run.

    pip install -e '.[bench]'
    python bench/quantized.py                               # resnet18 and resnet50, 2 threads
    python bench/quantized.py --models resnet50 --threads 1,2

Each model is torchvision's (random weights, seeded; nothing is
downloaded) on one 3x224x224 image, exported to ONNX (`torch.onnx.export`,
dynamo) and quantised by ONNX Runtime's `quantize_static` in the QDQ format
(uint8 activations per tensor, int8 weights per output channel, calibrated
on four random images), the form ONNX Runtime and OpenVINO run on their
int8 kernels. Systems:

* `onnxruntime`: the QDQ model in an `InferenceSession` (its graph
  optimiser turns the QDQ pairs into QLinearConv / QLinearMatMul);
* `openvino`: the QDQ model, `openvino.compile_model` on the CPU
  (latency hint);
* `lamina`: `lamina.from_onnx(model, params="constants")`, compiled for
  `cpu:threads=N` with `nn-fuse-qdq` after `nn-canonicalize` (integer
  convolutions and matmuls, i32 accumulators, requantising epilogues);
* `lamina-f32`: the same import with the default pipeline (the QDQ ops as
  their nn references: float convolutions of dequantised values), what the
  integer form must beat.

Columns: the median latency of one call (medians of interleaved rounds, as
bench/models.py times them), the ratio to the best of ONNX Runtime and
OpenVINO (> 1: faster), the time to make the callable, and the largest
difference from ONNX Runtime's output relative to its largest magnitude
(int8 kernels round differently: a few quantisation steps of the output is
expected). Writes bench/results-quantized.md.
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

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ("resnet18", "resnet50")
SYSTEMS = ("onnxruntime", "openvino", "lamina", "lamina-f32")


def quantized_model(name: str, workdir: str) -> str:
    """The path of `name`'s QDQ ONNX model (made once per work directory);
    `tiny` is a two-convolution network for tests."""
    import numpy as np
    import torch
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process
    path = os.path.join(workdir, f"{name}-qdq.onnx")
    if os.path.exists(path):
        return path
    torch.manual_seed(0)
    if name == "tiny":
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                                    torch.nn.Conv2d(8, 8, 3, stride=2, padding=1),
                                    torch.nn.ReLU(), torch.nn.Flatten(),
                                    torch.nn.Linear(8 * 8 * 8, 10))
        shape = (1, 3, 16, 16)
    else:
        import torchvision
        model = getattr(torchvision.models, name)()
        shape = (1, 3, 224, 224)
    model.eval()
    fp32, prepared = (os.path.join(workdir, f"{name}{suffix}.onnx") for suffix in ("", "-pre"))
    torch.onnx.export(model, (torch.randn(*shape),), fp32, input_names=["input"],
                      dynamo=True, external_data=False)
    quant_pre_process(fp32, prepared)

    class Calibration(CalibrationDataReader):
        def __init__(self):
            self.count = 0

        def get_next(self):
            self.count += 1
            if self.count > 4:
                return None
            return {"input": np.random.RandomState(self.count).randn(*shape).astype(np.float32)}

    quantize_static(prepared, path, Calibration(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    per_channel=True)
    return path


def image(path: str):
    import numpy as np
    import onnx
    dims = onnx.load(path).graph.input[0].type.tensor_type.shape.dim
    return np.random.RandomState(7).randn(*[d.dim_value for d in dims]).astype(np.float32)


def prepare(system: str, path: str, threads: int):
    """A callable running the QDQ model at `path` on `system`, on one image."""
    x = image(path)
    if system == "onnxruntime":
        import onnxruntime
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(path, options,
                                               providers=["CPUExecutionProvider"])
        return lambda: session.run(None, {"input": x})[0]
    if system == "openvino":
        import openvino
        compiled = openvino.compile_model(path, "CPU", {"INFERENCE_NUM_THREADS": threads,
                                                        "PERFORMANCE_HINT": "LATENCY"})
        request = compiled.create_infer_request()

        def call():
            request.infer([x])
            return request.get_output_tensor(0).data
        return call
    if system in ("lamina", "lamina-f32"):
        import onnx

        import lamina
        from lamina.pass_registry import get_pass
        target = lamina.get_target(f"cpu:threads={threads}")
        pipeline = lamina.Pipeline.for_target(target)
        if system == "lamina":
            pipeline.insert_after("nn-canonicalize", get_pass("nn-fuse-qdq"), stage="nn")
        module = lamina.from_onnx(onnx.load(path), params="constants")
        compiled = lamina.compile(module, target=target, pipeline=pipeline)
        return lambda: compiled(x)
    raise ValueError(f"unknown system '{system}' (systems: {', '.join(SYSTEMS)})")


def measure(name: str, systems: list[str], threads: int, rounds: int, budget: float,
            workdir: str) -> list[dict]:
    """One row per system: median latency over interleaved rounds, the time
    to prepare it, and its largest difference from ONNX Runtime's output."""
    import numpy as np
    path = quantized_model(name, workdir)
    rows, calls = [], {}
    for system in systems:
        row = {"model": name, "system": system, "threads": threads}
        start = time.perf_counter()
        try:
            calls[system] = prepare(system, path, threads)
            row["output"] = np.asarray(calls[system]()).copy()
        except Exception as error:  # noqa: BLE001 - a system that fails says why in its row
            row["error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:160]}"
            calls.pop(system, None)
        row["prepare_seconds"] = time.perf_counter() - start
        row["times"] = []
        rows.append(row)
    for _ in range(rounds):
        for row in rows:
            call = calls.get(row["system"])
            if call is None:
                continue
            count, spent = 0, 0.0
            while spent < budget or count < 3:
                start = time.perf_counter()
                call()
                elapsed = time.perf_counter() - start
                row["times"].append(elapsed)
                spent += elapsed
                count += 1
    reference = next((r.get("output") for r in rows if r["system"] == "onnxruntime"), None)
    for row in rows:
        if row["times"]:
            row["seconds"] = statistics.median(row["times"])
        output = row.pop("output", None)
        if reference is not None and output is not None:
            row["difference"] = float(np.abs(output - reference).max()
                                      / max(float(np.abs(reference).max()), 1e-30))
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| model | threads | system | ms | x best of ORT/OpenVINO | prepare s | "
             "max diff vs ORT |", "|---|---|---|---|---|---|---|"]
    for (model, threads) in dict.fromkeys((r["model"], r["threads"]) for r in rows):
        group = [r for r in rows if r["model"] == model and r["threads"] == threads]
        peers = [r["seconds"] for r in group
                 if r["system"] in ("onnxruntime", "openvino") and "seconds" in r]
        best = min(peers) if peers else None
        for r in group:
            if "error" in r:
                lines.append(f"| {model} | {threads} | {r['system']} | fails: {r['error']} "
                             "| | | |")
                continue
            ratio = f"{best / r['seconds']:.2f}" if best else ""
            difference = f"{r['difference']:.1e}" if "difference" in r else ""
            lines.append(f"| {model} | {threads} | {r['system']} | {r['seconds'] * 1e3:.2f} | "
                         f"{ratio} | {r['prepare_seconds']:.1f} | {difference} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--threads", default="2", help="comma-separated thread counts")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=1.0,
                        help="seconds per system per round")
    parser.add_argument("--output", default=os.path.join(HERE, "results-quantized.md"))
    args = parser.parse_args(argv)
    systems = args.systems.split(",")
    for system in systems:
        if system not in SYSTEMS:
            parser.error(f"unknown system '{system}' (systems: {', '.join(SYSTEMS)})")
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for model in args.models.split(","):
            for threads in [int(t) for t in args.threads.split(",")]:
                rows += measure(model, systems, threads, args.rounds, args.budget, workdir)
                print(table(rows), flush=True)
    from lamina.targets.host import detect_host
    host = detect_host()
    vnni = "with" if host.has("+avx512vnni") else "without"
    text = (f"# Quantised models on the CPU\n\n{platform.machine()} ({host.cpu}, {vnni} "
            f"AVX512-VNNI), {os.cpu_count()} cores, {datetime.date.today()}:\n\n"
            f"    python bench/quantized.py {' '.join(argv if argv is not None else sys.argv[1:])}"
            f"\n\n{table(rows)}\n")
    with open(args.output, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
