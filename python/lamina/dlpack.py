"""DLPack in and out of Lamina's GPU functions: tensors of other
frameworks (a PyTorch tensor, CuPy, JAX, NumPy) taken in place and
results given back as the same kind, with no copy.

A tensor is read through its `__dlpack__()` capsule (the `DLManagedTensor`
of the DLPack standard, read with ctypes; the capsule is kept, not
consumed, so its producer frees it as usual): its data pointer, device,
element type, shape and strides, as a `TensorView`. A function checks
each view against its argument's type (element type, shape, C-contiguous
strides, device) with a message naming the argument. A result is a
`DLPackBuffer`, memory Lamina owns (a NumPy array, device memory) that
exports a capsule of its own, turned into the inputs' kind by that
framework's `from_dlpack` (`torch.from_dlpack`, ...), which takes the
memory over without copying.
"""

from __future__ import annotations

import ctypes
import importlib
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from lamina.types import MemRefType, TensorType, numpy_dtype

# DLDeviceType: the devices Lamina's functions run on.
CPU, CUDA, CUDA_HOST = 1, 2, 3
DEVICE_NAMES = {CPU: "cpu", CUDA: "cuda", CUDA_HOST: "cuda pinned host memory", 4: "opencl",
                7: "vulkan", 8: "metal", 10: "rocm", 13: "cuda managed memory"}
# DLDataTypeCode by Lamina's element type names: (code, bits).
_CODES = {"i1": (6, 8), "i8": (0, 8), "i16": (0, 16), "i32": (0, 32), "i64": (0, 64),
          "ui8": (1, 8), "ui16": (1, 16), "ui32": (1, 32), "ui64": (1, 64),
          "f16": (2, 16), "f32": (2, 32), "f64": (2, 64), "bf16": (4, 16)}
_NAMES = {code: name for name, code in _CODES.items()}


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                ("dtype", _DataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _ManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_ManagedTensor))
_ManagedTensor._fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p),
                           ("deleter", _DELETER)]

# A capsule's destructor gets the dying capsule as a bare pointer: no
# reference may be taken to it.
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_api = ctypes.pythonapi
_raw = ctypes.PyDLL(None)
_raw_is_valid = _raw.PyCapsule_IsValid
_raw_is_valid.restype, _raw_is_valid.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]
_raw_pointer = _raw.PyCapsule_GetPointer
_raw_pointer.restype, _raw_pointer.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]


def is_dlpack(value) -> bool:
    """Whether `value` is a tensor to take through DLPack (a NumPy array
    is taken as an array)."""
    return (not isinstance(value, np.ndarray) and hasattr(value, "__dlpack__")
            and hasattr(value, "__dlpack_device__"))


@dataclass(frozen=True)
class TensorView:
    """What a DLPack capsule says of a tensor: the address of its first
    element, its device (DLDeviceType, id), element type, shape, and
    strides in elements (None: C-contiguous). `owner` keeps the tensor
    and its capsule alive."""

    pointer: int
    device: tuple[int, int]
    dtype: str | None
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None
    owner: Any

    @property
    def contiguous(self) -> bool:
        if self.strides is None:
            return True
        expected = 1
        for size, stride in zip(reversed(self.shape), reversed(self.strides)):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * numpy_dtype(self.dtype).itemsize

    def host_array(self) -> np.ndarray:
        """The tensor's memory as a NumPy array, no copy (a host tensor)."""
        memory = (ctypes.c_uint8 * max(self.nbytes, 1)).from_address(self.pointer)
        memory.owner = self.owner
        flat = np.frombuffer(memory, np.uint8)[:self.nbytes]
        return flat.view(numpy_dtype(self.dtype)).reshape(self.shape)


