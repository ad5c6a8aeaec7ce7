"""Pass options and textual pipelines (lamina.pass_registry, lamina.pass_pipeline)."""

import os
import subprocess
import sys

import pytest

from lamina.context import make_context
from lamina.pass_pipeline import PipelineElement, PipelineError, parse_pipeline, resolve
from lamina.pass_registry import OptionError, Pass, all_passes, get_pass


def test_parse_nested_pipeline():
    elements = parse_pipeline(
        "builtin.module(func.func(nn-canonicalize{max-iterations=3}, cse), canonicalize)")
    assert elements == [
        PipelineElement("nn-canonicalize", "max-iterations=3", ("func.func",)),
        PipelineElement("cse", "", ("func.func",)),
        PipelineElement("canonicalize", "", ()),
    ]


def test_parse_without_module_anchor():
    assert parse_pipeline("cse,canonicalize") == [PipelineElement("cse"),
                                                  PipelineElement("canonicalize")]


def test_upstream_text_keeps_nesting():
    element = PipelineElement("canonicalize", "max-iterations=2", ("func.func",))
    assert element.upstream_text() == "func.func(canonicalize{max-iterations=2})"


@pytest.mark.parametrize("text", ["builtin.module(cse", "cse)", "func.func(cse){x=1}", "cse cse"])
def test_malformed_pipelines(text):
    with pytest.raises(PipelineError):
        parse_pipeline(text)


def test_options_are_dataclass_fields():
    p = get_pass("nn-canonicalize", "max-iterations=3 remove-unused=false")
    assert (p.max_iterations, p.remove_unused) == (3, False)
    assert str(p) == "nn-canonicalize{max-iterations=3 remove-unused=false}"
    assert get_pass("nn-canonicalize").max_iterations == 10


def test_bad_options():
    with pytest.raises(OptionError, match="has no option 'depth'"):
        get_pass("nn-canonicalize", "depth=2")
    with pytest.raises(OptionError, match="expects bool"):
        get_pass("nn-canonicalize", "remove-unused=maybe")


def test_every_pass_is_documented():
    for argument, cls in all_passes().items():
        assert issubclass(cls, Pass)
        assert cls.argument == argument
        assert cls.summary(), f"{argument} has no summary"


def test_resolve_mixes_lamina_and_upstream():
    resolved = resolve(parse_pipeline("func.func(nn-canonicalize, cse), canonicalize"),
                       make_context())
    assert isinstance(resolved[0], Pass)
    assert resolved[1:] == ["func.func(cse)", "canonicalize"]


def test_resolve_rejects_unknown_pass():
    with pytest.raises(PipelineError, match="unknown pass 'no-such-pass'"):
        resolve(parse_pipeline("no-such-pass"), make_context())


def test_resolve_suggests_near_pass_names():
    with pytest.raises(PipelineError, match=r"unknown pass 'nn-fusee'; did you mean 'nn-fuse'\?"):
        resolve(parse_pipeline("nn-fusee"), make_context())
    with pytest.raises(PipelineError, match=r"unknown pass 'csee'; did you mean 'cse'\?"):
        resolve(parse_pipeline("func.func(csee)"), make_context())
    with pytest.raises(PipelineError, match=r"unknown pass 'xyzzy'$"):
        resolve(parse_pipeline("xyzzy"), make_context())


@pytest.mark.parametrize("anchor", ["func.func", "builtin.module", "any"])
def test_deep_nesting_is_an_error(anchor):
    text = f"{anchor}(" * 5000 + "cse" + ")" * 5000
    with pytest.raises(PipelineError, match=r"pipeline nested more than 32 deep at position "
                                            r"\d+ of '.{160}\.\.\.'$"):
        parse_pipeline(text)
    assert len(parse_pipeline("builtin.module(" + "any(" * 31 + "cse" + ")" * 32)) == 1


def test_deep_pipeline_on_the_command_line():
    add = os.path.join(os.path.dirname(__file__), "..", "lamina-opt", "Inputs", "add.mlir")
    text = "builtin.module(" + "func.func(" * 5000 + "cse" + ")" * 5001
    result = subprocess.run([os.path.join(os.path.dirname(sys.executable), "lamina-opt"), add,
                             "-p", text], capture_output=True, text=True)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("lamina-opt: error: pipeline nested more than 32 deep")
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr


def test_root_anchor_is_checked():
    with pytest.raises(PipelineError, match="the pipeline runs on 'builtin.module', but "
                                            r"'func.func\(...\)' is anchored on 'func.func'"):
        parse_pipeline("func.func(cse)", root="builtin.module")
    assert parse_pipeline("builtin.module(func.func(cse))", root="builtin.module") == [
        PipelineElement("cse", "", ("func.func",))]
    assert parse_pipeline("cse, canonicalize", root="builtin.module")[1].name == "canonicalize"


def test_passes_registered_later_are_listed():
    import dataclasses

    from lamina.pass_registry import REGISTRY, register_pass
    before = all_passes()

    @register_pass
    @dataclasses.dataclass
    class LateTestPass(Pass):
        """A pass registered after the pass packages were scanned."""
        argument = "test-late-pass"

        def run(self, op):
            pass

    try:
        assert set(all_passes()) == set(before) | {"test-late-pass"}
        assert isinstance(get_pass("test-late-pass"), LateTestPass)
    finally:
        del REGISTRY["test-late-pass"]
    with pytest.raises(KeyError):
        get_pass("test-late-pass")


def test_parse_tool_diagnostics():
    from lamina.pass_pipeline import parse_tool_diagnostics
    stderr = """model.mlir:4:8: error: op was not bufferized
  %b = shard.shard %a to %s : tensor<8xf32>
       ^
model.mlir:4:8: note: see current operation
<unknown>:0: error: optimization level out of range
mlir-opt: Assertion `x' failed.
"""
    first, second = parse_tool_diagnostics(stderr)
    assert (first.filename, first.line, first.col, first.message) == (
        "model.mlir", 4, 8, "op was not bufferized")
    assert [n.message for n in first.notes] == ["see current operation"]
    assert (second.filename, second.severity) == (None, "error")
    assert second.message == "optimization level out of range\nmlir-opt: Assertion `x' failed."


def test_every_pass_lives_in_its_home_module():
    """A pass is found by its flag without importing the others
    (`find_pass`): each of Lamina's passes is defined in the module its
    flag names."""
    from lamina.pass_registry import home_modules
    for argument, cls in all_passes().items():
        if cls.__module__.startswith(("lamina.passes.", "lamina.lowering.")):
            assert cls.__module__ in home_modules(argument), (argument, cls.__module__)


def test_one_pass_imports_its_module_only():
    """Resolving a pipeline imports the modules of the Lamina passes it
    names, not every pass's."""
    code = ("import sys; from lamina.context import make_context; "
            "from lamina.pass_pipeline import parse_pipeline, resolve; "
            "resolve(parse_pipeline('nn-canonicalize,cse'), make_context()); "
            "print(sorted(m for m in sys.modules if m.startswith('lamina.passes.')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert "lamina.passes.nn_canonicalize" in result.stdout
    assert "lamina.passes.cpu_apply_schedule" not in result.stdout
    assert "lamina.passes.hw_check_hazards" not in result.stdout


def test_find_pass_tells_upstream_passes_from_lamina_ones():
    from lamina.pass_registry import find_pass
    assert find_pass("convert-nn-to-hw").argument == "convert-nn-to-hw"
    assert find_pass("convert-nn-to-linalg").argument == "convert-nn-to-linalg"
    assert find_pass("canonicalize") is None
    assert find_pass("convert-scf-to-cf") is None
