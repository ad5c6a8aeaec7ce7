"""The README's commands and the user guide's code blocks run.

README.md: its second command is what `.ci/run` runs, its first command
runs after the install, and every tool line of its Tools block runs on a
small model (`bad.mlir` lines fail at a located error, as they say).

docs/guide.md, block by block in document order, in a scratch directory
that holds `examples/` and the files the guide shows:

* a block whose first line names a file (`// model.mlir: ...`,
  `# my_dialect.py (continued)`) is that file, or the next part of it; all
  files are written before anything runs;
* ```python blocks that are not files run in order in one namespace (a
  guide's section may build on the blocks before it);
* every command of a ```sh block runs with the venv's tools and the wheels'
  `mlir-opt` on PATH and must succeed, except that a plain ``` block right
  after a sh block is the output of its commands: each of its lines must
  appear in that output, and the commands must fail with status 1 when it
  shows an `error:`. Installation commands (`pip install`) are not run;
* ```mlir blocks parse with `lamina.parse`, and one with `expected-error`
  comments passes `lamina-opt --split-input-file --verify-diagnostics`;
* ```toml blocks parse.

The guide runs in a subprocess (this file as a script), so that the ops,
dialects and passes it defines stay out of the test process.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GUIDE = os.path.join(ROOT, "docs", "guide.md")
README = os.path.join(ROOT, "README.md")
TOOLS = ("lamina-opt", "lamina-compile", "lamina-run", "lamina-fuzz")

_FENCE = re.compile(r"^```(\w*)\s*$")
_FILE_LINE = re.compile(r"^(?://|#)\s*([\w.-]+\.(?:mlir|py))\b")


@dataclass
class Block:
    lang: str
    text: str
    line: int  # of the opening fence, 1-based

    @property
    def file_name(self) -> str | None:
        match = _FILE_LINE.match(self.text)
        return match.group(1) if match else None

    def commands(self) -> list[str]:
        """The command lines of a sh block, without installation commands."""
        return [line for line in self.text.splitlines()
                if line.strip() and not line.lstrip().startswith("#")
                and "pip install" not in line]


def code_blocks(path: str) -> list[Block]:
    blocks, current = [], None
    with open(path) as f:
        for number, line in enumerate(f, 1):
            match = _FENCE.match(line)
            if current is None and match:
                current = Block(match.group(1), "", number)
            elif current is not None and line.rstrip() == "```":
                blocks.append(current)
                current = None
            elif current is not None:
                current.text += line
    assert current is None, f"{path}:{current.line}: unterminated code block"
    return blocks


def tool_environment() -> dict[str, str]:
    """The environment of documented commands: the venv's tools first on
    PATH, then the directories of the wheels' mlir-opt, FileCheck, ..."""
    from lamina.toolchain import tool_dirs
    directories = [os.path.dirname(sys.executable)] + tool_dirs()
    environment = dict(os.environ)
    environment["PATH"] = os.pathsep.join(directories + [environment.get("PATH", "")])
    environment.pop("LAMINA_DEBUG", None)
    return environment


def run_command(command: str, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=tool_environment(),
                          capture_output=True, text=True, timeout=300)


# ---------------------------------------------------------------------------
# The guide, run by this file as a script.


def _fail(block: Block, message: str) -> None:
    print(f"{GUIDE}:{block.line}: {block.lang or 'output'} block failed: {message}",
          file=sys.stderr)
    sys.exit(1)


def _check_output(block: Block, output: Block, results) -> None:
    text = "".join(r.stdout + r.stderr for r in results)
    for line in output.text.splitlines():
        if line.strip() and " ".join(line.split()) not in " ".join(text.split()):
            _fail(output, f"'{line}' is not in the output of the commands:\n{text}")
    expected = 1 if "error:" in output.text else 0
    for command, result in zip(block.commands(), results):
        if result.returncode != expected:
            _fail(block, f"`{command}` exited with {result.returncode}, not {expected}")


