"""Sharded programs on 1 and 2 MPI ranks: time per step and bytes communicated.

    pip install -e '.[dist]'
    python bench/dist.py                 # starts `mpiexec -n 2` itself
    python bench/dist.py --no-write      # print the table only

For each workload (an MLP data parallel and tensor parallel, Megatron
style, and an attention block split by heads), the program runs whole in
one process (its shardings erased: what `lamina-run` without
`--distributed` does) and as 2 partitions under `mpiexec -n 2`, each rank
on one thread. A step is one call of the compiled function on arrays
already in place (for 2 ranks: the local shards, collectives included;
rank 0's time after a barrier, median over the steps).

Bytes are those each rank sends per step, counted from the collectives of
the partitioned IR (`lamina-compile --emit=partitioned`) with the volumes
of bandwidth-optimal algorithms on p ranks: an all-reduce of n bytes sends
2(p-1)/p n, an all-gather of an n-byte result, a reduce-scatter of an
n-byte operand and an all-to-all of an n-byte operand send (p-1)/p n. The
analytic minimum is what the computation needs whatever the partitioning
algorithm: for data parallelism nothing, for a row-split second matmul
whose result every rank holds the all-reduce of that result, for
attention split by heads nothing. Writes bench/results-dist.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RANKS = 2
BATCH, MODEL, HIDDEN = 64, 512, 2048
HEADS, SEQUENCE, HEAD_DIM = 8, 128, 64


def _mlp(x_axes: str, w1_axes: str, w2_axes: str) -> str:
    return f"""
shard.grid @g(shape = {RANKS})
func.func @main(%x: tensor<{BATCH}x{MODEL}xf32>, %w1: tensor<{MODEL}x{HIDDEN}xf32>,
                %w2: tensor<{HIDDEN}x{MODEL}xf32>) -> tensor<{BATCH}x{MODEL}xf32> {{
  %sx = shard.sharding @g split_axes = {x_axes} : !shard.sharding
  %s1 = shard.sharding @g split_axes = {w1_axes} : !shard.sharding
  %s2 = shard.sharding @g split_axes = {w2_axes} : !shard.sharding
  %xs = shard.shard %x to %sx annotate_for_users : tensor<{BATCH}x{MODEL}xf32>
  %a = shard.shard %w1 to %s1 annotate_for_users : tensor<{MODEL}x{HIDDEN}xf32>
  %b = shard.shard %w2 to %s2 annotate_for_users : tensor<{HIDDEN}x{MODEL}xf32>
  %h = "nn.matmul"(%xs, %a) : (tensor<{BATCH}x{MODEL}xf32>, tensor<{MODEL}x{HIDDEN}xf32>) -> tensor<{BATCH}x{HIDDEN}xf32>
  %r = "nn.gelu"(%h) : (tensor<{BATCH}x{HIDDEN}xf32>) -> tensor<{BATCH}x{HIDDEN}xf32>
  %o = "nn.matmul"(%r, %b) : (tensor<{BATCH}x{HIDDEN}xf32>, tensor<{HIDDEN}x{MODEL}xf32>) -> tensor<{BATCH}x{MODEL}xf32>
  return %o : tensor<{BATCH}x{MODEL}xf32>
}}
"""


def _attention() -> str:
    t = f"tensor<{HEADS}x{SEQUENCE}x{HEAD_DIM}xf32>"
    return f"""
