"""bench/models.py's parts that need no timing: the models it builds, the
child process's rows for systems that run and fail, and the table's ratios
and failure rows. torchvision, onnxruntime and transformers come with
the test extra."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "bench"))
import models  # noqa: E402  (bench/models.py)


def test_vision_model_is_seeded_and_evaluates():
    import torch
    first, (x,) = models.build("resnet18")
    second, (y,) = models.build("resnet18")
    assert x.shape == (1, 3, 224, 224) and torch.equal(x, y)
    with torch.inference_mode():
        assert torch.equal(first(x), second(y))


def test_language_model_takes_token_ids():
    import torch
    model, (ids,) = models.build("gpt2")
    assert ids.dtype == torch.int64 and ids.shape == (1, models.SEQUENCE)
    with torch.inference_mode():
        assert model(ids).shape == (1, models.SEQUENCE, 768)


def test_unknown_model_is_an_error(capsys):
    with pytest.raises(SystemExit):
        models.main(["--models", "resnet19"])
    assert "unknown model 'resnet19'" in capsys.readouterr().err


def test_child_rows_time_the_systems_that_run(capsys, monkeypatch):
    def fails(model, inputs, threads, workdir):
        raise RuntimeError("no such thing\nsecond line")
    monkeypatch.setitem(models.PREPARE, "lamina", fails)
    models.model_main("resnet18", ["eager", "lamina"], threads=1, rounds=1, budget=0.01)
    import json
    rows = {r["system"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert rows["eager"]["seconds"] > 0 and rows["eager"]["difference"] == 0
    assert rows["lamina"]["error"] == "RuntimeError: no such thing"
    assert "seconds" not in rows["lamina"]


def test_table_ratios_and_failures():
    rows = [
        {"model": "resnet18", "system": "onnxruntime", "threads": 2, "seconds": 0.020,
         "compile_seconds": 1.0, "memory_bytes": 2**20, "difference": 1e-7},
        {"model": "resnet18", "system": "openvino", "threads": 2, "seconds": 0.025,
         "compile_seconds": 2.0, "memory_bytes": 2**21, "difference": 2e-7},
        {"model": "resnet18", "system": "inductor", "threads": 2, "seconds": 0.040,
         "compile_seconds": 30.0, "memory_bytes": 0, "difference": 0.0},
        {"model": "resnet18", "system": "lamina", "threads": 2, "seconds": 0.010,
         "compile_seconds": 5.0, "cached_seconds": 0.2, "memory_bytes": 3 * 2**20,
         "difference": 3e-7},
        {"model": "bert", "system": "lamina", "threads": 2, "error": "UnsupportedOpsError: x"},
    ]
    text = models.table(rows, ["resnet18", "bert"], list(models.SYSTEMS), 2)
    assert "| resnet18 | lamina | 10.0 | 2.00 | 4.00 | 5.0 | 200 | 3 | 3.0e-07 |" in text
    assert "| resnet18 | openvino | 25.0 | 0.80 | 1.60 | 2.0 | - | 2 | 2.0e-07 |" in text
    assert "| bert | lamina | failed: UnsupportedOpsError: x |" in text
    assert "| bert | eager" not in text


def test_child_adds_the_profile_of_lamina(capsys, monkeypatch):
    import json
    import numpy as np
    monkeypatch.setitem(models.PREPARE, "lamina",
                        lambda model, inputs, threads, workdir: (
                            lambda: model(*inputs).detach().numpy(), {}))
    monkeypatch.setattr(models, "lamina_profile", lambda model, inputs, threads: "| group |")
    models.model_main("resnet18", ["lamina"], threads=1, rounds=1, budget=0.01, profiled=True)
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["system"] for r in rows] == ["lamina", "lamina-profile"]
    assert rows[1] == {"system": "lamina-profile", "model": "resnet18", "threads": 1,
                       "table": "| group |"}
    assert np.isfinite(rows[0]["seconds"])


def test_main_writes_the_profiles_after_the_tables(tmp_path, monkeypatch):
    asked = []

    def run_model(name, systems, threads, rounds, budget, timeout, profiled=False,
                  contended=False):
        asked.append((threads, profiled, contended))
        rows = [{"model": name, "system": "lamina", "threads": threads, "seconds": 0.01,
                 "compile_seconds": 1.0, "memory_bytes": 0, "difference": 0.0}]
        if profiled:
            rows.append({"system": "lamina-profile", "model": name, "threads": threads,
                         "table": "| group | kind |"})
        return rows

    monkeypatch.setattr(models, "run_model", run_model)
    monkeypatch.setattr(models, "plot", lambda *args: False)
    output = tmp_path / "results.md"
    models.main(["--models", "resnet18", "--systems", "lamina", "--threads", "1,2",
                 "--profile", "--contended", "--output", str(output)])
    assert asked == [(1, False, True), (2, True, True)]
    text = output.read_text()
    assert "## Lamina's per-group profiles\n\n### resnet18, 2 thread(s)\n\n| group | kind |" in text
    assert "| resnet18 | lamina-profile" not in text
    assert "Contended: every model ran beside a process keeping one core busy." in text


def test_a_contended_run_keeps_a_core_busy_while_the_model_runs(monkeypatch):
    started = []

    class Busy:
        def __init__(self, command):
            started.append(command)
            self.killed = False

        def kill(self):
            started.append("killed")

        def wait(self):
            pass

    def child(command, **kwargs):
        assert started and started[-1] != "killed"  # the busy process runs meanwhile
        return models.subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(models.subprocess, "Popen", Busy)
    monkeypatch.setattr(models.subprocess, "run", child)
    rows = models.run_model("resnet18", ["lamina"], 2, 1, 0.01, 60, contended=True)
    assert started == [[sys.executable, "-c", models.BUSY_LOOP], "killed"]
    assert rows[0]["error"] == "exit code 0"
