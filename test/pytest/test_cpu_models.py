"""The CPU target model (lamina.targets.cpu_model): its presets, the
target strings naming them, and host detection filling it in."""

import pytest

from lamina.targets import get_target
from lamina.targets.cpu_model import CPU_PRESETS, CPUModel, host_model
from lamina.targets.host import detect_host
from lamina.targets.llvm_tools import machine_names


def test_presets_name_cpus_and_features_llvm_knows():
    for name, model in CPU_PRESETS.items():
        names = machine_names(model.arch)
        assert model.cpu in names.cpus, name
        assert all(f[0] in "+-" and f[1:] in names.features for f in model.features), name
        assert model.vector_bits % 128 == 0 and model.vector_registers in (16, 32), name


@pytest.mark.parametrize("spec, arch, cpu, bits, registers, scalable, sve_bits", [
    ("cpu:aarch64", "aarch64", "generic", 128, 32, False, 0),
    ("cpu:arm64", "aarch64", "generic", 128, 32, False, 0),
    ("cpu:neoverse-n1", "aarch64", "neoverse-n1", 128, 32, False, 0),
    ("cpu:neoverse-v1", "aarch64", "neoverse-v1", 256, 32, False, 256),
    ("cpu:neoverse-v2", "aarch64", "neoverse-v2", 128, 32, False, 0),
    ("cpu:aarch64+sve", "aarch64", "generic", 128, 32, True, 0),
    ("cpu:aarch64-sve256", "aarch64", "generic", 256, 32, False, 256),
    ("cpu:aarch64-sve512", "aarch64", "generic", 512, 32, False, 512),
    ("cpu:apple-m1", "aarch64", "apple-m1", 128, 32, False, 0),
    ("cpu:x86-64-v3", "x86_64", "x86-64-v3", 256, 16, False, 0),
    ("cpu:haswell", "x86_64", "haswell", 256, 16, False, 0),
    ("cpu:znver4", "x86_64", "znver4", 512, 32, False, 0),
    ("cpu:znver5", "x86_64", "znver5", 512, 32, False, 0),
    ("cpu:sapphirerapids", "x86_64", "sapphirerapids", 512, 32, False, 0),
    ("cpu:icelake-server", "x86_64", "icelake-server", 512, 32, False, 0),
    ("cpu:znver4,-avx512f", "x86_64", "znver4", 256, 16, False, 0),
])
def test_target_strings_give_models(spec, arch, cpu, bits, registers, scalable, sve_bits):
    target = get_target(spec)
    model = target.model
    assert (model.arch, model.cpu, model.vector_bits, model.vector_registers, model.scalable,
            model.sve_bits) == (arch, cpu, bits, registers, scalable, sve_bits)
    assert target.triple.startswith(arch)
    assert target.features == model.features
    # The schedules read the same vector unit and caches.
    schedule = target.pipeline().stage("schedule").passes[-1].model()
    assert (schedule.vector_bits, schedule.vector_registers, schedule.l1_bytes,
            schedule.l2_bytes) == (bits, registers, model.l1_bytes, model.l2_bytes)


def test_dot_products_follow_features():
    assert {"avx512vnni", "avx512bf16", "amx-bf16"} <= set(CPU_PRESETS["sapphirerapids"]
                                                          .dot_products)
    assert get_target("cpu:znver4,-avx512f").model.dot_products == ()
    assert set(get_target("cpu:neoverse-v2").model.dot_products) >= {"dotprod", "bf16", "sve2"}
    assert get_target("cpu:neoverse-n1").model.dot_products == ("dotprod",)
    assert get_target("cpu:aarch64+bf16").model.dot_products == ("bf16",)
    assert not get_target("cpu:neoverse-v2,-sve").model.scalable
    assert get_target("cpu:aarch64+sve").name == "cpu:aarch64+sve"


def test_cross_targets_run_on_one_thread():
    assert get_target("cpu:aarch64").threads == 1
    with pytest.raises(ValueError, match="runs on one thread"):
        get_target("cpu:aarch64,threads=2")


@pytest.mark.parametrize("spec, message", [
    ("cpu:bogus", r"unknown CPU 'bogus' in target 'cpu:bogus' \(presets: znver4, .*aarch64, "
                  r".*; x86-64 CPUs the pinned LLVM knows: .*; AArch64 CPUs the pinned LLVM "
                  r"knows: .*neoverse-v2"),
    ("cpu:neoverse-v9", r"did you mean .*'neoverse-v2'"),
    ("cpu:aarch64+avx2", r"unknown CPU feature 'avx2'.*AArch64 features the pinned LLVM knows"),
    ("cpu:aarch64,+sve3", r"unknown CPU feature 'sve3'; did you mean .*'sve2'"),
    ("cpu:x86-64-v3,+sve", r"unknown CPU feature 'sve'.*x86-64 features"),
    ("cpu:riscv64", r"RISC-V is not a target yet"),
])
def test_unknown_names_are_errors(spec, message):
    with pytest.raises(ValueError, match=message):
        get_target(spec)


def test_host_detection_fills_the_model():
    host = detect_host()
    model = host_model(host.triple, host.cpu, host.features)
    assert get_target("cpu").model == model and model.name == "host"
    assert model.features == host.features
    if host.has("avx512f"):
        assert (model.vector_bits, model.vector_registers) == (512, 32)
    elif host.has("avx2"):
        assert (model.vector_bits, model.vector_registers) == (256, 16)
    assert model.l1_bytes >= 16 * 1024 and model.l2_bytes >= model.l1_bytes
    assert isinstance(model.schedule_model(2), CPUModel)
