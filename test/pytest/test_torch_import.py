"""PyTorch models through Lamina: `lamina.from_torch` (torch.export) with the
weights as arguments and as constants, and `torch.compile(backend="lamina")`.

Models are built here with random weights (no downloads): an MLP, a
transformer encoder block (nn.MultiheadAttention, LayerNorm, a GELU MLP),
torchvision's resnet18 in eval mode, and a model that touches the other
mapped ops. Every result is compared with PyTorch eager in float32 at
rtol = atol = 1e-4. Each model is imported and compiled once per test run (resnet18 takes
most of the time: about 7 s of Lamina's CPU pipeline and JIT).
"""

from __future__ import annotations

import functools
import inspect
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

import lamina  # noqa: E402
from lamina.diagnostics import file_location  # noqa: E402
from lamina.importers.torch_backend import LaminaFallbackWarning  # noqa: E402
from lamina.importers.torch_import import (  # noqa: E402
    UnsupportedOpsError, parameter_names, weights)

RTOL = ATOL = 1e-4  # float32, against PyTorch eager
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        hidden = F.gelu(self.fc1(x))
        return F.softmax(self.fc2(hidden), dim=-1)


class EncoderBlock(nn.Module):
    """A pre-norm transformer encoder block."""

    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * dim, dim))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attention(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class ManyOps(nn.Module):
    """Convolutions (grouped, 1-D, 'same'), batch and group norm, pooling with
    ceil_mode and without counting padding, RMSNorm, causal attention with a
    boolean mask, matmul/bmm/t, chunk/cat/slice/view/transpose/expand,
    reductions, activations
    (mish through PyTorch's decomposition), casts."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.depthwise = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8, bias=False)
        self.conv1d = nn.Conv1d(8, 4, 3, padding="same")
        self.norm = nn.RMSNorm(16)
        self.qkv = nn.Linear(16, 48)
        self.mix = nn.Parameter(torch.randn(16, 16) / 4)
        self.register_buffer("mask", torch.ones(8, 8, dtype=torch.bool).tril())

    def forward(self, x):
        y = F.hardtanh(self.bn(self.conv(x)))
        y = y + F.group_norm(y, 2)
        y = F.max_pool2d(y, 3, stride=2, padding=1, ceil_mode=True)
        pooled = F.avg_pool2d(y, 2, padding=1, count_include_pad=False)
        z = F.silu(self.depthwise(y))
        c = self.conv1d(z.flatten(2))
        t = z.flatten(2)[..., :16]
        q, k, v = self.qkv(self.norm(t)).chunk(3, dim=-1)
        q, k, v = (a.view(2, 8, 2, 8).transpose(1, 2) for a in (q, k, v))
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask)
        o = o.transpose(1, 2).reshape(2, 8, 16)
        o = o + torch.matmul(t, self.mix.t()) + torch.bmm(o, o.transpose(1, 2)) @ t / 64
        tokens = torch.cat([o, t * 0.5 - 1], dim=-1).log_softmax(-1)
        channels = (pooled.mean(dim=(2, 3)) + torch.amax(z, dim=(2, 3))).sigmoid()
        channels = channels.unsqueeze(-1).expand(2, 8, 3)
        mixed = (F.leaky_relu(c, 0.1) + F.elu(c) + F.hardswish(c) + F.softplus(c) + F.mish(c)
                 + torch.where(c > 0, c, -c).tanh().half().float())
        return tokens, channels, mixed / c.var(dim=-1, keepdim=True).clamp(min=0.5)


class Unsupported(nn.Module):
    def forward(self, x):
        y = torch.cumprod(x, dim=-1)
        return torch.sort(y, dim=-1).values * 2


def line_of(function, text: str) -> int:
    """The line of `function`'s source that holds `text`."""
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


def eager(model, *inputs):
    with torch.no_grad():
        outputs = model(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    return [o.numpy() for o in outputs]


def check(results, expected):
    results = results if isinstance(results, (tuple, list)) else (results,)
    assert len(results) == len(expected)
    for result, reference in zip(results, expected):
        result = result.numpy() if isinstance(result, torch.Tensor) else result
        np.testing.assert_allclose(result, reference, rtol=RTOL, atol=ATOL)


NORMS = (nn.modules.batchnorm._BatchNorm, nn.GroupNorm, nn.LayerNorm, nn.RMSNorm)


def seeded(model_class, *args):
    """The model in eval mode with random weights, its normalisations'
    scales, shifts and running statistics random too (not 1 and 0)."""
    torch.manual_seed(0)
    model = model_class(*args).eval()
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.modules.batchnorm._BatchNorm):
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 1.5)
            if isinstance(module, NORMS) and module.weight is not None:
                module.weight.uniform_(0.5, 1.5)
            if isinstance(module, NORMS) and getattr(module, "bias", None) is not None:
                module.bias.uniform_(-0.5, 0.5)
    return model


