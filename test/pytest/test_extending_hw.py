"""docs/extending.md, section "A hardware instruction": every code block runs.

The section's blocks, in order: the plugin `popc.py`, the hw program
`popc.mlir`, the commands that emulate it and compile it to PTX, the NumPy
check of the counts, `fp8.mlir` and the commands that emulate it and show
hw-check's error. Shell lines run in a fresh directory with Lamina's tools
on PATH; the `# ...` lines after a command are what it must print, and a
command whose expected output is an error must exit with status 1.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lamina.targets.cuda import find_ptxas

DOC = Path(__file__).resolve().parents[2] / "docs" / "extending.md"
SECTION = "## A hardware instruction"


def section_blocks() -> list[tuple[str, str]]:
    """(language, text) of each fenced block of the section."""
    text = DOC.read_text()
    start = text.index(SECTION + "\n")
    end = text.find("\n## ", start + len(SECTION))
    body = text[start:end if end != -1 else len(text)]
    return re.findall(r"```(\w+)\n(.*?)```", body, re.S)


def file_name(block: str) -> str | None:
    """The file a block is saved as, named by its first comment (None: a
    block that is run, not saved)."""
    match = re.match(r"(?:#|//) (\S+\.(?:py|mlir))\b", block)
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


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("hw_instruction")
    env = dict(os.environ, PATH=os.pathsep.join([os.path.dirname(sys.executable),
                                                 os.environ.get("PATH", "")]))
    return directory, env


def run_shell(block: str, directory: Path, env: dict) -> None:
    for command, expected in commands(block):
        result = subprocess.run(command, shell=True, cwd=directory, env=env,
                                capture_output=True, text=True, timeout=120)
        output = result.stdout + result.stderr
        failing = any("error:" in line for line in expected)
        assert result.returncode == (1 if failing else 0), f"{command}\n{output}"
        assert "Traceback" not in output, output
        for line in expected:
            assert line in output, f"{command}: expected '{line}' in\n{output}"


def test_section_blocks_run(workdir):
    directory, env = workdir
    blocks = section_blocks()
    assert [language for language, _ in blocks] == ["python", "mlir", "sh", "python", "mlir",
                                                    "sh"]
    for language, block in blocks:
        if language == "sh":
            run_shell(block, directory, env)
        elif file_name(block) is not None:
            (directory / file_name(block)).write_text(block)
        else:
            subprocess.run([sys.executable, "-c", block], cwd=directory, env=env, check=True,
                           timeout=60)
    assert not (directory / "fp8.ptx").exists()


def test_plugin_fits_in_40_lines():
    language, block = section_blocks()[0]
    assert language == "python" and len(block.splitlines()) <= 40


@pytest.mark.skipif(find_ptxas() is None, reason="needs ptxas (the cuda extra)")
def test_ptxas_accepts_the_plugins_instruction(workdir):
    directory, env = workdir
    if not (directory / "popc.ptx").exists():
        test_section_blocks_run(workdir)
    subprocess.run([find_ptxas(), "-arch=sm_80", "popc.ptx", "-o", "popc.cubin"],
                   cwd=directory, check=True, timeout=60)
    assert (directory / "popc.cubin").stat().st_size > 0


def test_constraints_must_match_the_operand_types():
    from lamina.dialects.opdef import Operand
    from lamina.dialects.hw_instructions import Instruction, Reg

    with pytest.raises(TypeError, match=r"constraints '=r,r' do not match the operands' "
                                        r"element types \(f32 -> i32: '=r,f'\)"):
        class BadOp(Instruction, name="bad_constraints"):
            x: Operand[Reg("f32")]
            out: Operand[Reg("i32")]
            ptx = "cvt.rzi.s32.f32 $0, $1;"
            constraints = "=r,r"

            def emulate(x):
                return x


def test_the_last_operand_is_out():
    from lamina.dialects.opdef import Operand
    from lamina.dialects.hw_instructions import Instruction, Reg

    with pytest.raises(TypeError, match="an instruction's last operand is 'out'"):
        class NoOut(Instruction, name="no_out"):
            x: Operand[Reg("i32")]
            y: Operand[Reg("i32")]
            ptx = "mov.b32 $0, $1;"
            constraints = "=r,r"

            def emulate(x):
                return x


def test_instructions_take_tiles_with_a_register_class():
    from lamina.dialects.opdef import Operand
    from lamina.dialects.hw_instructions import Instruction, Reg

    with pytest.raises(TypeError, match="operand 'x' is a tile of i8; instructions take tiles "
                                        "of i16, f16, bf16, i32, f32"):
        class ByteOp(Instruction, name="byte_tiles"):
            x: Operand[Reg("i8")]
            out: Operand[Reg("i32")]
            ptx = "cvt.u32.u8 $0, $1;"
            constraints = "=r,c"

            def emulate(x):
                return x


ARCH_SPECIFIC_PLUGIN = '''
from lamina.dialects.opdef import Operand
from lamina.dialects.hw_instructions import Instruction, Reg


class HopperOnlyOp(Instruction, name="hopper_only"):
    """An instruction of sm_90a only (for the test, a move)."""

    x: Operand[Reg("i32")]
    out: Operand[Reg("i32")]
    ptx = "mov.b32 $0, $1;"
    constraints = "=r,r"
    needs = ("sm_90a", (8, 0))

    def emulate(x):
        return x
'''

ARCH_SPECIFIC_KERNEL = '''func.func @kernel() attributes {hw.kernel} {
  %x = "hw.alloc"() : () -> memref<16x32xi32, #gpu.address_space<private>>
  "hw.hopper_only"(%x, %x) : (memref<16x32xi32, #gpu.address_space<private>>, memref<16x32xi32, #gpu.address_space<private>>) -> ()
  return
}
'''


@pytest.mark.parametrize("chip, error", [
    ("sm_89", "kernel.mlir:3:3: error: 'hw.hopper_only' needs sm_90a (architecture-specific); "
              "the target is sm_89"),
    ("sm_90a", None)])
def test_hw_check_on_an_architecture_specific_instruction(tmp_path, chip, error):
    (tmp_path / "hopper.py").write_text(ARCH_SPECIFIC_PLUGIN)
    (tmp_path / "kernel.mlir").write_text(ARCH_SPECIFIC_KERNEL)
    result = subprocess.run([os.path.join(os.path.dirname(sys.executable), "lamina-opt"),
                             "kernel.mlir", "--load-plugin=hopper.py", f"--hw-check=chip={chip}"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    if error is None:
        assert result.returncode == 0 and '"hw.hopper_only"' in result.stdout, result.stderr
    else:
        assert result.returncode == 1 and error in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