def read_dlpack(value, stream: int | None = None) -> TensorView:
    """The view of a tensor with `__dlpack__`, a GPU one ready for work on
    `stream` (a CUDA stream handle; None: the legacy default stream);
    raises TypeError when it gives no DLPack capsule."""
    device = tuple(int(d) for d in value.__dlpack_device__())
    capsule = value.__dlpack__(stream=stream) if device[0] == CUDA else value.__dlpack__()
    if not _api.PyCapsule_IsValid(capsule, b"dltensor"):
        raise TypeError(f"{type(value).__name__}.__dlpack__() gave no DLPack tensor capsule")
    managed = _ManagedTensor.from_address(_api.PyCapsule_GetPointer(capsule, b"dltensor"))
    tensor = managed.dl_tensor
    ndim = tensor.ndim
    shape = tuple(tensor.shape[i] for i in range(ndim))
    strides = tuple(tensor.strides[i] for i in range(ndim)) if tensor.strides else None
    code = (tensor.dtype.code, tensor.dtype.bits)
    dtype = _NAMES.get(code) if tensor.dtype.lanes == 1 else None
    return TensorView((tensor.data or 0) + tensor.byte_offset,
                      (tensor.device.device_type, tensor.device.device_id), dtype, shape,
                      strides, (value, capsule))


def check_view(view: TensorView, spec: TensorType | MemRefType, function: str, index: int,
               devices: Sequence[int]) -> None:
    """Raises TypeError (element type) or ValueError (device, shape,
    strides) where `view` cannot be argument #`index` of `spec`."""
    where = f"@{function} argument #{index}"
    if view.device[0] not in devices:
        wanted = " or ".join(DEVICE_NAMES[d] for d in devices)
        got = DEVICE_NAMES.get(view.device[0], f"device type {view.device[0]}")
        raise ValueError(f"{where}: a tensor on {got}:{view.device[1]}; this function takes "
                         f"tensors on {wanted}")
    if view.dtype != spec.dtype:
        raise TypeError(f"{where}: expected {spec} ({spec.dtype} elements), got a tensor of "
                        f"{view.dtype or 'an element type Lamina has no name for'}")
    if view.shape != tuple(spec.shape):
        raise ValueError(f"{where}: expected {spec} (shape {tuple(spec.shape)}), got shape "
                         f"{view.shape}")
    if not view.contiguous:
        raise ValueError(f"{where}: a tensor of strides {view.strides} is not C-contiguous; "
                         "make it so (.contiguous()) before the call")


class DLPackBuffer:
    """Memory Lamina gives out through DLPack: `nbytes` at `pointer` on
    `device`, of `dtype` and `shape`, kept alive by `owner` (a NumPy
    array, a device allocation that frees itself) until the consumer of
    its capsule lets it go."""

    _exported: dict[int, tuple] = {}

    def __init__(self, pointer: int, device: tuple[int, int], dtype: str,
                 shape: Sequence[int], owner: Any, ready=None):
        self.pointer = pointer
        self.device = device
        self.dtype = dtype
        self.shape = tuple(shape)
        self.owner = owner
        # `ready(stream)` makes the consumer's stream wait for the work
        # that writes the buffer (DLPack's `stream` argument).
        self.ready = ready

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device

    def __dlpack__(self, stream=None, **_):
        if self.ready is not None and stream is not None and stream != -1:
            self.ready(stream)
        shape = (ctypes.c_int64 * max(len(self.shape), 1))(*self.shape)
        managed = _ManagedTensor()
        managed.dl_tensor.data = self.pointer
        managed.dl_tensor.device = _Device(*self.device)
        managed.dl_tensor.ndim = len(self.shape)
        code, bits = _CODES[self.dtype]
        managed.dl_tensor.dtype = _DataType(code, bits, 1)
        managed.dl_tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        managed.dl_tensor.strides = None
        managed.dl_tensor.byte_offset = 0
        managed.deleter = _release
        address = ctypes.addressof(managed)
        DLPackBuffer._exported[address] = (managed, shape, self.owner)
        return _api.PyCapsule_New(address, b"dltensor", _destroy_capsule)

    def to(self, kind: str | None):
        """The buffer as a tensor of framework `kind` ("torch", "cupy",
        "jax", "numpy"; None: the buffer itself)."""
        if kind is None:
            return self
        if kind == "numpy" and self.device[0] == CPU:
            return self.owner if isinstance(self.owner, np.ndarray) else np.from_dlpack(self)
        return _from_dlpack(kind)(self)