MODELS = {
    "mlp": lambda: (seeded(MLP), (torch.randn(8, 64),)),
    "encoder_block": lambda: (seeded(EncoderBlock), (torch.randn(2, 8, 32),)),
    "many_ops": lambda: (seeded(ManyOps), (torch.randn(2, 3, 16, 16),)),
    "resnet18": lambda: (seeded(torchvision.models.resnet18), (torch.randn(1, 3, 64, 64),)),
}


@functools.cache
def import_and_compile(name: str, params: str):
    """(model, inputs, params, module, compiled function), once per case."""
    model, inputs = MODELS[name]()
    module = lamina.from_torch(model, inputs, params=params)
    return model, inputs, params, module, lamina.compile(module)


@pytest.fixture(params=[("mlp", "arguments"), ("mlp", "constants"),
                        ("encoder_block", "arguments"), ("encoder_block", "constants"),
                        ("many_ops", "arguments"), ("resnet18", "arguments")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def imported(request):
    return import_and_compile(*request.param)


def test_from_torch_matches_eager(imported):
    model, inputs, params, module, compiled = imported
    arrays = [x.numpy() for x in inputs]
    if params == "arguments":
        arrays = weights(module, model) + arrays
    check(compiled(*arrays), eager(model, *inputs))


def test_weights_are_arguments_or_constants(imported):
    model, inputs, params, module, compiled = imported
    names = parameter_names(module)
    assert len(compiled.inputs) == len(names)
    assert names[len(names) - len(inputs):] == [None] * len(inputs)
    if params == "constants":
        assert len(names) == len(inputs) and "arith.constant" in str(module)
    else:
        assert set(names[:-len(inputs)]) <= set(model.state_dict())


def test_resnet18_ops_and_weights_in_torch_export_order():
    model, _, _, module, _ = import_and_compile("resnet18", "arguments")
    text = str(module)
    assert text.count('"nn.conv2d"') == 20
    assert text.count('"nn.max_pool2d"') == 1
    assert '"nn.reduce_mean"' in text  # adaptive_avg_pool2d to 1x1
    # Batch norm in eval mode is a per-channel scale and shift; the unused
    # int64 counters of the BatchNorm layers are no arguments.
    assert '"nn.rsqrt"' in text and "num_batches_tracked" not in text
    names = [n for n, _ in model.named_parameters()]
    assert 'lamina.parameter = "conv1.weight"' in text
    assert text.index(f'"{names[0]}"') < text.index(f'"{names[-1]}"')


def test_locations_point_to_the_model_source():
    model, inputs = MODELS["mlp"]()
    module = lamina.from_torch(model, inputs, params="constants")
    lines = {}
    for op in module.body.operations[0].regions[0].blocks[0].operations:
        found = file_location(op.location)
        if op.name.startswith("nn."):
            lines.setdefault(op.name, set()).add(found[:2] if found else None)
    here = os.path.abspath(__file__)
    assert lines["nn.gelu"] == {(here, line_of(MLP.forward, "F.gelu"))}
    assert lines["nn.softmax"] == {(here, line_of(MLP.forward, "F.softmax"))}
    assert f'loc("{here}":{line_of(MLP.forward, "F.gelu")}:0)' in \
        module.operation.get_asm(enable_debug_info=True, large_elements_limit=16)


def test_unsupported_ops_are_listed_together_with_their_lines():
    with pytest.raises(UnsupportedOpsError) as raised:
        lamina.from_torch(Unsupported(), (torch.randn(4, 8),))
    here = os.path.abspath(__file__)
    cumprod, sort = line_of(Unsupported.forward, "cumprod"), line_of(Unsupported.forward, "sort")
    assert raised.value.ops == [("aten.cumprod.default", here, cumprod),
                                ("aten.sort.default", here, sort)]
    assert str(raised.value) == (f"{here}:{cumprod}: error: aten.cumprod.default is not supported\n"
                                 f"{here}:{sort}: error: aten.sort.default is not supported")
    assert isinstance(raised.value, lamina.CompileError)


def test_uncapturable_model_and_bad_params_option():
    class DataDependent(nn.Module):
        def forward(self, x):
            return x * 2 if x.sum() > 0 else x

    with pytest.raises(lamina.CompileError, match="torch.export cannot capture the model"):
        lamina.from_torch(DataDependent(), (torch.randn(4),))
    with pytest.raises(ValueError, match="params must be one of arguments, constants"):
        lamina.from_torch(MLP(), (torch.randn(2, 64),), params="inline")


@pytest.mark.parametrize("name", ["mlp", "encoder_block", "resnet18"])
def test_torch_compile_backend(name):
    model, inputs = MODELS[name]()
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="lamina")
    with warnings.catch_warnings():
        warnings.simplefilter("error", LaminaFallbackWarning)
        with torch.no_grad():
            outputs = compiled(*inputs)
    assert isinstance(outputs, torch.Tensor)
    check(outputs, eager(model, *inputs))


def test_torch_compile_backend_falls_back_to_eager_naming_the_ops():
    torch._dynamo.reset()
    model = Unsupported()
    x = torch.randn(4, 8)
    with pytest.warns(LaminaFallbackWarning) as caught:
        outputs = torch.compile(model, backend="lamina")(x)
    message = str(caught[0].message)
    here = os.path.abspath(__file__)
    assert f"{here}:{line_of(Unsupported.forward, 'cumprod')}: error: aten.cumprod" in message
    assert f"{here}:{line_of(Unsupported.forward, 'sort')}: error: aten.sort" in message
    check(outputs, eager(model, x))


def test_torch_compile_backend_bfloat16():
    """bf16 weights, inputs and outputs (compared at bf16's precision:
    rtol = atol = 2e-2)."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 16), nn.GELU()).to(torch.bfloat16).eval()
    x = torch.randn(4, 32).to(torch.bfloat16)
    with torch.no_grad():
        outputs = torch.compile(model, backend="lamina")(x)
        expected = model(x)
    assert outputs.dtype == torch.bfloat16
    np.testing.assert_allclose(outputs.float().numpy(), expected.float().numpy(), rtol=2e-2,
                               atol=2e-2)


def test_triton_loads_after_a_lamina_jit(tmp_path):
    """Triton (a PyTorch dependency) carries its own LLVM; the JIT keeps
    the wheel's LLVM out of the process's global symbols, so Triton loads
    after a Lamina JIT and both go on working. In a fresh process, as a
    user's script would run."""
    script = tmp_path / "after_jit.py"
    script.write_text(
        "import sys\n"
        "import numpy as np\n"
        "import lamina\n"
        f"lamina.compile({os.path.join(ROOT, 'examples', 'mlp.mlir')!r})\n"
        "import triton\n"
        "import torch\n"
        "model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU()).eval()\n"
        "x = torch.randn(2, 8)\n"
        "f = lamina.compile(lamina.from_torch(model, (x,), params='constants'))\n"
        "with torch.no_grad():\n"
        "    y = torch.compile(model, backend='lamina')(x)\n"
        "    assert np.allclose(f(x.numpy()), model(x).numpy(), rtol=1e-4, atol=1e-4)\n"
        "    assert torch.allclose(y, model(x), rtol=1e-4, atol=1e-4)\n"
        "print('triton' in sys.modules and sys.modules['triton'] is not None)\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "True"


class _WhereWithScalars(nn.Module):
    """torch.where with a number for either branch (aten.where.ScalarOther
    and ScalarSelf), of a float and of a boolean tensor, as Hugging Face's
    mask code writes them."""

    def forward(self, x):
        keep = x > 0
        floats = torch.where(keep, x, 0.5) + torch.where(keep, -2.0, x)
        allowed = torch.where(x < 0.5, keep, False)
        return floats * allowed.to(x.dtype)


def test_where_with_a_number_for_a_branch():
    x = torch.linspace(-1, 1, 24).reshape(4, 6)
    function = lamina.compile(lamina.from_torch(_WhereWithScalars(), (x,)))
    expected = _WhereWithScalars()(x).numpy()
    np.testing.assert_allclose(function(x.numpy()), expected, rtol=1e-6, atol=1e-6)
