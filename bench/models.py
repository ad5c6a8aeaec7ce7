"""Whole models on the CPU: Lamina beside torch eager, Inductor, ONNX Runtime
and OpenVINO, in one process per model and thread count.

    pip install -e '.[bench]'
    python bench/models.py                                  # the suite, 1 and 2 threads
    python bench/models.py --models resnet18,bert --threads 2 --systems lamina,onnxruntime

The suite: torchvision's resnet18, resnet50, mobilenet_v2, efficientnet_b0,
convnext_tiny and vit_b_16 on one 3x224x224 image; Hugging Face's BERT-base,
GPT-2 small and a Llama-style decoder (grouped-query attention, RMSNorm,
SwiGLU, rotary positions), built from their configs, on 128 token ids. Weights
are random (seeded); nothing is downloaded.

Every system computes the same PyTorch module on the same inputs:

* `eager`: the module itself, under `torch.inference_mode()`;
* `inductor`: `torch.compile(module)` (compiled at the first call);
* `onnxruntime`: the module exported to ONNX (`torch.onnx.export`) in an
  `InferenceSession` with `intra_op_num_threads` threads;
* `openvino`: the same ONNX file, `openvino.compile_model` on the CPU with
  `INFERENCE_NUM_THREADS` and the latency hint;
* `lamina`: `lamina.from_torch(module, inputs, params="constants")`, then
  `lamina.compile` for `cpu:threads=N`, with an empty compiled-program
  cache (the compile is cold); `cached ms` is a second compile of the same
  module in the same process, loaded from that cache.

Columns: the median latency of one call (medians of interleaved rounds: each
round times every system for about `--budget` seconds, in turn, so that a
slow moment of the machine falls on all of them), the ratio to the best of
ONNX Runtime and OpenVINO (> 1: faster), the ratio to Inductor, the time to
make the callable (export + load for the ONNX systems, the first call for
Inductor, import + compile for Lamina), the resident memory the system added
while it was made and first called, and the largest difference from eager's
output relative to eager's largest magnitude. A system that cannot run a
model says why in the table, in one line.

`--contended` runs every model beside a process that keeps one core busy
(a loop in a Python process of its own, started before the model's process
and stopped after it): how each system copes with a machine it shares.

Writes bench/results-models.md (and results-models.png with matplotlib).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

VISION = ("resnet18", "resnet50", "mobilenet_v2", "efficientnet_b0", "convnext_tiny",
          "vit_b_16")
LANGUAGE = ("bert", "gpt2", "llama")
MODELS = VISION + LANGUAGE
DESCRIPTIONS = {
    "resnet18": "torchvision resnet18, 1x3x224x224",
    "resnet50": "torchvision resnet50, 1x3x224x224",
    "mobilenet_v2": "torchvision mobilenet_v2, 1x3x224x224",
    "efficientnet_b0": "torchvision efficientnet_b0, 1x3x224x224",
    "convnext_tiny": "torchvision convnext_tiny, 1x3x224x224",
    "vit_b_16": "torchvision vit_b_16, 1x3x224x224",
    "bert": "Hugging Face BertModel, BERT-base config (12 layers, 768 wide), 128 token ids",
    "gpt2": "Hugging Face GPT2Model, GPT-2 small config (12 layers, 768 wide), 128 token ids",
    "llama": "Hugging Face LlamaModel: 12 layers, 768 wide, 12 query / 4 key-value heads, "
             "SwiGLU 2048, vocabulary 32000, 128 token ids",
}
SYSTEMS = ("eager", "inductor", "onnxruntime", "openvino", "lamina")
SEQUENCE = 128


class LastHidden:
    """A Hugging Face model as a module of its token ids returning the last
    hidden state alone (what each system is asked to compute)."""

    def __new__(cls, model):
        import torch

        class Wrapped(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, input_ids):
                return self.model(input_ids=input_ids, use_cache=False).last_hidden_state

        return Wrapped()


def build(name: str):
    """The model (in eval mode, random seeded weights) and its inputs."""
    import torch
    torch.manual_seed(0)
    if name in VISION:
        import torchvision
        model = getattr(torchvision.models, name)(weights=None)
        return model.eval(), (torch.randn(1, 3, 224, 224),)
    import transformers
    if name == "bert":
        config = transformers.BertConfig()
        model = transformers.BertModel(config, add_pooling_layer=False)
    elif name == "gpt2":
        config = transformers.GPT2Config()
        model = transformers.GPT2Model(config)
    elif name == "llama":
        config = transformers.LlamaConfig(hidden_size=768, intermediate_size=2048,
                                          num_hidden_layers=12, num_attention_heads=12,
                                          num_key_value_heads=4, vocab_size=32000,
                                          max_position_embeddings=2048)
        model = transformers.LlamaModel(config)
    else:
        raise ValueError(f"unknown model '{name}' (models: {', '.join(MODELS)})")
    config._attn_implementation = "eager"
    ids = torch.randint(0, config.vocab_size, (1, SEQUENCE), generator=torch.Generator().manual_seed(0))
    return LastHidden(model.eval()), (ids,)


def resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _numpy(inputs):
    return [t.numpy() for t in inputs]


def prepare_eager(model, inputs, threads, workdir):
    import torch

    def call():
        with torch.inference_mode():
            return model(*inputs)
    return call, {}


def prepare_inductor(model, inputs, threads, workdir):
    import torch
    compiled = torch.compile(model)

    def call():
        with torch.inference_mode():
            return compiled(*inputs)
    return call, {}


def _onnx_file(model, inputs, workdir) -> str:
    """The model exported to ONNX once per process, before the ONNX systems
    are timed (their `compile s` is loading the file)."""
    import torch
    path = os.path.join(workdir, "model.onnx")
    if not os.path.exists(path):
        torch.onnx.export(model, tuple(inputs), path, input_names=["input"], dynamo=True,
                          external_data=False)
    return path


def prepare_onnxruntime(model, inputs, threads, workdir):
    import onnxruntime
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(_onnx_file(model, inputs, workdir), options,
                                           providers=["CPUExecutionProvider"])
    feeds = {i.name: a for i, a in zip(session.get_inputs(), _numpy(inputs))}
    return lambda: session.run(None, feeds)[0], {}


def prepare_openvino(model, inputs, threads, workdir):
    import openvino
    compiled = openvino.compile_model(_onnx_file(model, inputs, workdir), "CPU",
                                      {"INFERENCE_NUM_THREADS": threads,
                                       "PERFORMANCE_HINT": "LATENCY",
                                       "INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    arrays = _numpy(inputs)

    def call():
        request.infer(arrays)
        return request.get_output_tensor(0).data
    return call, {}


def prepare_lamina(model, inputs, threads, workdir):
    import lamina
    target = lamina.get_target(f"cpu:threads={threads}")
    module = lamina.from_torch(model, tuple(inputs), params="constants")
    compiled = lamina.compile(module, target=target)
    start = time.perf_counter()
    lamina.compile(module, target=target)
    cached = time.perf_counter() - start
    arrays = _numpy(inputs)
    return lambda: compiled(*arrays), {"cached_seconds": cached}


def lamina_profile(model, inputs, threads) -> str:
    """Lamina's per-group profile of the model (lamina.profile), as a table."""
    import lamina
    from lamina.profile import profile
    target = lamina.get_target(f"cpu:threads={threads}")
    module = lamina.from_torch(model, tuple(inputs), params="constants")
    whole = lamina.compile(module, target=target)
    arrays = whole.check_arguments(_numpy(inputs))
    return profile(module, target, whole=whole, arrays=arrays).table()


