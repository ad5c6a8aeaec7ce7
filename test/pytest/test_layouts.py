"""Activations stored channels-last (nn-assign-layouts) compute what the
NCHW program does.

* The NHWC forms of `nn.conv2d`, `nn.max_pool2d` and `nn.avg_pool2d`
  (`layout = "NHWC"`) are their NCHW references on transposed
  activations; the compiled NHWC ops match those references.
* Programs after the layout stage, and compiled with it, match the
  reference of the original program (`lamina.reference.compare`'s f32
  tolerances: rtol 1e-4, atol 1e-5 scaled by the largest magnitude).
* A residual block (conv, batch norm, relu, conv, batch norm, add, relu)
  has activation transposes only at its edges in the scheduled linalg.
* Seeded random chains of every rule, NHWC forced, keep their values
  (by the reference interpreter, and compiled for a few).
* torchvision's resnet18 and mobilenet_v2 (random weights, 64x64 inputs)
  through `from_torch` match eager PyTorch at rtol = atol = 1e-4.
"""

from __future__ import annotations

import numpy as np
import pytest

import lamina
from lamina.dialects import nn
from lamina.pipeline import Pipeline
from lamina.reference import compare, evaluate, random_inputs
from lamina.runtime import find_entry, signature
from lamina.types import TensorType

TO_NHWC, TO_NCHW = (0, 2, 3, 1), (0, 3, 1, 2)


