"""The ONNX attributes each conversion of `lamina.importers.onnx_import`
declares, checked against the spec (`onnx.defs.get_schema` of every opset
up to the newest the installed onnx package knows): a declared name the
spec does not define for the op is a typo or a stale name, and an
attribute taken "at its default only" needs a default in the spec. Every
other attribute on a node is an error at the node (lit:
test/Import/onnx-import-errors.test), and a conversion reads the spec's
defaults (`_Node.attr`), so no default of its own can differ from the
spec's."""

from __future__ import annotations

import pytest

onnx = pytest.importorskip("onnx")

from lamina.importers import onnx_import  # noqa: E402


def schemas(op_type: str):
    for opset in range(1, onnx.defs.onnx_opset_version() + 1):
        try:
            yield opset, onnx.defs.get_schema(op_type, opset)
        except onnx.defs.SchemaError:
            continue


DECLARED = sorted(onnx_import.declared_attributes().items())


@pytest.mark.parametrize("op_type,declarations", DECLARED, ids=[op for op, _ in DECLARED])
def test_declared_attributes_are_the_specs(op_type, declarations):
    defined = {name for _, schema in schemas(op_type) for name in schema.attributes}
    with_default = {name for _, schema in schemas(op_type)
                    for name, attribute in schema.attributes.items()
                    if attribute.default_value.type}
    for declaration in declarations:
        assert not declaration.implemented & declaration.defaults_only
        assert declaration.implemented | declaration.defaults_only <= defined, (
            f"{op_type} declares attributes the spec does not define: "
            f"{sorted((declaration.implemented | declaration.defaults_only) - defined)}")
        assert declaration.defaults_only <= with_default, (
            f"{op_type} takes attributes at a default the spec does not state: "
            f"{sorted(declaration.defaults_only - with_default)}")


def test_spec_defaults_follow_the_opset():
    # Softmax's axis was 1 before opset 13 and -1 since.
    assert onnx_import._spec_defaults("Softmax", 11)["axis"] == 1
    assert onnx_import._spec_defaults("Softmax", 13)["axis"] == -1
    assert onnx_import._spec_defaults("Attention", 25)["left_window_size"] == -1
    assert onnx_import._spec_defaults("Attention", 25)["scale"] is None


def test_a_conversion_reads_only_what_it_declares():
    node = onnx_import._Node(0, onnx.helper.make_node("Relu", ["x"], ["y"]), {},
                             declared=frozenset({"alpha"}), defaults={"alpha": 0.5})
    assert node.attr("alpha") == 0.5
    with pytest.raises(AssertionError, match="reads attribute 'beta'"):
        node.attr("beta")
    with pytest.raises(AssertionError, match="the default 0.1; the spec's is 0.5"):
        node.attr("alpha", 0.1)
