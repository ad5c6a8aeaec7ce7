"""Shrinking a failing generated program to a small one that fails the same
way, written as a `.mlir` file ready to become a test.

Greedy, in rounds until nothing more helps (or the budget of tries is
spent), each candidate kept only if it is valid (the generator's type
rules hold) and `still_fails(candidate)`:

* keep one result, or drop one (each in turn);
* replace an op by a new argument of its result's type (its operands may
  then die), or bypass it (its uses take an operand of the same type);
* drop optional operands (a bias, a mask, the last concat input) and
  attributes that have defaults; reductions over one axis;
* shrink a size symbol (to 1, by half, by one) everywhere it is used;
* compute in f32 instead of f16 or bf16.

    small = reduce_program(program, lambda p: fails_the_same_way(p))
    write_case(small, verdict, "test/Fuzz/matmul-f16-mismatch.mlir")
"""

from __future__ import annotations

from typing import Callable, Iterator

from lamina.fuzz import FLOATS, Dim, Program

# Attributes that have a default, so a reduced program can go without them.
OPTIONAL_ATTRIBUTES = ("strides", "padding", "dilations", "groups", "keepdims", "axis",
                       "epsilon", "approximate", "causal", "scale", "value")
OPTIONAL_OPERANDS = {"nn.conv2d": 3, "nn.attention": 4}


def _fewer_outputs(program: Program) -> Iterator[Program]:
    if len(program.outputs) > 1:
        for name in program.outputs:
            candidate = program.copy()
            candidate.outputs = [name]
            yield candidate.without_dead_code()
        for name in program.outputs:
            candidate = program.copy()
            candidate.outputs = [o for o in program.outputs if o != name]
            yield candidate.without_dead_code()


def _replace_by_input(program: Program, index: int) -> Program:
    candidate = program.copy()
    op = candidate.ops[index]
    types = program.types()
    for result in op.results:
        t = types[result]
        syms = []
        for d in t.shape:
            if d.sym is None:
                sym = f"r{len(candidate.sizes)}"
                while sym in candidate.sizes:
                    sym += "_"
                candidate.sizes[sym] = d.size
                syms.append(sym)
            else:
                syms.append(d.sym)
        candidate.inputs[result] = (tuple(syms), t.dtype)
    del candidate.ops[index]
    return candidate.without_dead_code()


def _bypass(program: Program, index: int) -> Iterator[Program]:
    types = program.types()
    op = program.ops[index]
    if len(op.results) != 1:
        return
    result = types[op.results[0]]
    for operand in dict.fromkeys(op.operands):
        t = types[operand]
        if (tuple(d.size for d in t.shape), t.dtype) == \
                (tuple(d.size for d in result.shape), result.dtype):
            candidate = program.copy()
            del candidate.ops[index]
            rename = {op.results[0]: operand}
            for other in candidate.ops:
                other.operands = [rename.get(o, o) for o in other.operands]
            candidate.outputs = list(dict.fromkeys(rename.get(o, o) for o in candidate.outputs))
            yield candidate.without_dead_code()


def _simpler_ops(program: Program, index: int) -> Iterator[Program]:
    op = program.ops[index]
    optional = OPTIONAL_OPERANDS.get(op.kind)
    if optional is not None and len(op.operands) == optional:
        candidate = program.copy()
        candidate.ops[index].operands = op.operands[:-1]
        yield candidate.without_dead_code()
    if op.kind == "nn.concat" and len(op.operands) > 2:
        candidate = program.copy()
        candidate.ops[index].operands = op.operands[:-1]
        yield candidate.without_dead_code()
    for name in OPTIONAL_ATTRIBUTES:
        if name in op.attrs:
            candidate = program.copy()
            del candidate.ops[index].attrs[name]
            yield candidate
    if "axes" in op.attrs and len(op.attrs["axes"]) > 1:
        for axis in op.attrs["axes"]:
            candidate = program.copy()
            candidate.ops[index].attrs["axes"] = (axis,)
            yield candidate
    if op.kind == "nn.slice":
        candidate = program.copy()
        candidate.ops[index].attrs["starts"] = (0,) * len(op.attrs["starts"])
        candidate.ops[index].recipe["from_end"] = (0,) * len(op.attrs["starts"])
        yield candidate


