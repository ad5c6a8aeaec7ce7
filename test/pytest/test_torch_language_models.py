"""Transformer language models through Lamina's PyTorch front doors, from
`input_ids`: GPT-2, BERT (with a padding mask) and a Llama-style decoder
(`language_models.py`) imported with `lamina.from_torch` and compiled with
`torch.compile(backend="lamina")`, each against eager PyTorch in float32 at
rtol = atol = 1e-4 (the results differ by about 2e-6); and the integer
and indexing ops they and their relatives use (embedding, arange, cumsum,
advanced indexing, gather, index_select, triu/tril masks, argmax, integer
comparisons and casts), compared exactly where the results are integers."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import lamina  # noqa: E402
from lamina.importers.torch_backend import LaminaFallbackWarning, lamina_backend  # noqa: E402
from lamina.importers.torch_import import from_torch, weights  # noqa: E402

from language_models import MODELS, build, inputs  # noqa: E402

RTOL = ATOL = 1e-4


@functools.cache
def imported(name: str):
    model = build(name)
    module = from_torch(model, inputs(name))
    return model, module, lamina.compile(module)


@pytest.mark.parametrize("name", MODELS)
def test_from_torch_matches_eager(name):
    model, module, compiled = imported(name)
    args = inputs(name)
    arguments = str(module.body.operations[0].attributes["function_type"])
    assert "tensor<1x8xi64>" in arguments
    got = compiled(*weights(module, model), *[a.numpy() for a in args])
    with torch.no_grad():
        want = model(*args).numpy()
    assert got.shape == want.shape == (1, 8, 128)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", MODELS)
def test_torch_compile_matches_eager_without_fallback(name):
    model = build(name)
    args = inputs(name)
    graphs = []

    def backend(gm, example_inputs):
        compiled = lamina_backend(gm, example_inputs)
        graphs.append(compiled)
        return compiled

    torch._dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error", LaminaFallbackWarning)
        with torch.no_grad():
            got = torch.compile(model, backend=backend)(*args)
    with torch.no_grad():
        want = model(*args)
    # One captured graph, run by Lamina's code (a fallback would be the
    # graph module's own forward, and would have raised above).
    assert len(graphs) == 1 and type(graphs[0]).__name__ == "CompiledGraph"
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=RTOL, atol=ATOL)


class Indexing(torch.nn.Module):
    """The integer ops of language models beyond those three."""

    def __init__(self):
        super().__init__()
        self.table = torch.nn.Parameter(torch.randn(10, 4))

    def forward(self, ids, small, scores):
        positions = torch.arange(2, 2 + 3 * ids.shape[1], 3)          # start, step
        running = torch.cumsum((ids > 4).to(torch.int32), dim=1)       # int32
        picked = torch.index_select(self.table, 0, ids[0])
        taken = torch.gather(scores, 1, small)
        causal = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)
        lower = torch.tril(scores[:, :5].unsqueeze(0).expand(5, 2, 5)[:, 0], diagonal=-1)
        best = torch.argmax(scores, dim=-1, keepdim=True)
        flat_best = torch.argmax(scores)
        shifted = torch.where(ids >= 5, ids - 5, ids + positions)
        # Advanced indexing, negative indices counted from the end.
        rows = scores[(small[:, :2] > 2).long(), small[:, 2:4] - 5]
        return (positions, running, picked, taken, causal, lower, best, flat_best,
                shifted, rows, torch.cos(scores) * torch.sin(scores))


def test_integer_and_indexing_ops_match_eager():
    torch.manual_seed(3)
    model = Indexing().eval()
    ids = torch.tensor([[0, 7, 3, 9, 5, 1], [4, 4, 8, 2, 6, 0]])
    small = torch.tensor([[4, 0, 1, 3, 2, 2], [1, 3, 0, 4, 4, 0]])
    scores = torch.randn(2, 6)
    scores[1, 2] = scores[1, 4] = scores[1].max() + 1    # a tie: the first index wins
    args = (ids, small, scores)
    module = from_torch(model, args)
    got = lamina.compile(module)(*weights(module, model), *[a.numpy() for a in args])
    with torch.no_grad():
        want = model(*args)
    assert len(got) == len(want)
    for index, (g, w) in enumerate(zip(got, want)):
        w = w.numpy()
        assert g.dtype == w.dtype and g.shape == w.shape, index
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w, err_msg=f"result #{index}")
        else:
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=f"result #{index}")


def test_bitwise_ops_on_integers_are_reported():
    class Bitwise(torch.nn.Module):
        def forward(self, ids):
            return ids & 3

    with pytest.raises(lamina.CompileError, match="bitwise operations on i64 are not supported"):
        from_torch(Bitwise(), (torch.tensor([1, 2, 3]),))