PREPARE = {"eager": prepare_eager, "inductor": prepare_inductor,
           "onnxruntime": prepare_onnxruntime, "openvino": prepare_openvino,
           "lamina": prepare_lamina}


def _first(output):
    """The array of a system's first output."""
    import numpy as np
    while isinstance(output, (list, tuple)):
        output = output[0]
    if hasattr(output, "detach"):
        output = output.detach().numpy()
    return np.asarray(output, dtype=np.float64)


def _error_line(error: BaseException) -> str:
    lines = [line for line in str(error).splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[0][:160] if lines else ''}"


def model_main(name: str, systems: list[str], threads: int, rounds: int, budget: float,
               profiled: bool = False) -> None:
    """Runs in the model's own process; prints one JSON line per system."""
    import numpy as np
    import torch
    torch.set_num_threads(threads)
    model, inputs = build(name)
    with torch.inference_mode():
        expected = _first(model(*inputs))
    scale = float(np.max(np.abs(expected))) or 1.0
    calls, rows = {}, {}
    with tempfile.TemporaryDirectory(prefix="lamina-models-") as workdir:
        onnx_systems = [s for s in systems if s in ("onnxruntime", "openvino")]
        if onnx_systems:
            try:
                _onnx_file(model, inputs, workdir)
            except Exception as error:  # the ONNX systems cannot run the model
                for system in onnx_systems:
                    rows[system] = {"system": system, "model": name,
                                    "error": "ONNX export: " + _error_line(error)}
        for system in systems:
            if system in rows:
                continue
            before = resident_bytes()
            start = time.perf_counter()
            try:
                call, extra = PREPARE[system](model, inputs, threads, workdir)
                output = _first(call())
            except Exception as error:  # a system that cannot run a model says so
                rows[system] = {"system": system, "model": name, "error": _error_line(error)}
                continue
            rows[system] = {"system": system, "model": name,
                            "compile_seconds": time.perf_counter() - start,
                            "memory_bytes": resident_bytes() - before,
                            "difference": float(np.max(np.abs(output - expected))) / scale
                            if output.shape == expected.shape else float("inf"), **extra}
            calls[system] = call
        times = {system: [] for system in calls}
        for _ in range(rounds):
            for system, call in calls.items():
                call()
                samples = []
                start = time.perf_counter()
                while time.perf_counter() - start < budget or len(samples) < 3:
                    t0 = time.perf_counter()
                    call()
                    samples.append(time.perf_counter() - t0)
                times[system].append(statistics.median(samples))
    for system in systems:
        row = rows[system]
        if system in times:
            row["seconds"] = statistics.median(times[system])
        row["threads"] = threads
        print(json.dumps(row), flush=True)
    if profiled and "lamina" in calls:
        try:
            found = {"table": lamina_profile(model, inputs, threads)}
        except Exception as error:  # the profile says why it is missing
            found = {"error": _error_line(error)}
        print(json.dumps({"system": "lamina-profile", "model": name, "threads": threads,
                          **found}), flush=True)


