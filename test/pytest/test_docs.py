"""The references in docs/ are generated from the op and pass definitions
(`python -m lamina.docgen`) and must not drift from them."""

import os

from lamina import docgen

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_references_are_up_to_date():
    for path, text in docgen.documents(ROOT).items():
        with open(path) as f:
            assert f.read() == text, f"{path} is stale: run `python -m lamina.docgen`"


def test_every_op_and_pass_is_documented():
    documents = docgen.documents(ROOT)
    nn_reference = documents[os.path.join(ROOT, "docs", "dialects", "nn.md")]
    from lamina.dialects.nn import NN
    for mnemonic, op_class in NN.ops.items():
        assert f"## `nn.{mnemonic}`" in nn_reference
        assert "Example:" in (op_class.__doc__ or ""), f"nn.{mnemonic} has no example"
    passes_reference = documents[os.path.join(ROOT, "docs", "passes.md")]
    from lamina.pass_registry import all_passes
    for argument in all_passes():
        assert f"## `--{argument}`" in passes_reference
