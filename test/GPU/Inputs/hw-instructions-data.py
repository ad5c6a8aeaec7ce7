"""Inputs and checks for ptx-hw-instructions.mlir's kernel (prmt on three
64x64 i32 tiles, cvt_e4m3x2 on two 64x64 f32 tiles).

    hw-instructions-data.py write IN.npz
    hw-instructions-data.py compare IN.npz OUT.npz

`compare` prints how many results differ from a byte-by-byte permute and
from ml_dtypes' saturating e4m3 (NaN inputs must give a NaN code)."""

import sys

import ml_dtypes
import numpy as np

rng = np.random.default_rng(3)


def write(path):
    codes = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    finite = np.unique(codes[np.isfinite(codes)])
    midpoints = ((finite[:-1].astype(np.float64) + finite[1:]) / 2).astype(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 448, 464, 500, 1e30, 2 ** -10],
                       np.float32)
    chosen = np.concatenate([finite, midpoints, np.nextafter(midpoints, np.float32(np.inf)),
                             np.nextafter(midpoints, np.float32(-np.inf)), special, -special])
    random_bits = rng.integers(0, 2 ** 32, 8192 - chosen.size, dtype=np.uint64)
    values = np.concatenate([chosen, random_bits.astype(np.uint32).view(np.float32)])
    rng.shuffle(values)
    hi, lo = (v.reshape(64, 64) for v in np.split(values, 2))
    a, b, s = (rng.integers(0, 2 ** 32, (64, 64), dtype=np.uint64).astype(np.uint32)
               .view(np.int32) for _ in range(3))
    np.savez(path, arg0=a, arg1=b, arg2=s, arg3=np.zeros((64, 64), np.int32), arg4=hi,
             arg5=lo, arg6=np.zeros((64, 64), np.int16))


def permute(a, b, selector):
    data, result = (b << 32) | a, 0
    for k in range(4):
        nibble = (selector >> (4 * k)) & 0xF
        byte = (data >> (8 * (nibble & 7))) & 0xFF
        if nibble & 8:
            byte = 0xFF if byte & 0x80 else 0
        result |= byte << (8 * k)
    return result


def compare(in_path, out_path):
    given, got = np.load(in_path), np.load(out_path)
    a, b, s = (given[f"arg{i}"].view(np.uint32).ravel() for i in range(3))
    want = np.array([permute(int(x), int(y), int(z)) for x, y, z in zip(a, b, s)], np.uint32)
    print("prmt differing:", int((got["arg3"].view(np.uint32).ravel() != want).sum()))
    packed = got["arg6"].view(np.uint16)
    codes = np.concatenate([(packed >> 8).ravel(), (packed & 0xFF).ravel()]).astype(np.uint8)
    inputs = np.concatenate([given["arg4"].ravel(), given["arg5"].ravel()])
    nan = np.isnan(inputs)
    with np.errstate(invalid="ignore"):
        expected = np.clip(inputs, -448, 448).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    print("cvt_e4m3x2 differing:", int((codes[~nan] != expected[~nan]).sum()),
          "NaN codes:", bool((codes[nan] & 0x7F == 0x7F).all()))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        compare(sys.argv[2], sys.argv[3])
