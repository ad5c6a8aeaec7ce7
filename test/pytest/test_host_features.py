"""host_has_amx: the CPU's AMX features and Linux's permission, each
required."""

from lamina.runtime import request_amx_state
from lamina.targets.host import HostInfo, detect_host, host_has_amx

AMX = ("+amx-tile", "+amx-bf16", "+amx-int8")


def host(*features):
    return HostInfo("x86_64-unknown-linux-gnu", "sapphirerapids", ("+avx512f", *features))


def test_amx_needs_every_feature_and_the_permission():
    assert host_has_amx(host(*AMX), permitted=lambda: True)
    assert not host_has_amx(host(*AMX), permitted=lambda: False)
    for missing in AMX:
        features = [f for f in AMX if f != missing] + ["-" + missing[1:]]
        assert not host_has_amx(host(*features), permitted=lambda: True)


def test_permission_is_not_asked_without_the_features():
    asked = []
    assert not host_has_amx(host("+avx512bf16"), permitted=lambda: asked.append(1) or True)
    assert not asked


def test_request_is_made_once_and_agrees_with_the_host():
    first = request_amx_state()
    assert request_amx_state() is first
    assert request_amx_state.cache_info().currsize == 1
    if not all(detect_host().has(f[1:]) for f in AMX):
        assert not host_has_amx()
    else:
        assert host_has_amx() == first