def _smaller_sizes(program: Program) -> Iterator[Program]:
    used = {s for syms, _ in program.inputs.values() for s in syms}
    for op in program.ops:
        used.update(s for s in op.recipe.get("lead", ()))
        used.update(s for _, s in op.recipe.get("expand", ()))
        used.update(s for s in op.recipe.get("shape", ()) if isinstance(s, str))
    for sym in sorted(used, key=lambda s: -program.sizes[s]):
        size = program.sizes[sym]
        for smaller in dict.fromkeys([1, size // 2, size - 1]):
            if 1 <= smaller < size:
                candidate = program.copy()
                candidate.sizes[sym] = smaller
                yield candidate


def _in_f32(program: Program) -> Iterator[Program]:
    dtypes = {d for _, d in program.inputs.values()} | {op.recipe.get("to") for op in program.ops}
    if not dtypes & {"f16", "bf16"}:
        return
    candidate = program.copy()
    candidate.inputs = {n: (syms, "f32" if d in FLOATS else d)
                        for n, (syms, d) in candidate.inputs.items()}
    for op in candidate.ops:
        if op.recipe.get("to") in FLOATS:
            op.recipe["to"] = "f32"
        if op.recipe.get("dtype") in FLOATS:
            op.recipe["dtype"] = "f32"
    yield candidate


def candidates(program: Program) -> Iterator[Program]:
    """Smaller or simpler variants of `program`, most promising first."""
    yield from _fewer_outputs(program)
    for index in reversed(range(len(program.ops))):
        if index < len(program.ops):
            yield _replace_by_input(program, index)
    for index in reversed(range(len(program.ops))):
        yield from _bypass(program, index)
    for index in range(len(program.ops)):
        yield from _simpler_ops(program, index)
    yield from _in_f32(program)
    yield from _smaller_sizes(program)


def size(program: Program) -> tuple:
    """What the reducer minimises: ops, then inputs, then elements."""
    types = program.types()
    elements = sum(max(1, _product(t.shape)) for t in types.values())
    return (len(program.ops), len(program.inputs), elements,
            sum(len(op.attrs) + len(op.operands) for op in program.ops))


def _product(shape: tuple[Dim, ...]) -> int:
    result = 1
    for d in shape:
        result *= d.size
    return result


def reduce_program(program: Program, still_fails: Callable[[Program], bool],
                   budget: int = 300, progress: Callable[[str], None] = lambda text: None
                   ) -> Program:
    """The smallest variant of `program` found that still fails, trying at
    most `budget` candidates."""
    best = program
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        current = size(best)
        for candidate in candidates(best):
            if tries >= budget:
                break
            if not candidate.is_valid() or size(candidate) >= current:
                continue
            tries += 1
            if still_fails(candidate):
                best = candidate
                improved = True
                progress(f"{len(best.ops)} ops, {len(best.inputs)} inputs")
                break
    return best


def case_text(program: Program, summary: str, run_line: str, xfail: bool = False) -> str:
    """A reduced program as a lit test: what was found, the command that
    passes once it is fixed, and the program."""
    header = [f"// {line}" for line in summary.strip().splitlines()]
    header.append(f"// RUN: {run_line}")
    if xfail:
        header.append("// XFAIL: *")
    return program.text(header="\n".join(header) + "\n")


def run_line(kind: str, configuration: str, seed: int) -> str:
    """The lit command that reproduces a finding of this kind (and passes
    once it is fixed)."""
    if kind == "invalid":
        return "lamina-opt %s -o /dev/null"
    if configuration in ("reference", "reference-f64") and kind == "error":
        return f"lamina-run %s --random --seed {seed} --check -q"
    if kind == "mismatch":
        return f"lamina-run %s --random --seed {seed} --check -q"
    return f"lamina-run %s --random --seed {seed} -q"
