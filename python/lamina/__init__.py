"""Lamina: a multi-level AI compiler on top of MLIR.

    import lamina
    from lamina import nn

    module = lamina.parse("model.mlir")            # text or a path
    f = lamina.compile(module, target="cpu")       # a callable on NumPy arrays
    y = f(x, w)

    @lamina.jit(target="cpu")                      # traced with the nn builders
    def mlp(x, w1, b1, w2):
        return nn.matmul(nn.gelu(nn.matmul(x, w1) + b1), w2)

    pipe = lamina.Pipeline.for_target("cpu")       # editable named stages
    lamina.load_plugin("my_ops.py")                # ops, lowerings, passes of a user's file

    g = lamina.grid("g", 2)                        # sharded programs (lamina.sharding):
    h = x @ lamina.shard(w1, g, [[], [0]])         #   W1 split by columns, in a traced function
    sharded, report = lamina.auto_shard(module, grid=2)   # shardings chosen by communicated bytes
"""

from lamina import nn
from lamina.diagnostics import CompileError
from lamina.importers import from_onnx, from_torch
from lamina.nn import jit
from lamina.parsing import parse, parse_file
from lamina.pipeline import Pipeline, Stage
from lamina.plugins import load_plugin
from lamina.sharding import Grid, grid, shard
from lamina.passes.nn_auto_shard import auto_shard
from lamina.targets import Target, get_target


def compile(module, target="cpu", entry=None, pipeline=None, tune=None, graphs=None):
    """Compiles the function `entry` of `module` (an `ir.Module`, MLIR
    text or a path; default entry: `main` or the only public function) and
    returns a callable on NumPy arrays. The module is not modified; a
    custom `pipeline` replaces the target's default one. `tune=SECONDS`
    first searches faster schedules for about that long (lamina.tuning;
    the result's `tuning` is its report). Compiled programs and tuned
    schedules are cached on disk (lamina.cache). On a cuda target,
    `graphs=False` turns off the replay of CUDA graphs (lamina.cuda_runtime).
    Raises CompileError, and ValueError for a bad target, tuning budget or
    option."""
    if isinstance(module, str):
        module = parse(module)
    chosen = get_target(target)
    if tune is not None:
        from lamina.tuning import tune as search
        return search(module, chosen, entry=entry, seconds=tune, pipeline=pipeline)
    if graphs is None:
        return chosen.compile(module, entry=entry, pipeline=pipeline)
    if chosen.kind != "cuda":
        raise ValueError(f"graphs= is for cuda targets, not '{chosen.name}'")
    return chosen.compile(module, entry=entry, pipeline=pipeline, graphs=graphs)


def load(path):
    """The entry function of a shared library built by `lamina-compile
    --emit=shared`, callable on NumPy arrays like `compile`'s functions
    (lamina.targets.library). Raises FileNotFoundError, and ValueError for
    a file that is not such a library or is one for another architecture."""
    from lamina.targets.library import load as load_library
    return load_library(path)


__all__ = ["CompileError", "Grid", "Pipeline", "Stage", "Target", "auto_shard", "compile",
           "get_target", "grid", "jit", "from_onnx", "from_torch", "load", "load_plugin", "nn", "parse",
           "parse_file", "shard"]