BUSY_LOOP = "while True: pass"


def run_model(name: str, systems: list[str], threads: int, rounds: int, budget: float,
              timeout: float, profiled: bool = False, contended: bool = False) -> list[dict]:
    env = dict(os.environ)
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                     "LAMINA_NUM_THREADS"):
        env[variable] = str(threads)
    env["LAMINA_CACHE_DIR"] = tempfile.mkdtemp(prefix="lamina-models-cache-")
    env.pop("LAMINA_CACHE", None)
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    command = [sys.executable, os.path.abspath(__file__), "--child", name,
               "--systems", ",".join(systems), "--threads", str(threads),
               "--rounds", str(rounds), "--budget", str(budget)] + (["--profile"] if profiled else [])
    busy = subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) if contended else None
    try:
        process = subprocess.run(command, capture_output=True, text=True, env=env,
                                 timeout=timeout)
    except subprocess.TimeoutExpired:
        return [{"system": s, "model": name, "threads": threads,
                 "error": f"the model's process ran past {timeout:.0f} s"} for s in systems]
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    rows = [json.loads(line) for line in process.stdout.splitlines() if line.startswith("{")]
    if not rows:
        last = process.stderr.strip().splitlines()[-1:] or [f"exit code {process.returncode}"]
        rows = [{"system": s, "model": name, "threads": threads, "error": last[0][:200]}
                for s in systems]
    return rows


def _ratio(best: float | None, seconds: float | None) -> str:
    return f"{best / seconds:.2f}" if best and seconds else "-"


def table(rows: list[dict], models: list[str], systems: list[str], threads: int) -> str:
    by = {(r["model"], r["system"]): r for r in rows if r["threads"] == threads}
    lines = [f"### {threads} thread(s)", "",
             "| model | system | median ms | x best of ORT/OpenVINO | x Inductor | compile s "
             "| cached ms | memory MiB | difference |",
             "|---|---|---|---|---|---|---|---|---|"]
    for model in models:
        engines = [by[model, s]["seconds"] for s in ("onnxruntime", "openvino")
                   if "seconds" in by.get((model, s), {})]
        best = min(engines) if engines else None
        inductor = by.get((model, "inductor"), {}).get("seconds")
        for system in systems:
            row = by.get((model, system))
            if row is None:
                continue
            if "error" in row:
                lines.append(f"| {model} | {system} | failed: {row['error']} | | | | | | |")
                continue
            seconds = row.get("seconds")
            cached = row.get("cached_seconds")
            cached_ms = f"{cached * 1000:.0f}" if cached is not None else "-"
            lines.append(f"| {model} | {system} | {seconds * 1000:.1f} | {_ratio(best, seconds)} "
                         f"| {_ratio(inductor, seconds)} | {row['compile_seconds']:.1f} "
                         f"| {cached_ms} | {row['memory_bytes'] / 2**20:.0f} "
                         f"| {row['difference']:.1e} |")
    return "\n".join(lines)