@_DELETER
def _release(managed) -> None:
    DLPackBuffer._exported.pop(ctypes.addressof(managed.contents), None)


@_CAPSULE_DESTRUCTOR
def _destroy_capsule(capsule) -> None:
    # A capsule nobody consumed still holds its tensor (a consumer renames it).
    if _raw_is_valid(capsule, b"dltensor"):
        DLPackBuffer._exported.pop(_raw_pointer(capsule, b"dltensor"), None)


def _from_dlpack(kind: str):
    if kind == "jax":
        return importlib.import_module("jax.dlpack").from_dlpack
    return importlib.import_module(kind).from_dlpack


def framework(value) -> str | None:
    """The framework of a DLPack tensor ("torch", "cupy", "jax", "numpy"),
    whose `from_dlpack` makes results of its kind; None for another."""
    root = type(value).__module__.split(".")[0]
    root = "jax" if root in ("jax", "jaxlib") else root
    return root if root in ("torch", "cupy", "jax", "numpy") else None


class DLPackCalls:
    """A GPU function's calls on DLPack tensors: mixed into an
    ArrayFunction, whose NumPy calls it leaves as they are. Subclasses say
    on which devices a tensor is used in place (`dlpack_devices`) and run
    the call on the views (`call_on_views`)."""

    dlpack_devices: Sequence[int] = (CPU, CUDA_HOST)
    # The CUDA stream GPU tensors are read for (None: the legacy default).
    dlpack_stream: int | None = None

    def __call__(self, *args):
        if not any(is_dlpack(a) for a in args):
            return super().__call__(*args)
        if len(args) != len(self.inputs):
            raise TypeError(f"@{self.name} takes {len(self.inputs)} argument(s) "
                            f"({', '.join(str(t) for t in self.inputs)}), got {len(args)}")
        kinds = {framework(a) for a in args if is_dlpack(a)}
        kind = kinds.pop() if len(kinds) == 1 else None
        values = []
        for index, (value, spec) in enumerate(zip(args, self.inputs)):
            if is_dlpack(value):
                view = read_dlpack(value, self.dlpack_stream)
                check_view(view, spec, self.name, index, self.dlpack_devices)
                values.append(view)
            else:
                values.append(self.check_arguments_at(index, value))
        results = [r.to(kind) for r in self.call_on_views(values)]
        if len(results) == 1:
            return results[0]
        return tuple(results) if results else None

    def check_arguments_at(self, index: int, value) -> np.ndarray:
        """Argument #`index`, given as an array among DLPack tensors, as a
        contiguous array of its type; raises TypeError or ValueError."""
        spec = self.inputs[index]
        array = np.asarray(value, dtype=numpy_dtype(spec.dtype))
        if array.shape != tuple(spec.shape):
            raise ValueError(f"@{self.name} argument #{index}: expected {spec} (shape "
                             f"{tuple(spec.shape)}), got shape {array.shape}")
        if isinstance(spec, MemRefType) and array is not value:
            raise ValueError(f"@{self.name} argument #{index}: {spec} is passed in place: "
                             "give a writeable, C-contiguous array of its type")
        return array if array.flags.c_contiguous else np.ascontiguousarray(array)

    def call_on_views(self, values: Sequence) -> list[DLPackBuffer]:
        """Runs on `values` (TensorViews in place, checked arrays); the
        results as DLPack buffers. This default is a host one: every view
        is host memory."""
        arrays = [v.host_array() if isinstance(v, TensorView) else v for v in values]
        results = self.allocate_results()
        self.call_with_results(arrays, results)
        return [DLPackBuffer(r.ctypes.data, (CPU, 0), t.dtype, r.shape, r)
                for r, t in zip(results, self.results)]
