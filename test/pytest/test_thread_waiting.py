"""OpenMP's workers wait briefly, then sleep, when a parallel loop ends
(lamina.targets.cpu): a program compiled for several threads sets
KMP_BLOCKTIME=50us before it runs, unless the user chose a block time; one compiled for one thread
leaves the environment alone. Each case runs in a process of its own, since
the OpenMP runtime reads the variable once."""

from __future__ import annotations

import os
import subprocess
import sys

PROGRAM = """
import os, numpy as np, lamina
text = '''func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = "nn.matmul"(%a, %b) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}'''
f = lamina.compile(text, target="cpu:threads=THREADS")
a = np.ones((64, 64), np.float32)
assert np.array_equal(f(a, a), np.full((64, 64), 64, np.float32))
print(os.environ.get("KMP_BLOCKTIME", "unset"))
"""


def _blocktime(threads: int, preset: str | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "KMP_BLOCKTIME"}
    if preset is not None:
        env["KMP_BLOCKTIME"] = preset
    done = subprocess.run([sys.executable, "-c", PROGRAM.replace("THREADS", str(threads))], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_workers_wait_briefly_when_a_program_has_threads():
    assert _blocktime(2) == "50us"


def test_the_users_block_time_is_kept():
    assert _blocktime(2, "200") == "200"


def test_one_thread_leaves_the_environment_alone():
    assert _blocktime(1) == "unset"
