"""`lamina.jit` called from several threads: one compile per signature,
the other callers wait for it, and no thread's compile disturbs another's.
Run in a subprocess, so that an abort in MLIR fails the test instead of
ending pytest."""

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent('''
    import sys
    import threading

    import numpy as np

    import lamina
    from lamina import nn

    # Switching threads often makes compiles overlap inside the pass manager.
    sys.setswitchinterval(1e-5)
    ROUNDS, SHAPES, CALLS = 3, 8, 2
    failures = []
    for round in range(ROUNDS):
        traced = []

        @lamina.jit
        def mlp(x, w1, w2):
            traced.append(x.shape)
            return nn.relu(nn.matmul(nn.softmax(nn.gelu(nn.matmul(x, w1)), axis=-1), w2))

        w1 = np.random.default_rng(1).uniform(-1, 1, (16, 8)).astype(np.float32)
        w2 = np.random.default_rng(2).uniform(-1, 1, (8, 4)).astype(np.float32)

        def call(rows):
            try:
                x = np.random.default_rng(rows).uniform(-1, 1, (rows, 16)).astype(np.float32)
                for _ in range(CALLS):
                    assert mlp(x, w1, w2).shape == (rows, 4)
            except Exception as error:
                failures.append(repr(error))

        # Two threads per shape: one compiles it, the other waits.
        threads = [threading.Thread(target=call, args=(1 + index % SHAPES,))
                   for index in range(2 * SHAPES)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(traced) == sorted((rows, 16) for rows in range(1, SHAPES + 1)), traced
        assert len(mlp.cache) == SHAPES
    print("failures:", failures)
    sys.exit(1 if failures else 0)
''')


def test_jit_compiles_new_shapes_from_several_threads():
    environment = dict(os.environ, LAMINA_CACHE="0")
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                            env=environment, timeout=600)
    assert result.returncode == 0, (result.returncode, result.stdout[-2000:],
                                    result.stderr[-2000:])
    assert "failures: []" in result.stdout