@pytest.mark.parametrize("op_class, attrs, shapes", [
    (nn.Conv2dOp, dict(strides=(2, 1), padding=(1, 0, 2, 1)), [(6, 4, 3, 2), (6,)]),
    (nn.Conv2dOp, dict(groups=2, dilations=(2, 1)), [(6, 2, 2, 3), None]),
    (nn.MaxPool2dOp, dict(kernel=(3, 2), strides=(2, 2), padding=(1, 1, 1, 0)), []),
    (nn.AvgPool2dOp, dict(kernel=(2, 3), padding=(0, 1, 0, 1)), []),
], ids=["conv", "grouped_conv", "max_pool", "avg_pool"])
def test_nhwc_references_are_transposed_nchw_ones(op_class, attrs, shapes):
    x_shape = (2, 4, 7, 9)
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, x_shape).astype(np.float32)
    others = [None if s is None else rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    nchw = op_class(dict(_defaults(op_class), **attrs, layout="NCHW"))
    nhwc = op_class(dict(_defaults(op_class), **attrs, layout="NHWC"))
    expected = nchw.reference(x, *others)
    got = nhwc.reference(np.ascontiguousarray(x.transpose(TO_NHWC)), *others)
    np.testing.assert_array_equal(got, expected.transpose(TO_NHWC))
    types = [TensorType(x_shape, "f32")] + [None if s is None else TensorType(s, "f32")
                                             for s in shapes]
    nhwc_types = [TensorType([x_shape[d] for d in TO_NHWC], "f32")] + types[1:]
    assert nhwc.infer_type(*nhwc_types).shape == tuple(
        nchw.infer_type(*types).shape[d] for d in TO_NHWC)


def _defaults(op_class) -> dict:
    return {decl.name: decl.default for decl in op_class.attr_decls}


NHWC_OPS = """
func.func @main(%x: tensor<1x7x9x4xf32>, %w: tensor<6x4x3x2xf32>, %b: tensor<6xf32>) -> (tensor<1x3x5x6xf32>, tensor<1x2x2x6xf32>) {
  %c = "nn.conv2d"(%x, %w, %b) {strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 0, 1>, layout = "NHWC"} : (tensor<1x7x9x4xf32>, tensor<6x4x3x2xf32>, tensor<6xf32>) -> tensor<1x3x5x6xf32>
  %m = "nn.max_pool2d"(%c) {kernel = array<i64: 2, 3>, strides = array<i64: 1, 2>, padding = array<i64: 0, 1, 0, 0>, layout = "NHWC"} : (tensor<1x3x5x6xf32>) -> tensor<1x2x2x6xf32>
  %a = "nn.avg_pool2d"(%m) {kernel = array<i64: 1, 1>, layout = "NHWC"} : (tensor<1x2x2x6xf32>) -> tensor<1x2x2x6xf32>
  return %c, %a : tensor<1x3x5x6xf32>, tensor<1x2x2x6xf32>
}
"""

RESIDUAL_BLOCK = """
func.func @main(%x: tensor<1x8x10x12xf32>, %w1: tensor<8x8x3x3xf32>, %w2: tensor<8x8x3x3xf32>,
                %s: tensor<8x1x1xf32>, %t: tensor<8x1x1xf32>) -> tensor<1x8x10x12xf32> {
  %c1 = "nn.conv2d"(%x, %w1) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x10x12xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x10x12xf32>
  %m1 = "nn.mul"(%c1, %s) : (tensor<1x8x10x12xf32>, tensor<8x1x1xf32>) -> tensor<1x8x10x12xf32>
  %a1 = "nn.add"(%m1, %t) : (tensor<1x8x10x12xf32>, tensor<8x1x1xf32>) -> tensor<1x8x10x12xf32>
  %r1 = "nn.relu"(%a1) : (tensor<1x8x10x12xf32>) -> tensor<1x8x10x12xf32>
  %c2 = "nn.conv2d"(%r1, %w2) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x10x12xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x10x12xf32>
  %m2 = "nn.mul"(%c2, %s) : (tensor<1x8x10x12xf32>, tensor<8x1x1xf32>) -> tensor<1x8x10x12xf32>
  %a2 = "nn.add"(%m2, %t) : (tensor<1x8x10x12xf32>, tensor<8x1x1xf32>) -> tensor<1x8x10x12xf32>
  %sum = "nn.add"(%a2, %x) : (tensor<1x8x10x12xf32>, tensor<1x8x10x12xf32>) -> tensor<1x8x10x12xf32>
  %r2 = "nn.relu"(%sum) : (tensor<1x8x10x12xf32>) -> tensor<1x8x10x12xf32>
  return %r2 : tensor<1x8x10x12xf32>
}
"""

# Pointwise and strided convolutions, pooling, a concatenation, a softmax
# (no rule: NCHW) and a global average pooling with its flatten.
MIXED = """
func.func @main(%x: tensor<2x4x9x9xf32>, %w: tensor<4x4x3x3xf32>, %p: tensor<6x4x1x1xf32>,
                %q: tensor<5x10x1x1xf32>, %d: tensor<10x1x3x3xf32>) -> (tensor<2x5xf32>, tensor<2x10x5x5xf32>) {
  %c = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x4x9x9xf32>, tensor<4x4x3x3xf32>) -> tensor<2x4x9x9xf32>
  %e = "nn.conv2d"(%c, %w) {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x4x9x9xf32>, tensor<4x4x3x3xf32>) -> tensor<2x4x5x5xf32>
  %f = "nn.conv2d"(%e, %p) : (tensor<2x4x5x5xf32>, tensor<6x4x1x1xf32>) -> tensor<2x6x5x5xf32>
  %g = "nn.max_pool2d"(%c) {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x4x9x9xf32>) -> tensor<2x4x5x5xf32>
  %cat = "nn.concat"(%f, %g) {axis = 1 : i64} : (tensor<2x6x5x5xf32>, tensor<2x4x5x5xf32>) -> tensor<2x10x5x5xf32>
  %dw = "nn.conv2d"(%cat, %d) {groups = 10 : i64, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x10x5x5xf32>, tensor<10x1x3x3xf32>) -> tensor<2x10x5x5xf32>
  %s = "nn.softmax"(%dw) {axis = 1 : i64} : (tensor<2x10x5x5xf32>) -> tensor<2x10x5x5xf32>
  %h = "nn.conv2d"(%cat, %q) : (tensor<2x10x5x5xf32>, tensor<5x10x1x1xf32>) -> tensor<2x5x5x5xf32>
  %mean = "nn.reduce_mean"(%h) {axes = array<i64: 2, 3>, keepdims = true} : (tensor<2x5x5x5xf32>) -> tensor<2x5x1x1xf32>
  %flat = "nn.reshape"(%mean) : (tensor<2x5x1x1xf32>) -> tensor<2x5xf32>
  return %flat, %s : tensor<2x5xf32>, tensor<2x10x5x5xf32>
}
"""


def pipeline(layout: str) -> Pipeline:
    return Pipeline.for_target("cpu").replace(
        "nn-assign-layouts", f"nn-assign-layouts{{layout={layout}}}", stage="layout")


def check(text: str, layout: str) -> None:
    """The layout stage's program (by the reference interpreter) and the
    compiled program against the reference of the original program."""
    module = lamina.parse(text)
    inputs = random_inputs(signature(find_entry(module))[0], seed=0)
    expected = evaluate(module, inputs)
    laid_out = pipeline(layout).run(lamina.parse(text), until="layout")
    results = lamina.compile(text, pipeline=pipeline(layout))(*inputs)
    results = results if isinstance(results, tuple) else (results,)
    for got, via_layout, want in zip(results, evaluate(laid_out, inputs), expected, strict=True):
        assert compare(via_layout, want).ok
        report = compare(np.asarray(got), want)
        assert report.ok, report


def test_compiled_nhwc_ops_match_their_references():
    check(NHWC_OPS, "NCHW")


@pytest.mark.parametrize("layout", ["auto", "NHWC"])
@pytest.mark.parametrize("name", ["RESIDUAL_BLOCK", "MIXED"])
def test_laid_out_programs_match_the_nchw_reference(name, layout):
    check(globals()[name], layout)


def activation_transposes(text: str, layout: str) -> list[str]:
    """The transposes between NCHW and NHWC in the scheduled linalg (each
    where the program runs it: repeated ones are not outlined)."""
    stages = pipeline(layout)
    stages.remove("cpu-outline-fusion-groups")
    scheduled = str(stages.run(lamina.parse(text), until="schedule"))
    return [line for line in scheduled.splitlines() if "linalg.transpose" in line and (
        "permutation = [0, 2, 3, 1]" in line or "permutation = [0, 3, 1, 2]" in line)]


def test_residual_block_is_transposed_only_at_its_edges():
    transposes = activation_transposes(RESIDUAL_BLOCK, "auto")
    assert len(transposes) == 2
    assert "ins(%arg0 : tensor<1x8x10x12xf32>)" in transposes[0]
    assert "permutation = [0, 3, 1, 2]" in transposes[1]
    # Without the layout stage, each convolution is transposed in and out.
    assert len(activation_transposes(RESIDUAL_BLOCK, "NCHW")) == 4


def test_mixed_program_keeps_nchw_where_ops_need_it():
    laid_out = str(pipeline("NHWC").run(lamina.parse(MIXED), until="layout"))
    # In at the input, back before the softmax (no rule) and its result.
    assert laid_out.count('"nn.transpose"') == 2
    assert laid_out.count('layout = "NHWC"') == 6


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
def test_torchvision_models_match_eager(name):
    torch = pytest.importorskip("torch")
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.randn(1, 3, 64, 64)
    with torch.inference_mode():
        expected = model(x).numpy()
    module = lamina.from_torch(model, (x,), params="constants")
    laid_out = str(Pipeline.for_target("cpu").run(lamina.parse(str(module)), until="layout"))
    convolutions = laid_out.count('"nn.conv2d"')
    assert convolutions == (20 if name == "resnet18" else 52)
    # Both compute channels-last, every convolution (mobilenet_v2's
    # depthwise ones too) and resnet18's pooling, with one layout change:
    # the image's.
    assert laid_out.count('layout = "NHWC"') == (21 if name == "resnet18" else 52)
    assert laid_out.count('"nn.transpose"') == 1
    got = lamina.compile(module)(x.numpy())
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def random_program(rng: np.random.Generator) -> str:
    """A seeded chain of ops on 1x4x6x5 activations: convolutions, pooling,
    elementwise ops with operands of every rank, residual adds,
    concatenations, reductions with and without keepdims, transposes and
    reshapes, with some results returned."""
    lines, types, live, results = [], {}, ["%x"], []
    types["%x"] = (1, 4, 6, 5)
    args = ["%x: tensor<1x4x6x5xf32>"]

    def t(shape):
        return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}f32>"

    def new_arg(shape):
        name = f"%a{len(args)}"
        args.append(f"{name}: {t(shape)}")
        types[name] = shape
        return name

    for i in range(8):
        x = live[rng.integers(len(live))]
        c = types[x][1]
        out = f"%v{i}"
        kind = rng.choice(["conv", "conv1x1", "pool", "scale", "add", "concat", "mean", "relu"])
        if kind in ("conv", "conv1x1"):
            k = 3 if kind == "conv" else 1
            w = new_arg((4, c, k, k))
            pad = "padding = array<i64: 1, 1, 1, 1>" if k == 3 else "strides = array<i64: 1, 1>"
            shape = (1, 4) + types[x][2:]
            lines.append(f'{out} = "nn.conv2d"({x}, {w}) {{{pad}}} : ({t(types[x])}, {t((4, c, k, k))}) -> {t(shape)}')
        elif kind == "pool":
            shape = types[x]
            lines.append(f'{out} = "nn.max_pool2d"({x}) {{kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>}} : ({t(shape)}) -> {t(shape)}')
        elif kind == "scale":
            shape = types[x]
            operand = [(), (c, 1, 1), (shape[3],), (1, c, 1, 1), (shape[2], 1)][rng.integers(5)]
            s = new_arg(operand)
            lines.append(f'{out} = "nn.mul"({x}, {s}) : ({t(shape)}, {t(operand)}) -> {t(shape)}')
        elif kind == "add":
            y = live[rng.integers(len(live))]
            if types[y] != types[x]:
                y = new_arg(types[x])
            shape = types[x]
            lines.append(f'{out} = "nn.add"({x}, {y}) : ({t(shape)}, {t(shape)}) -> {t(shape)}')
        elif kind == "concat":
            y = live[rng.integers(len(live))]
            if types[y][2:] != types[x][2:]:
                y = x
            shape = (1, types[x][1] + types[y][1]) + types[x][2:]
            lines.append(f'{out} = "nn.concat"({x}, {y}) {{axis = 1 : i64}} : ({t(types[x])}, {t(types[y])}) -> {t(shape)}')
        elif kind == "mean":
            axes = [(2, 3), (1,), (3,), (1, 2)][rng.integers(4)]
            keep = bool(rng.integers(2))
            shape = tuple(1 if d in axes else s for d, s in enumerate(types[x]) if keep or d not in axes)
            attrs = f"axes = array<i64: {', '.join(map(str, axes))}>" + (", keepdims = true" if keep else "")
            lines.append(f'{out} = "nn.reduce_mean"({x}) {{{attrs}}} : ({t(types[x])}) -> {t(shape)}')
            results.append((out, shape))
            types[out] = shape
            continue
        else:
            shape = types[x]
            lines.append(f'{out} = "nn.relu"({x}) : ({t(shape)}) -> {t(shape)}')
        types[out] = shape
        live.append(out)
        if rng.integers(4) == 0:
            perm = tuple(int(p) for p in rng.permutation(4))
            tshape = tuple(shape[p] for p in perm)
            lines.append(f'{out}t = "nn.transpose"({out}) {{perm = array<i64: {", ".join(map(str, perm))}>}} : ({t(shape)}) -> {t(tshape)}')
            results.append((f"{out}t", tshape))
    last = live[-1]
    results.append((last, types[last]))
    body = "\n  ".join(lines)
    names = ", ".join(n for n, _ in results)
    result_types = ", ".join(t(s) for _, s in results)
    return (f"func.func @main({', '.join(args)}) -> ({result_types}) {{\n  {body}\n"
            f"  return {names} : {result_types}\n}}")


@pytest.mark.parametrize("seed", range(40))
def test_random_programs_keep_their_values(seed):
    """Every rule at once, with NHWC forced on every region holding a
    convolution or pooling, by the reference interpreter."""
    text = random_program(np.random.default_rng(seed))
    module = lamina.parse(text)
    inputs = random_inputs(signature(find_entry(module))[0], seed=seed)
    expected = evaluate(module, inputs)
    laid_out = pipeline("NHWC").run(lamina.parse(text), until="layout")
    for got, want in zip(evaluate(laid_out, inputs), expected, strict=True):
        assert compare(got, want).ok, text


@pytest.mark.parametrize("seed", range(4))
def test_random_programs_compile_to_their_values(seed):
    check(random_program(np.random.default_rng(seed)), "NHWC")