def _run_mlir(block: Block, directory: str) -> None:
    import lamina
    from lamina.diagnostics import run_tool
    from lamina.tools import lamina_opt
    if "expected-error" in block.text:
        path = os.path.join(directory, f".guide-block-{block.line}.mlir")
        with open(path, "w") as f:
            f.write(block.text)
        status = run_tool(lamina_opt.main, [path, "--split-input-file", "--verify-diagnostics",
                                            "-o", os.devnull], prog="lamina-opt")
        if status != 0:
            _fail(block, "its expected diagnostics do not match")
        return
    try:
        lamina.parse(block.text)
    except lamina.CompileError as error:
        _fail(block, f"it does not parse:\n{error}")


def _parse_toml(block: Block) -> None:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        return
    try:
        tomllib.loads(block.text)
    except tomllib.TOMLDecodeError as error:
        _fail(block, str(error))


def run_guide(directory: str) -> None:
    """Runs every block of the guide in `directory`; exits 1 at the first
    failure, naming the block's line."""
    import traceback
    import types

    blocks = code_blocks(GUIDE)
    files: dict[str, str] = {}
    for block in blocks:
        if block.file_name:
            files[block.file_name] = files.get(block.file_name, "") + block.text
    for name, text in files.items():
        with open(os.path.join(directory, name), "w") as f:
            f.write(text)
    os.chdir(directory)
    module = types.ModuleType("guide")
    sys.modules["guide"] = module
    for index, block in enumerate(blocks):
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        if block.lang == "":
            if index == 0 or blocks[index - 1].lang != "sh":
                _fail(block, "an output block must follow the sh block whose output it is")
        elif block.lang == "sh":
            results = [run_command(command, directory) for command in block.commands()]
            if following is not None and following.lang == "":
                _check_output(block, following, results)
                continue
            for command, result in zip(block.commands(), results):
                if result.returncode != 0:
                    _fail(block, f"`{command}` exited with {result.returncode}:\n"
                                 f"{result.stdout}{result.stderr}")
        elif block.lang == "python" and block.file_name:
            pass  # a file, run by the commands and blocks that use it
        elif block.lang == "python":
            try:
                # Padded so that tracebacks give the guide's line numbers.
                code = compile("\n" * block.line + block.text, GUIDE, "exec")
                exec(code, module.__dict__)
            except BaseException:
                _fail(block, traceback.format_exc())
        elif block.lang == "mlir":
            _run_mlir(block, directory)
        elif block.lang == "toml":
            _parse_toml(block)
        else:
            _fail(block, f"the test does not know how to run a block of '{block.lang}'")
        print(f"{GUIDE}:{block.line}: {block.lang or 'output'} block ok", flush=True)


