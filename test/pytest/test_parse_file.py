"""`lamina.parse_file` reads a file; `lamina.parse` takes MLIR text, a
pathlib.Path, or the name of a file that exists, and a file name of no file
is an error that says so instead of a parse of the name as MLIR."""

import os
import pathlib

import pytest

import lamina

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MLP = os.path.join(ROOT, "examples", "mlp.mlir")


def _locations(module) -> str:
    return module.operation.get_asm(enable_debug_info=True)


def test_parse_file_takes_a_str_or_a_path():
    for path in (MLP, pathlib.Path(MLP)):
        module = lamina.parse_file(path)
        assert "nn.matmul" in str(module)
        assert f'loc("{MLP}":' in _locations(module)


def test_parse_takes_a_path_and_text():
    assert f'loc("{MLP}":' in _locations(lamina.parse(pathlib.Path(MLP)))
    with open(MLP) as f:
        assert str(lamina.parse(f.read())) == str(lamina.parse(MLP))


def test_parse_file_of_a_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.mlir"):
        lamina.parse_file(tmp_path / "missing.mlir")


@pytest.mark.parametrize("name", ["model.mlir", "models/model.mlir", "model"])
def test_a_file_name_of_no_file_is_not_parsed_as_mlir(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(lamina.CompileError) as caught:
        lamina.parse(name)
    message = str(caught.value)
    assert f"'{name}' is not MLIR text but a file name, and there is no such file in " \
           f"{tmp_path}: did you mean to read a file? lamina.parse_file(path) reads one" in message
    assert "Dialect" not in message and "not found" not in message


def test_text_with_an_error_is_still_reported_as_mlir():
    with pytest.raises(lamina.CompileError) as caught:
        lamina.parse("func.func @f(")
    assert str(caught.value).startswith("<string>:1:") and "file name" not in str(caught.value)
