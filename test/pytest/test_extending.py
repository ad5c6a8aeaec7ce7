"""docs/extending.md, every section but "A hardware instruction"
(test_extending_hw.py runs that one): every code block runs.

Blocks run in document order in one fresh directory: a block whose first
line names a file (`# hardswish.py: ...`, `// layer.mlir`, `# pyproject.toml`)
is written there; other python blocks run as scripts there; each line of a
sh block runs with Lamina's tools on PATH and must exit 0, printing every
`# ...` line that follows it. Besides, the tutorials keep to their sizes:
the op in at most 30 lines, the pass in at most 40.
"""

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from lamina.targets.cuda import find_ptxas

DOC = Path(__file__).resolve().parents[2] / "docs" / "extending.md"
OTHER_SECTION = "## A hardware instruction"


def blocks() -> list[tuple[str, str]]:
    """(language, text) of each fenced block outside the hw-instruction section."""
    text = DOC.read_text()
    start = text.index(OTHER_SECTION + "\n")
    end = text.find("\n## ", start + len(OTHER_SECTION))
    text = text[:start] + (text[end:] if end != -1 else "")
    return re.findall(r"```(\w+)\n(.*?)```", text, re.S)


def file_name(block: str) -> str | None:
    match = re.match(r"(?:#|//) ([\w/.-]+\.(?:py|mlir|toml))\b", block)
    return match.group(1) if match else None


def commands(block: str) -> list[tuple[str, list[str]]]:
    """The commands of a shell block, each with the lines it must print."""
    found = []
    for line in block.splitlines():
        if line.startswith("# "):
            found[-1][1].append(line[2:])
        elif line.strip():
            found.append((line, []))
    return found


def test_blocks_run(tmp_path):
    if find_ptxas() is None:
        pytest.skip("the op tutorial assembles PTX: needs ptxas (the cuda extra)")
    env = dict(os.environ, PATH=os.pathsep.join([os.path.dirname(sys.executable),
                                                 os.environ.get("PATH", "")]))
    env.pop("PYTHONPATH", None)
    found = blocks()
    assert [language for language, _ in found] == [
        "python", "mlir", "sh", "python", "python", "mlir", "sh", "python", "mlir", "sh",
        "python", "toml", "python", "python", "sh", "python", "sh"]
    for language, block in found:
        name = file_name(block)
        if language == "sh":
            for command, expected in commands(block):
                result = subprocess.run(command, shell=True, cwd=tmp_path, env=env,
                                        capture_output=True, text=True, timeout=120)
                output = result.stdout + result.stderr
                assert result.returncode == 0, f"{command}\n{output}"
                for line in expected:
                    assert line in output, f"{command}: expected '{line}' in\n{output}"
        elif name is not None:
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(block)
            if language == "toml":
                tomllib.loads(block)
        else:
            subprocess.run([sys.executable, "-c", block], cwd=tmp_path, env=env, check=True,
                           timeout=60)
    assert (tmp_path / "layer.cubin").stat().st_size > 0


def _block(name: str) -> str:
    return next(block for _, block in blocks() if file_name(block) == name)


def test_the_op_fits_in_30_lines_and_the_pass_in_40():
    assert len(_block("hardswish.py").splitlines()) <= 30
    assert len(_block("nn_div_sqrt_to_rsqrt.py").splitlines()) <= 40