def test_guide_runs(tmp_path):
    shutil.copytree(os.path.join(ROOT, "examples"), tmp_path / "examples")
    result = subprocess.run([sys.executable, os.path.abspath(__file__), str(tmp_path)],
                            env=tool_environment(), capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr + "\n(last output)\n" + result.stdout[-4000:]


def test_guide_files_are_used():
    """Every file the guide shows is used by one of its commands or blocks."""
    blocks = code_blocks(GUIDE)
    names = {b.file_name for b in blocks if b.file_name}
    users = "".join(b.text for b in blocks if b.lang in ("sh", "python") and not b.file_name)
    unused = [name for name in sorted(names) if name not in users]
    assert not unused, f"files shown but never used: {unused}"


def test_paths_named_in_the_docs_exist():
    """The files the README and the guide point to (`dialects/nn.py`) exist,
    and so does every folder of the README's layout."""
    named = re.compile(r"`([\w.-]+(?:/[\w.-]+)+\.(?:py|md|mlir|test|toml))`")
    for document in (README, GUIDE):
        with open(document) as f:
            text = f.read()
        missing = [p for p in named.findall(text) if not os.path.exists(os.path.join(ROOT, p))]
        assert not missing, f"{document} names missing files: {missing}"
    layout = next(b for b in code_blocks(README) if b.lang == "" and "pyproject.toml" in b.text)
    entries = [line.split()[0] for line in layout.text.splitlines() if not line.startswith(" ")]
    missing = [e for e in entries if not os.path.exists(os.path.join(ROOT, e))]
    assert not missing, f"README's layout names missing paths: {missing}"


# ---------------------------------------------------------------------------
# The README.


# f16 matmul + bias + relu: what the cuda targets compile, and the CPU too.
MODEL = """\
func.func @main(%x: tensor<64x48xf16>, %w: tensor<48x40xf16>, %b: tensor<40xf16>) -> tensor<64x40xf16> {
  %0 = "nn.matmul"(%x, %w) : (tensor<64x48xf16>, tensor<48x40xf16>) -> tensor<64x40xf16>
  %1 = "nn.add"(%0, %b) : (tensor<64x40xf16>, tensor<40xf16>) -> tensor<64x40xf16>
  %2 = "nn.relu"(%1) : (tensor<64x40xf16>) -> tensor<64x40xf16>
  return %2 : tensor<64x40xf16>
}
"""

BAD = """\
func.func @main(%x: tensor<4x8xf32>, %w: tensor<9x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'nn.matmul' op matmul contraction dims differ: 8 vs 9}}
  %0 = "nn.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<9x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
"""

MY_OPS = '''\
import numpy as np

from lamina.dialects import nn


class HardSigmoidOp(nn.UnaryElementwiseOp, name="hard_sigmoid"):
    """Piecewise-linear sigmoid: `clip(x / 6 + 0.5, 0, 1)`.

    Example: %y = "nn.hard_sigmoid"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    def compute(self, x):
        return np.clip(x / 6 + 0.5, 0, 1)
'''


def _readme_blocks() -> list[Block]:
    return code_blocks(README)


def test_readme_starts_with_the_two_commands():
    with open(README) as f:
        lines = f.read().splitlines()
    assert lines[2] == "```sh" and lines[5] == "```", "README must open with the two commands"
    install_and_run, install_and_test = lines[3], lines[4]
    assert install_and_run.startswith("python3 -m venv .venv && .venv/bin/pip install -e . && ")
    with open(os.path.join(ROOT, ".ci", "run")) as f:
        ci = [line for line in f.read().splitlines() if line and not line.startswith("#")]
    assert ci[-1] == install_and_test, ".ci/run must run the README's test command verbatim"


def test_readme_main_job_runs():
    command = _readme_blocks()[0].text.splitlines()[0]
    steps = [s.strip() for s in command.split("&&")
             if "pip install" not in s and "python3 -m venv" not in s]
    assert steps and all(s.startswith(".venv/bin/") for s in steps), steps
    bin_dir = os.path.dirname(sys.executable)
    for step in steps:
        result = run_command(step.replace(".venv/bin/", bin_dir + "/"), ROOT)
        assert result.returncode == 0, result.stdout + result.stderr
        if "--check" in step:
            assert "check: all results match the reference" in result.stdout


def test_readme_tools_run(tmp_path):
    tools_block = next(b for b in _readme_blocks() if b.lang == "sh" and "lamina-compile" in b.text
                       and "--list-passes" in b.text)
    (tmp_path / "model.mlir").write_text(MODEL)
    (tmp_path / "bad.mlir").write_text(BAD)
    (tmp_path / "my_ops.py").write_text(MY_OPS)
    commands = [line.split("  #")[0].strip() for line in tools_block.commands()]
    assert all(c.split()[0] in TOOLS for c in commands), commands
    for command in commands:
        result = run_command(command, str(tmp_path))
        output = result.stdout + result.stderr
        if "bad.mlir" in command and "--verify-diagnostics" not in command:
            assert result.returncode == 1, f"{command}: {output}"
            assert re.search(r"^bad\.mlir:\d+:\d+: error: ", result.stderr, re.M), output
        elif command.startswith("lamina-fuzz"):
            # Its exit status says whether it found anything: 1 is a finding.
            assert result.returncode in (0, 1), f"{command}: {output}"
            assert re.search(r"^lamina-fuzz: \d+ programs in ", output, re.M), output
        else:
            assert result.returncode == 0, f"{command}: {output}"
        assert "Traceback" not in output


if __name__ == "__main__":
    run_guide(sys.argv[1])
