"""The README and the user guide run as written.

Both documents run the same way, block by block in document order, in a
scratch directory that holds a copy of `examples/` and `.venv` (a link to
this venv, so that `. .venv/bin/activate` and `.venv/bin/lamina-run` work
as the README writes them):

* a block whose first line names a file (`// bad.mlir: ...`,
  `# my_dialect.py (continued)`) is that file, or the next part of it; all
  files are written before anything runs;
* every command of a ```sh block runs as written, with the venv active
  (its tools first on PATH; the wheels' mlir-opt is not on PATH, as after
  a real install) and must succeed, except that a plain ``` block right
  after a sh block is the output of its commands: each of its lines must
  appear in that output, and the commands must fail with status 1 when it
  shows an `error:`. Installation commands (`python3 -m venv`, `pip
  install`) are not run;
* a ```python block runs in a namespace of its own, unless its first line
  says `# continued from the block above`, when it runs in that block's
  (a guide's section may build on the block before it, and says so);
* ```mlir blocks parse with `lamina.parse`, and one with `expected-error`
  comments passes `lamina-opt --split-input-file --verify-diagnostics`;
* ```toml blocks parse; ```text blocks (listings) do not run.

A command (or a python block's first line) that needs what this machine
may lack ends in a visible `# requires: FEATURE`, one of the lit features
of test/lit.cfg.py: `mpi` (an `mpiexec` command), `ptxas` (`--emit=cubin`),
`cuda-gpu` (a cuda target run without `--emulate`), `aarch64-run` (an AArch64
target's `lamina-run`, emulated). The marker must be
justified (the feature known, the command of its kind); where the feature
is present the command runs like any other, and where it is absent it is
reported as not run.

The documents run in a subprocess (this file as a script), so that the ops,
dialects and passes they define stay out of the test process.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GUIDE = os.path.join(ROOT, "docs", "guide.md")
README = os.path.join(ROOT, "README.md")

_FENCE = re.compile(r"^```(\w*)\s*$")
_FILE_LINE = re.compile(r"^(?://|#)\s*([\w.-]+\.(?:mlir|py))\b")
_REQUIRES = re.compile(r"#\s*requires:\s*([\w-]+)\s*$")
_CONTINUED = "# continued from the block above"
_INSTALL = ("pip install", "python3 -m venv")


# What each feature's commands look like: a marker on any other command is
# not justified.
def _needs_mpi(command: str) -> bool:
    return "mpiexec" in command


def _needs_ptxas(command: str) -> bool:
    return "--emit=cubin" in command or "ptxas" in command


def _needs_cuda_gpu(command: str) -> bool:
    return ("cuda" in command or "gpu" in command) and "--emulate" not in command \
        and not re.search(r"--emit=(?!cubin)", command)


def _needs_aarch64_run(command: str) -> bool:
    return ("lamina-run" in command and ("aarch64" in command or "neoverse" in command)
            or "qemu-aarch64" in command)


FEATURE_COMMANDS = {"mpi": _needs_mpi, "ptxas": _needs_ptxas, "cuda-gpu": _needs_cuda_gpu,
                    "aarch64-run": _needs_aarch64_run}


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
                and not any(step in line for step in _INSTALL)]

    @property
    def continued(self) -> bool:
        return self.text.startswith(_CONTINUED)


def requirement(line: str) -> str | None:
    """The feature a command (or a python block's first line) is marked
    with, or None."""
    match = _REQUIRES.search(line)
    return match.group(1) if match else None


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


def available_features() -> set[str]:
    """The features of FEATURE_COMMANDS this machine has, found as
    test/lit.cfg.py finds them."""
    from lamina.targets.cuda import find_ptxas
    found = set()
    path = tool_environment()["PATH"]
    if shutil.which("mpiexec", path=path):
        found.add("mpi")
    if find_ptxas():
        found.add("ptxas")
    cross_gcc = shutil.which("aarch64-linux-gnu-gcc", path=path)
    if shutil.which("qemu-aarch64", path=path) and cross_gcc:
        libc = subprocess.run([cross_gcc, "-print-file-name=libc.a"], capture_output=True,
                              text=True).stdout.strip()
        if os.path.isabs(libc):
            found.add("aarch64-run")
    if shutil.which("nvidia-smi", path=path):
        try:
            listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=20)
            if listed.returncode == 0:
                found.add("cuda-gpu")
        except (OSError, subprocess.TimeoutExpired):
            pass
    return found


def tool_environment() -> dict[str, str]:
    """The environment of documented commands: the venv active (its tools
    first on PATH), nothing else added."""
    venv = sys.prefix
    environment = dict(os.environ)
    environment["PATH"] = os.pathsep.join([os.path.join(venv, "bin"),
                                           environment.get("PATH", "")])
    environment["VIRTUAL_ENV"] = venv
    environment.pop("LAMINA_DEBUG", None)
    return environment


def run_command(command: str, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=tool_environment(),
                          capture_output=True, text=True, timeout=300)


def prepare_directory(directory: str) -> None:
    """The scratch directory of a document: examples/ and the venv."""
    shutil.copytree(os.path.join(ROOT, "examples"), os.path.join(directory, "examples"))
    os.symlink(sys.prefix, os.path.join(directory, ".venv"))


# ---------------------------------------------------------------------------
# A document, run by this file as a script.


class _Run:
    def __init__(self, document: str):
        self.document = document
        self.features = available_features()

    def fail(self, block: Block, message: str) -> None:
        print(f"{self.document}:{block.line}: {block.lang or 'output'} block failed: {message}",
              file=sys.stderr)
        sys.exit(1)

    def justified(self, block: Block, command: str) -> bool:
        """Whether `command` runs here: unmarked, or marked with a feature
        this machine has. A marker that is not justified fails."""
        feature = requirement(command)
        if feature is None:
            return True
        if feature not in FEATURE_COMMANDS:
            self.fail(block, f"`{command}`: unknown feature '{feature}' (known: "
                             f"{', '.join(FEATURE_COMMANDS)})")
        if not FEATURE_COMMANDS[feature](command):
            self.fail(block, f"`{command}` is marked '# requires: {feature}' but is not a "
                             f"command that needs {feature}")
        if feature in self.features:
            return True
        print(f"{self.document}:{block.line}: not run here (no {feature}): {command}",
              flush=True)
        return False

    def check_output(self, block: Block, output: Block, commands, results) -> None:
        text = "".join(r.stdout + r.stderr for r in results)
        for line in output.text.splitlines():
            if line.strip() and " ".join(line.split()) not in " ".join(text.split()):
                self.fail(output, f"'{line}' is not in the output of the commands:\n{text}")
        expected = 1 if "error:" in output.text else 0
        for command, result in zip(commands, results):
            if result.returncode != expected:
                self.fail(block, f"`{command}` exited with {result.returncode}, not {expected}")

    def run_mlir(self, block: Block, directory: str) -> None:
        import lamina
        from lamina.diagnostics import run_tool
        from lamina.tools import lamina_opt
        if "expected-error" in block.text:
            path = os.path.join(directory, f".doc-block-{block.line}.mlir")
            with open(path, "w") as f:
                f.write(block.text)
            status = run_tool(lamina_opt.main, [path, "--split-input-file",
                                                "--verify-diagnostics", "-o", os.devnull],
                              prog="lamina-opt")
            if status != 0:
                self.fail(block, "its expected diagnostics do not match")
            return
        try:
            lamina.parse(block.text)
        except lamina.CompileError as error:
            self.fail(block, f"it does not parse:\n{error}")

    def parse_toml(self, block: Block) -> None:
        try:
            import tomllib
        except ImportError:  # Python 3.10
            return
        try:
            tomllib.loads(block.text)
        except tomllib.TOMLDecodeError as error:
            self.fail(block, str(error))

    def run(self, directory: str) -> None:
        """Runs every block of the document in `directory`; exits 1 at the
        first failure, naming the block's line."""
        import traceback
        import types

        blocks = code_blocks(self.document)
        files: dict[str, str] = {}
        for block in blocks:
            if block.file_name:
                files[block.file_name] = files.get(block.file_name, "") + block.text
        for name, text in files.items():
            with open(os.path.join(directory, name), "w") as f:
                f.write(text)
        os.chdir(directory)
        namespace = None
        for index, block in enumerate(blocks):
            following = blocks[index + 1] if index + 1 < len(blocks) else None
            if block.lang == "":
                if index == 0 or blocks[index - 1].lang != "sh":
                    self.fail(block, "an output block must follow the sh block whose output "
                                     "it is")
            elif block.lang == "sh":
                commands = [c for c in block.commands() if self.justified(block, c)]
                results = [run_command(command, directory) for command in commands]
                if following is not None and following.lang == "":
                    if len(commands) == len(block.commands()):
                        self.check_output(block, following, commands, results)
                    else:   # some did not run: the output is not all there
                        expected = 1 if "error:" in following.text else 0
                        for command, result in zip(commands, results):
                            if result.returncode != expected:
                                self.fail(block, f"`{command}` exited with "
                                                 f"{result.returncode}, not {expected}")
                    continue
                for command, result in zip(commands, results):
                    if result.returncode != 0:
                        self.fail(block, f"`{command}` exited with {result.returncode}:\n"
                                         f"{result.stdout}{result.stderr}")
            elif block.lang == "python" and block.file_name:
                pass  # a file, run by the commands and blocks that use it
            elif block.lang == "python":
                if not self.justified(block, block.text.splitlines()[0]):
                    continue
                if not block.continued or namespace is None:
                    if block.continued:
                        self.fail(block, "it says it continues a block, but no python block "
                                         "runs before it")
                    module = types.ModuleType("document")
                    sys.modules["document"] = module
                    namespace = module.__dict__
                try:
                    # Padded so that tracebacks give the document's line numbers.
                    code = compile("\n" * block.line + block.text, self.document, "exec")
                    exec(code, namespace)
                except BaseException:
                    self.fail(block, traceback.format_exc())
            elif block.lang == "mlir":
                self.run_mlir(block, directory)
            elif block.lang == "toml":
                self.parse_toml(block)
            elif block.lang == "text":
                continue  # a listing (the README's layout), nothing to run
            else:
                self.fail(block, f"the test does not know how to run a block of '{block.lang}'")
            print(f"{self.document}:{block.line}: {block.lang or 'output'} block ok", flush=True)


def _run_document(document: str, tmp_path) -> None:
    prepare_directory(str(tmp_path))
    result = subprocess.run([sys.executable, os.path.abspath(__file__), document, str(tmp_path)],
                            env=tool_environment(), capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, result.stderr + "\n(last output)\n" + result.stdout[-4000:]


def test_guide_runs(tmp_path):
    _run_document(GUIDE, tmp_path)


def test_readme_runs(tmp_path):
    _run_document(README, tmp_path)


@pytest.mark.parametrize("document", [README, GUIDE])
def test_documents_files_are_used(document):
    """Every file a document shows is used by one of its commands or blocks."""
    blocks = code_blocks(document)
    names = {b.file_name for b in blocks if b.file_name}
    users = "".join(b.text for b in blocks if b.lang in ("sh", "python") and not b.file_name)
    unused = [name for name in sorted(names) if name not in users]
    assert not unused, f"files shown but never used: {unused}"


@pytest.mark.parametrize("document", [README, GUIDE])
def test_requirement_markers_name_features_of_their_commands(document):
    """Every `# requires:` marker names a known feature and sits on a
    command of that feature's kind (the run checks it too, but only on the
    blocks it reaches)."""
    for block in code_blocks(document):
        lines = block.commands() if block.lang == "sh" else block.text.splitlines()[:1]
        for line in lines:
            feature = requirement(line)
            if feature is not None:
                assert feature in FEATURE_COMMANDS, (block.line, line)
                assert FEATURE_COMMANDS[feature](line), (block.line, line)


def test_a_requirement_marker_must_be_justified():
    assert _needs_mpi("mpiexec -n 2 lamina-run sharded.mlir --distributed --random")
    assert not _needs_mpi("lamina-run examples/mlp.mlir --random")
    assert _needs_ptxas("lamina-compile gemm.mlir --target=cuda:sm_90a --emit=cubin -o k.cubin")
    assert not _needs_ptxas("lamina-compile gemm.mlir --target=cuda:sm_90a --emit=ptx")
    assert _needs_cuda_gpu("lamina-run gemm.mlir --target=cuda:sm_90a --random --check")
    assert not _needs_cuda_gpu("lamina-run gemm.mlir --target=cuda:sm_80 --emulate --random")
    assert not _needs_cuda_gpu("lamina-compile gemm.mlir --target=cuda:sm_90a --emit=ptx")


def test_paths_named_in_the_docs_exist():
    """The files the README and the guide point to (`dialects/nn.py`) exist,
    and so does every folder of the README's layout."""
    named = re.compile(r"`([\w.-]+(?:/[\w.-]+)+\.(?:py|md|mlir|test|toml))`")
    for document in (README, GUIDE):
        with open(document) as f:
            text = f.read()
        missing = [p for p in named.findall(text) if not os.path.exists(os.path.join(ROOT, p))]
        assert not missing, f"{document} names missing files: {missing}"
    layout = next(b for b in code_blocks(README) if b.lang == "text" and "pyproject.toml" in b.text)
    entries = [line.split()[0] for line in layout.text.splitlines() if not line.startswith(" ")]
    missing = [e for e in entries if not os.path.exists(os.path.join(ROOT, e))]
    assert not missing, f"README's layout names missing paths: {missing}"


# ---------------------------------------------------------------------------
# The README.


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


if __name__ == "__main__":
    _Run(sys.argv[1]).run(sys.argv[2])
