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


# A program every thread's compile fails on, in a pass of the pipeline (an
# op the CPU pipeline does not bufferize), so that the failures of several
# threads overlap inside the pass manager's error capture.
FAILING_SCRIPT = textwrap.dedent('''
    import sys
    import threading

    import numpy as np
    from mlir import ir

    import lamina
    from lamina.diagnostics import CompileError

    sys.setswitchinterval(1e-5)
    THREADS, ROUNDS, SHAPES = 8, 4, 4
    TEXT = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %y = "tosa.abs"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      return %y : tensor<4xf32>
    }
    """
    failures = []

    BUFFERIZE = ("op was not bufferized", ["in pass 'one-shot-bufferize' of stage 'bufferized'"])
    UNREGISTERED = ("unregistered operation 'nn.no_such_op' found in dialect ('nn'), "
                    "which has no such op", [])

    def expect_own_error(what, error, line, expected):
        # Each thread's CompileError holds its own compile's diagnostics,
        # none of another thread's.
        if not isinstance(error, CompileError):
            failures.append(f"{what}: {error!r}")
            return
        errors = [(d.line, d.message, [n.message for n in d.notes]) for d in error.diagnostics]
        if errors != [(line, *expected)]:
            failures.append(f"{what}: {errors}")

    def run_together(work):
        start = threading.Barrier(THREADS)
        errors = [None] * THREADS

        def call(index):
            start.wait()
            try:
                work(index)
            except Exception as error:
                errors[index] = error
        threads = [threading.Thread(target=call, args=(i,)) for i in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return errors

    for round in range(ROUNDS):
        # Odd sizes fail in the trace's verification (an error Lamina's
        # rules emit from Python), even ones in the pipeline.
        @lamina.jit
        def absolute(x):
            name = "nn.no_such_op" if x.shape[0] % 2 else "tosa.abs"
            return ir.Operation.create(name, results=[x.type], operands=[x]).result
        line = absolute.function.__code__.co_firstlineno

        # Two threads per shape: same-signature failures wait for each other,
        # different signatures fail at the same time in their own contexts.
        def jit_call(index):
            absolute(np.ones((1 + index % SHAPES,), np.float32))
        for index, error in enumerate(run_together(jit_call)):
            size = 1 + index % SHAPES
            expect_own_error(f"round {round}, jit thread {index}", error, line,
                             UNREGISTERED if size % 2 else BUFFERIZE)
        if absolute.cache:
            failures.append(f"round {round}: a failed compile was cached")

        def compile_call(index):
            lamina.compile(TEXT)
        for index, error in enumerate(run_together(compile_call)):
            expect_own_error(f"round {round}, compile thread {index}", error, 2, BUFFERIZE)
    print("failures:", failures)
    sys.exit(1 if failures else 0)
''')


def test_failing_compiles_on_several_threads_each_raise_their_own_error():
    environment = dict(os.environ, LAMINA_CACHE="0")
    result = subprocess.run([sys.executable, "-c", FAILING_SCRIPT], capture_output=True,
                            text=True, env=environment, timeout=600)
    assert result.returncode == 0, (result.returncode, result.stdout[-2000:],
                                    result.stderr[-2000:])
    assert "failures: []" in result.stdout