def plot(rows: list[dict], models: list[str], systems: list[str], threads: list[int],
         path: str) -> bool:
    """Latency relative to the best of ONNX Runtime and OpenVINO, per model."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, axes = plt.subplots(1, len(threads), figsize=(max(6, len(models) * 1.3) * len(threads), 4),
                                squeeze=False)
    for axis, count in zip(axes[0], threads):
        by = {(r["model"], r["system"]): r for r in rows
              if r["threads"] == count and "seconds" in r}
        width = 0.8 / max(1, len(systems))
        for index, system in enumerate(systems):
            ratios = []
            for model in models:
                engines = [by[model, s]["seconds"] for s in ("onnxruntime", "openvino")
                           if (model, s) in by]
                row = by.get((model, system))
                ratios.append(min(engines) / row["seconds"] if engines and row else 0)
            axis.bar([i + index * width for i in range(len(models))], ratios, width,
                     label=system)
        axis.set_xticks([i + width * (len(systems) - 1) / 2 for i in range(len(models))])
        axis.set_xticklabels(models, rotation=30, ha="right")
        axis.axhline(1.0, color="gray", linewidth=0.8)
        axis.set_title(f"{count} thread(s)")
        axis.set_ylabel("speed vs best of ONNX Runtime / OpenVINO")
    axes[0][0].legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    return True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=float, default=0.5,
                        help="seconds of calls per system and round")
    parser.add_argument("--timeout", type=float, default=1800,
                        help="seconds a model's process may take")
    parser.add_argument("--output", default=os.path.join(HERE, "results-models.md"))
    parser.add_argument("--profile", action="store_true",
                        help="add Lamina's per-group profile of each model (lamina.profile) at "
                             "the largest thread count")
    parser.add_argument("--contended", action="store_true",
                        help="run each model beside a process that keeps one core busy")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    models = [m for m in options.models.split(",") if m]
    systems = [s for s in options.systems.split(",") if s]
    for model in models:
        if model not in MODELS:
            parser.error(f"unknown model '{model}' (models: {', '.join(MODELS)})")
    for system in systems:
        if system not in SYSTEMS:
            parser.error(f"unknown system '{system}' (systems: {', '.join(SYSTEMS)})")
    threads = [int(t) for t in options.threads.split(",") if t]
    if options.child:
        model_main(options.child, systems, threads[0], options.rounds, options.budget,
                   options.profile)
        return 0
    from lamina.progress import progress_bar
    rows = []
    with progress_bar(total=len(models) * len(threads), description="models",
                      unit="model") as bar:
        for count in threads:
            for model in models:
                bar.set_description(f"{model}, {count} thread(s)")
                rows.extend(run_model(model, systems, count, options.rounds, options.budget,
                                      options.timeout,
                                      options.profile and count == max(threads),
                                      options.contended))
                bar.update(1)
    profiles = [row for row in rows if row["system"] == "lamina-profile"]
    rows = [row for row in rows if row["system"] != "lamina-profile"]
    text = "\n\n".join(table(rows, models, systems, count) for count in threads)
    if options.contended:
        text = ("Contended: every model ran beside a process keeping one core busy.\n\n"
                + text)
    if profiles:
        text += "\n\n## Lamina's per-group profiles\n\n" + "\n\n".join(
            f"### {row['model']}, {row['threads']} thread(s)\n\n"
            + (row.get("table") or f"no profile: {row.get('error')}") for row in profiles)
    print(text)
    command = " ".join(["python bench/models.py"] + (argv if argv is not None else sys.argv[1:]))
    png = os.path.splitext(options.output)[0] + ".png"
    plotted = plot(rows, models, systems, threads, png)
    with open(options.output, "w") as f:
        f.write(f"# Models on the CPU\n\n{datetime.date.today().isoformat()}, "
                f"{platform.machine()} {platform.processor() or ''}, `{command}`.\n\n"
                + text + "\n\nModels (f32, batch 1, random weights):\n\n"
                + "\n".join(f"* `{m}`: {DESCRIPTIONS[m]}" for m in models) + "\n"
                + (f"\n![speed vs the best of ONNX Runtime and OpenVINO]"
                   f"({os.path.basename(png)})\n" if plotted else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