shard.grid @g(shape = {RANKS})
func.func @main(%q: {t}, %k: {t}, %v: {t}) -> {t} {{
  %heads = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %qs = shard.shard %q to %heads annotate_for_users : {t}
  %ks = shard.shard %k to %heads annotate_for_users : {t}
  %vs = shard.shard %v to %heads annotate_for_users : {t}
  %o = "nn.attention"(%qs, %ks, %vs) : ({t}, {t}, {t}) -> {t}
  return %o : {t}
}}
"""


# name: (program, analytic minimum of bytes each rank sends per step)
WORKLOADS = {
    "mlp data parallel": (_mlp("[[0]]", "[[]]", "[[]]"), 0),
    "mlp tensor parallel": (_mlp("[[]]", "[[], [0]]", "[[0]]"),
                            int(2 * (RANKS - 1) / RANKS * BATCH * MODEL * 4)),
    "attention by heads": (_attention(), 0),
}

_COLLECTIVE = re.compile(r"shard\.(all_reduce|all_gather|reduce_scatter|all_to_all) .*: "
                         r"tensor<([0-9x]+)xf32> -> tensor<([0-9x]+)xf32>")


def communicated_bytes(partitioned: str, ranks: int = RANKS) -> tuple[int, list[str]]:
    """Bytes each rank sends per step, from the collectives of partitioned IR."""
    total, names = 0.0, []
    for kind, source, result in _COLLECTIVE.findall(partitioned):
        source_bytes = 4 * int(np.prod([int(d) for d in source.split("x")]))
        result_bytes = 4 * int(np.prod([int(d) for d in result.split("x")]))
        share = (ranks - 1) / ranks
        total += {"all_reduce": 2 * share * source_bytes, "all_gather": share * result_bytes,
                  "reduce_scatter": share * source_bytes,
                  "all_to_all": share * source_bytes}[kind]
        names.append(kind)
    return int(total), names


def arrays(function) -> list[np.ndarray]:
    from lamina.reference import random_inputs
    return random_inputs(function.inputs if hasattr(function, "inputs")
                         else function.global_inputs, 0)


def time_steps(step, seconds: float = 1.0, comm=None) -> float:
    """Median seconds per step after a warm-up by time. With `comm`, rank
    0 decides when to stop, so that every rank runs the same steps (their
    collectives must match), each started after a barrier."""
    def go_on(condition: bool) -> bool:
        return comm.bcast(condition, root=0) if comm is not None else condition

    deadline = time.perf_counter() + 0.2
    while go_on(time.perf_counter() < deadline):
        step()
    times: list[float] = []
    start = time.perf_counter()
    while go_on(len(times) < 5 or (time.perf_counter() - start < seconds
                                   and len(times) < 2000)):
        if comm is not None:
            comm.Barrier()
        before = time.perf_counter()
        step()
        times.append(time.perf_counter() - before)
    return statistics.median(times)


def worker() -> None:
    """Under mpiexec: the partitions of every workload; rank 0 prints JSON."""
    import lamina
    import lamina.sharding
    comm = lamina.sharding.communicator()
    target = lamina.get_target("cpu:threads=1")
    report = {}
    for name, (program, _) in WORKLOADS.items():
        function = lamina.sharding.compile(program, target=target, comm=comm)
        local = function.compiled.check_arguments(function.local_arguments(arrays(function)))
        results = function.compiled.allocate_results()
        seconds = time_steps(lambda: function.compiled.call_with_results(local, results),
                             comm=comm)
        report[name] = seconds
    if comm.Get_rank() == 0:
        print(json.dumps(report))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-write", action="store_true", help="do not write results-dist.md")
    options = parser.parse_args()
    if options.worker:
        worker()
        return 0
    import lamina
    from lamina.sharding import mpi_library
    mpi_library()
    load = os.getloadavg()[0]
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    environment = dict(os.environ, LAMINA_NUM_THREADS="1")
    ranks = subprocess.run([mpiexec, "-n", str(RANKS), sys.executable, os.path.abspath(__file__),
                            "--worker"], capture_output=True, text=True, env=environment)
    if ranks.returncode:
        sys.stderr.write(ranks.stderr)
        return 1
    two = json.loads(ranks.stdout.strip().splitlines()[-1])
    target = lamina.get_target("cpu:threads=1")
    rows = []
    for name, (program, minimum) in WORKLOADS.items():
        one_function = target.compile(lamina.parse(program))
        inputs = one_function.check_arguments(arrays(one_function))
        results = one_function.allocate_results()
        one = time_steps(lambda: one_function.call_with_results(inputs, results))
        partitioned = str(target.emit(lamina.parse(program), "partitioned"))
        sent, collectives = communicated_bytes(partitioned)
        rows.append((name, one, two[name], sent, minimum, collectives))

    header = ("| workload | 1 rank ms | 2 ranks ms | speed-up | collectives | bytes sent per rank "
              "| analytic minimum |\n|---|---|---|---|---|---|---|")
    lines = [header]
    for name, one, two_seconds, sent, minimum, collectives in rows:
        lines.append(f"| {name} | {one * 1e3:.3f} | {two_seconds * 1e3:.3f} | "
                     f"{one / two_seconds:.2f} | {', '.join(collectives) or 'none'} | {sent} | "
                     f"{minimum} |")
    table = "\n".join(lines)
    print(table)
    if not options.no_write:
        cpu = platform.processor() or platform.machine()
        with open(os.path.join(HERE, "results-dist.md"), "w") as out:
            out.write(f"# Sharded programs on MPI\n\n{datetime.date.today()}, {cpu}, "
                      f"{os.cpu_count()} cores, `python bench/dist.py` (mpich, "
                      f"`mpiexec -n {RANKS}`, one thread per rank).\n\n"
                      f"Shapes: MLP x {BATCH}x{MODEL}, W1 {MODEL}x{HIDDEN}, W2 "
                      f"{HIDDEN}x{MODEL} (f32, GELU); attention {HEADS} heads x {SEQUENCE} "
                      f"x {HEAD_DIM}. Load average when the run started: {load:.1f} (the "
                      f"machine is shared; on an idle one the partitions of a data-parallel "
                      f"step each do half the work).\n\n{table}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
