"""A thread-level interpreter of the GPU kernels Lamina generates for sm_80
and sm_90a, for tests on machines without a GPU.

It runs a `gpu.func` of the `gpu` stage (convert-hw-to-nvgpu's output) for
every block of a launch, all threads of a block in lockstep: each SSA value
is a NumPy array with one row per thread, branches run under a mask of
the threads that take them, barriers need nothing (the threads are never
apart). Warp-level instructions follow the PTX ISA's fragment layouts:
`nvgpu.ldmatrix` gathers each 8x8 matrix from the row addresses of 8 lanes
and hands each lane its pairs (transposed or not), `nvvm.mma.sync`
assembles A, B and C from the 32 lanes' registers (m16n8k16 f16/bf16,
m16n8k8 tf32), multiplies in f32 and hands back D; `gpu.shuffle` (xor)
reads the partner lane's value. cp.async copies are
done when issued (zero-filling past `srcElements`). sm_90a: a TMA load
(`nvgpu.tma.async.load`) is done when issued too, its box read from the
descriptor's global array at its coordinates (innermost first, zeros out
of bounds) and written 128-byte swizzled where the descriptor says so
(chunk bits 4-6 of the shared address XOR its bits 7-9), so mbarriers
need nothing; `nvgpu.warpgroup.generate.descriptor` makes the matrix
descriptor as upstream's lowering does, and a wgmma (the inline assembly
of `wgmma.mma_async` m64nNk16) decodes its descriptors as the PTX ISA
defines them (start address, leading and stride byte offsets, 128-byte
swizzle; K-major or MN-major by its transpose immediate), takes a
register A from the warpgroup's lanes in mma.sync's A layout (warp w
rows 16w..16w+15) and hands each lane its accumulator registers;
`nvgpu.warpgroup.mma` runs as upstream's lowering expands it into such
wgmmas (descriptors advanced per 64 rows and k-step), the accumulator's
LLVM structs flattened into one row of registers a thread. What the lowering
computes per thread is thus checked against NumPy, independently of the
CPU emulation (which runs the hw ops, not their distribution).
"""

from __future__ import annotations

import re

import numpy as np
from mlir import ir
from mlir.dialects import llvm

from lamina.types import numpy_dtype

WARP = 32


class MemRef:
    """A memref value: a flat NumPy buffer, an element offset, the shape
    and row-major strides; private memrefs have one buffer row per thread."""

    def __init__(self, buffer: np.ndarray, offset: int, shape, private: bool = False,
                 address: int | None = None):
        self.buffer, self.offset, self.shape, self.private = buffer, offset, tuple(shape), private
        # A shared view's byte address in the block's shared memory.
        self.address = address
        strides, stride = [], 1
        for extent in reversed(self.shape):
            strides.append(stride)
            stride *= extent
        self.strides = tuple(reversed(strides))

    def linear(self, indices) -> np.ndarray:
        position = np.full_like(indices[0], self.offset) if indices else np.array(self.offset)
        for i, stride in zip(indices, self.strides):
            position = position + i * stride
        return position


class TensorMap:
    """A TMA descriptor: the global array it describes, its box (in the
    array's dim order) and whether boxes land 128-byte swizzled."""

    def __init__(self, array: np.ndarray, box, swizzled: bool):
        self.array, self.box, self.swizzled = array, tuple(box), swizzled

    @classmethod
    def of_type(cls, array: np.ndarray, t: ir.Type) -> "TensorMap":
        text = str(t)
        box = [int(d) for d in text.split("tensor = memref<")[1].split(",")[0].split("x")[:-1]]
        return cls(array, box, "swizzle_128b" in text)


def _swizzled(address: np.ndarray) -> np.ndarray:
    """Where a 128-byte swizzle puts the bytes of a shared address: its
    16-byte chunk (bits 4-6) XOR its 128-byte line within 1024 (bits 7-9)."""
    return address ^ (((address >> 7) & 7) << 4)


def _dtype(t: ir.Type) -> np.dtype:
    return numpy_dtype(str(t))


def _wrap(value: np.ndarray, t: ir.Type) -> np.ndarray:
    """Integers (held as int64) wrapped to the width of their type, signed;
    i1 as 0 and 1; index and i64 as they are."""
    value = np.asarray(value).astype(np.int64)
    if not isinstance(t, ir.IntegerType) or t.width == 64:
        return value
    if t.width == 1:
        return value & 1
    half = 1 << (t.width - 1)
    return ((value + half) & ((1 << t.width) - 1)) - half


def _unsigned(value: np.ndarray, t: ir.Type) -> np.ndarray:
    """The bits of integers of type `t` read as an unsigned number (uint64)."""
    value = np.asarray(value).astype(np.int64)
    if isinstance(t, ir.IntegerType) and t.width < 64:
        return (value & ((1 << t.width) - 1)).astype(np.uint64)
    return value.view(np.uint64)


def _uniform(value: np.ndarray) -> int:
    flat = np.asarray(value).reshape(-1)
    if not (flat == flat[0]).all():
        raise NotImplementedError("a value that the interpreter needs uniform differs "
                                  "between threads")
    return int(flat[0])


_INT = {
    "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
    "arith.divui": np.floor_divide, "arith.divsi": np.floor_divide,
    "arith.remui": np.remainder, "arith.remsi": np.remainder, "arith.minui": np.minimum,
    "arith.minsi": np.minimum, "arith.maxui": np.maximum, "arith.maxsi": np.maximum,
    "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
}
_FLOAT = {"arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply,
          "arith.divf": np.divide, "arith.maximumf": np.maximum, "arith.minimumf": np.minimum}
_COMPARE = [np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
            np.less, np.less_equal, np.greater, np.greater_equal]


class Block:
    """One thread block of a kernel."""

    def __init__(self, module: ir.Module, threads: int, block_id, shared_bytes: int):
        self.module = module
        self.threads = threads
        self.block_id = block_id
        self.shared = np.zeros(shared_bytes, np.uint8)
        self.values: dict = {}

    # -- values --------------------------------------------------------------

    def get(self, value: ir.Value):
        return self.values[value]

    def scalar(self, constant, t: ir.Type) -> np.ndarray:
        if isinstance(t, ir.IndexType) or isinstance(t, ir.IntegerType):
            return np.full(self.threads, constant, np.int64)
        return np.full(self.threads, constant, _dtype(t))

    # -- running -------------------------------------------------------------

    def run_function(self, function: ir.Operation, arguments: list, mask: np.ndarray):
        block = function.regions[0].blocks[0]
        return self.run_block(block, arguments, mask)

    def run_block(self, block: ir.Block, arguments: list, mask: np.ndarray):
        for argument, value in zip(block.arguments, arguments):
            self.values[argument] = value
        for op in block.operations:
            op = op.operation
            if op.name in ("scf.yield", "func.return", "gpu.return"):
                return [self.get(v) for v in op.operands]
            self.step(op, mask)
        return []

    def step(self, op: ir.Operation, mask: np.ndarray) -> None:
        name = op.name
        operands = [self.values.get(v) for v in op.operands]
        results = op.results
        if name == "arith.constant":
            attribute = op.attributes["value"]
            if isinstance(attribute, ir.BoolAttr):
                value = int(ir.BoolAttr(attribute).value)
            elif isinstance(attribute, ir.IntegerAttr):
                value = ir.IntegerAttr(attribute).value
            elif isinstance(attribute, ir.FloatAttr):
                value = ir.FloatAttr(attribute).value
            elif isinstance(attribute, ir.DenseElementsAttr) and attribute.is_splat:
                # A splat vector: one row of lanes per thread.
                t = ir.VectorType(results[0].type)
                element = attribute.get_splat_value()
                splat = self.scalar(ir.IntegerAttr(element).value if isinstance(
                    element, ir.IntegerAttr) else ir.FloatAttr(element).value, t.element_type)
                self.values[results[0]] = np.repeat(splat[:, None], int(np.prod(t.shape)), 1)
                return
            else:
                raise NotImplementedError(f"constant {attribute}")
            self.values[results[0]] = self.scalar(value, results[0].type)
        elif name in _INT:
            self.values[results[0]] = _wrap(_INT[name](operands[0], operands[1]),
                                            results[0].type)
        elif name in ("arith.shli", "arith.shrui"):
            # Shifts of the operand's bits, as wide as its type.
            bits = _unsigned(operands[0], results[0].type)
            amount = operands[1].astype(np.uint64)
            shifted = bits << amount if name == "arith.shli" else bits >> amount
            self.values[results[0]] = _wrap(shifted.view(np.int64), results[0].type)
        elif name in _FLOAT:
            self.values[results[0]] = _FLOAT[name](operands[0], operands[1]).astype(
                operands[0].dtype)
        elif name == "arith.cmpi":
            predicate = ir.IntegerAttr(op.attributes["predicate"]).value
            self.values[results[0]] = _COMPARE[predicate](operands[0], operands[1])
        elif name == "arith.select":
            self.values[results[0]] = np.where(
                operands[0].reshape((-1,) + (1,) * (operands[1].ndim - 1)),
                operands[1], operands[2])
        elif name == "arith.extui":
            self.values[results[0]] = _unsigned(operands[0], op.operands[0].type).view(np.int64)
        elif name == "arith.trunci":
            self.values[results[0]] = _wrap(operands[0], results[0].type)
        elif name in ("arith.index_cast", "arith.index_castui", "arith.extsi"):
            self.values[results[0]] = operands[0].astype(np.int64)
        elif name in ("arith.extf", "arith.truncf"):
            self.values[results[0]] = operands[0].astype(_dtype(results[0].type))
        elif name == "gpu.thread_id":
            dimension = str(op.attributes["dimension"])
            self.values[results[0]] = (np.arange(self.threads, dtype=np.int64) if "x" in dimension
                                       else np.zeros(self.threads, np.int64))
        elif name == "gpu.block_id":
            dimension = "xyz".index(str(op.attributes["dimension"])[-2])
            self.values[results[0]] = self.scalar(self.block_id[dimension], results[0].type)
        elif name == "gpu.dynamic_shared_memory":
            self.values[results[0]] = MemRef(self.shared, 0, (len(self.shared),))
        elif name in ("gpu.barrier", "nvvm.cp.async.commit.group", "nvvm.cp.async.wait.group",
                      "nvgpu.mbarrier.init", "nvgpu.mbarrier.arrive.expect_tx",
                      "nvgpu.mbarrier.try_wait.parity", "nvvm.wgmma.fence.aligned",
                      "nvvm.wgmma.commit.group.sync.aligned",
                      "nvvm.wgmma.wait.group.sync.aligned"):
            # Copies are done when issued and the threads run in lockstep.
            pass
        elif name == "nvgpu.mbarrier.create":
            self.values[results[0]] = None
        elif name == "builtin.unrealized_conversion_cast":
            self.values[results[0]] = operands[0]
        elif name == "nvgpu.tma.async.load":
            self.tma_load(op, operands, mask)
        elif name == "nvgpu.warpgroup.generate.descriptor":
            self.values[results[0]] = self.matrix_descriptor(operands[0], operands[1])
        elif name == "llvm.inline_asm" and "wgmma.mma_async" in str(op.attributes["asm_string"]):
            self.values[results[0]] = self.wgmma(op, operands)
        elif name == "memref.view":
            offset = _uniform(operands[1])
            t = ir.MemRefType(results[0].type)
            dtype = _dtype(t.element_type)
            view = self.shared[offset:].view(np.uint8)
            buffer = view[:(len(view) // dtype.itemsize) * dtype.itemsize].view(dtype)
            self.values[results[0]] = MemRef(buffer, 0, t.shape, address=offset)
        elif name == "memref.alloca":
            t = ir.MemRefType(results[0].type)
            size = int(np.prod(t.shape))
            self.values[results[0]] = MemRef(np.zeros((self.threads, size),
                                                      _dtype(t.element_type)), 0, t.shape, True)
        elif name in ("memref.collapse_shape", "memref.expand_shape"):
            # The same elements, row-major, in another shape.
            source = operands[0]
            self.values[results[0]] = MemRef(source.buffer, source.offset,
                                             ir.MemRefType(results[0].type).shape, source.private)
        elif name == "memref.load":
            self.values[results[0]] = self.load(operands[0], operands[1:], mask)
        elif name == "memref.store":
            self.store(operands[1], operands[2:], operands[0], mask)
        elif name == "scf.for":
            self.run_for(op, operands, mask)
        elif name == "scf.if":
            self.run_if(op, operands, mask)
        elif name == "func.call":
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            outputs = self.run_function(self.function(op, callee), operands, mask)
            for result, value in zip(results, outputs):
                self.values[result] = value
        elif name == "nvgpu.device_async_copy":
            self.async_copy(op, operands, mask)
            self.values[results[0]] = None
        elif name == "nvgpu.ldmatrix":
            self.values[results[0]] = self.ldmatrix(op, operands)
        elif name == "vector.load":
            self.values[results[0]] = self.load_vector(op, operands[0], operands[1:], mask)
        elif name == "vector.store":
            self.store_vector(op, operands[1], operands[2:], operands[0], mask)
        elif name == "vector.from_elements":
            self.values[results[0]] = np.stack(operands, axis=1)
        elif name == "vector.extract":
            position = list(ir.DenseI64ArrayAttr(op.attributes["static_position"]))
            self.values[results[0]] = operands[0][(slice(None),) + tuple(position)]
        elif name == "llvm.bitcast":
            self.values[results[0]] = operands[0]
        elif name == "arith.bitcast":
            self.values[results[0]] = _bitcast(operands[0], results[0].type)
        elif name == "nvvm.mma.sync":
            self.values[results[0]] = self.mma_sync(op, operands)
        elif name == "gpu.shuffle":
            self.values[results[0]], self.values[results[1]] = self.shuffle(op, operands)
        elif name == "math.exp":
            self.values[results[0]] = np.exp(operands[0]).astype(operands[0].dtype)
        elif name == "math.fma":
            exact = operands[0].astype(np.float64) * operands[1] + operands[2]
            self.values[results[0]] = exact.astype(operands[0].dtype)
        elif name == "nvgpu.warpgroup.mma":
            self.values[results[0]] = self.warpgroup_mma(op, operands)
        elif name in ("llvm.mlir.undef", "llvm.mlir.poison"):
            self.values[results[0]] = np.zeros((self.threads, _leaves(results[0].type)),
                                               np.float32)
        elif name == "llvm.insertvalue":
            position = list(ir.DenseI64ArrayAttr(op.attributes["position"]))
            start = _leaf_index(results[0].type, position)
            value = operands[0].copy()
            inserted = operands[1].reshape(self.threads, -1)
            value[:, start:start + inserted.shape[1]] = inserted
            self.values[results[0]] = value
        elif name == "llvm.extractvalue":
            position = list(ir.DenseI64ArrayAttr(op.attributes["position"]))
            start = _leaf_index(op.operands[0].type, position)
            count = _leaves(results[0].type)
            value = operands[0][:, start:start + count]
            self.values[results[0]] = value[:, 0] if count == 1 and not isinstance(
                results[0].type, llvm.StructType) else value
        else:
            raise NotImplementedError(f"the SIMT interpreter does not run '{name}'")

    def function(self, op: ir.Operation, name: str) -> ir.Operation:
        table = op
        while table.name != "gpu.module":
            table = table.parent.operation
        for inner in table.regions[0].blocks[0].operations:
            if "sym_name" in inner.operation.attributes and \
                    ir.StringAttr(inner.operation.attributes["sym_name"]).value == name:
                return inner.operation
        raise KeyError(name)

    def run_for(self, op, operands, mask):
        lower, upper, step = (_uniform(v) for v in operands[:3])
        carried = operands[3:]
        body = op.regions[0].blocks[0]
        for i in range(lower, upper, step):
            carried = self.run_block(body, [self.scalar(i, body.arguments[0].type)] + carried,
                                     mask)
        for result, value in zip(op.results, carried):
            self.values[result] = value

    def run_if(self, op, operands, mask):
        condition = operands[0].astype(bool)
        taken = self.run_block(op.regions[0].blocks[0], [], mask & condition) \
            if (mask & condition).any() else None
        other = None
        if op.regions[1].blocks and (mask & ~condition).any():
            other = self.run_block(op.regions[1].blocks[0], [], mask & ~condition)
        for index, result in enumerate(op.results):
            then_value = taken[index] if taken else None
            else_value = other[index] if other else None
            if then_value is None or else_value is None:
                self.values[result] = then_value if then_value is not None else else_value
            else:
                lanes = condition.reshape((-1,) + (1,) * (np.ndim(then_value) - 1))
                self.values[result] = np.where(lanes, then_value, else_value)

    # -- memory --------------------------------------------------------------

    def load(self, memref: MemRef, indices, mask) -> np.ndarray:
        position = np.broadcast_to(memref.linear(indices), (self.threads,))
        position = np.where(mask, position, memref.offset)
        if memref.private:
            return memref.buffer[np.arange(self.threads), position]
        return memref.buffer[position]

    def store(self, memref: MemRef, indices, value, mask) -> None:
        position = np.broadcast_to(memref.linear(indices), (self.threads,))
        value = np.broadcast_to(value, (self.threads,) + np.shape(value)[1:])
        if memref.private:
            memref.buffer[np.arange(self.threads)[mask], position[mask]] = value[mask]
        else:
            memref.buffer[position[mask]] = value[mask]

    def vector_positions(self, op, memref: MemRef, indices, width: int, mask) -> np.ndarray:
        """The element positions of each thread's vector access, checked to
        stay in the memref's last dim and to be aligned as the op says
        (buffers start aligned)."""
        position = memref.linear(indices)
        itemsize = memref.buffer.dtype.itemsize
        alignment = ir.IntegerAttr(op.attributes["alignment"]).value \
            if "alignment" in op.attributes else itemsize
        last = indices[-1]
        if (mask & ((position * itemsize) % alignment != 0)).any():
            raise AssertionError(f"'{op.name}' at an address not aligned to {alignment} bytes")
        if (mask & (last + width > memref.shape[-1])).any():
            raise AssertionError(f"'{op.name}' past the end of its memref's row")
        return position[:, None] + np.arange(width)

    def load_vector(self, op, memref: MemRef, indices, mask) -> np.ndarray:
        width = ir.VectorType(op.results[0].type).shape[0]
        positions = self.vector_positions(op, memref, indices, width, mask)
        positions = np.where(mask[:, None], positions, memref.offset)
        return memref.buffer[positions]

    def store_vector(self, op, memref: MemRef, indices, value, mask) -> None:
        width = value.shape[1]
        positions = self.vector_positions(op, memref, indices, width, mask)
        memref.buffer[positions[mask]] = value[mask]

    def async_copy(self, op, operands, mask) -> None:
        # Operands: dst, dstIndices..., src, srcIndices..., [srcElements]
        names = list(op.operands)
        dst_memref = self.get(names[0])
        dst_rank = len(dst_memref.shape)
        dst_indices = [self.get(v) for v in names[1:1 + dst_rank]]
        src_memref = self.get(names[1 + dst_rank])
        src_rank = len(src_memref.shape)
        src_indices = [self.get(v) for v in names[2 + dst_rank:2 + dst_rank + src_rank]]
        width = ir.IntegerAttr(op.attributes["dstElements"]).value
        rest = names[2 + dst_rank + src_rank:]
        count = self.get(rest[0]) if rest else np.full(self.threads, width)
        source = src_memref.linear(src_indices)
        target = dst_memref.linear(dst_indices)
        for e in range(width):
            live = mask & (e < count)
            value = np.zeros(self.threads, dst_memref.buffer.dtype)
            value[live] = src_memref.buffer[(source + e)[live]]
            dst_memref.buffer[(target + e)[mask]] = value[mask]

    # -- warps -----------------------------------------------------------------

    def ldmatrix(self, op, operands) -> np.ndarray:
        memref = operands[0]
        position = memref.linear(operands[1:])
        tiles = ir.IntegerAttr(op.attributes["numTiles"]).value
        transpose = ir.BoolAttr(op.attributes["transpose"]).value
        out = np.zeros((self.threads, tiles, 2), memref.buffer.dtype)
        for warp in range(self.threads // WARP):
            lanes = np.arange(warp * WARP, (warp + 1) * WARP)
            for tile in range(tiles):
                rows = position[lanes[tile * 8:(tile + 1) * 8]]
                matrix = np.stack([memref.buffer[r:r + 8] for r in rows])
                for lane in range(WARP):
                    g, t = lane // 4, lane % 4
                    pair = matrix[2 * t:2 * t + 2, g] if transpose else matrix[g, 2 * t:2 * t + 2]
                    out[lanes[lane], tile] = pair
        return out

    def shuffle(self, op, operands) -> tuple[np.ndarray, np.ndarray]:
        """shfl.sync.bfly over whole warps: lane l reads lane l ^ offset."""
        if "xor" not in str(op.attributes["mode"]) or _uniform(operands[2]) != WARP:
            raise NotImplementedError(f"the SIMT interpreter runs xor shuffles over whole "
                                      f"warps, not {op}")
        moved = op.operands[0].type
        if isinstance(moved, ir.IntegerType) and moved.width > 32 or isinstance(moved, ir.F64Type):
            raise NotImplementedError(f"shfl.sync moves 32 bits, not {moved}")
        lanes = np.arange(self.threads)
        source = (lanes - lanes % WARP) + (lanes % WARP ^ _uniform(operands[1]))
        return operands[0][source], np.ones(self.threads, bool)

    def mma_sync(self, op, operands) -> np.ndarray:
        shape = str(op.attributes["shape"])
        k = int(shape.split("k = ")[1].split(">")[0])
        segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        a = operands[:segments[0]]
        b = operands[segments[0]:segments[0] + segments[1]]
        c = operands[segments[0] + segments[1]:]
        out = np.zeros((self.threads, 4), np.float32)
        for warp in range(self.threads // WARP):
            lanes = np.arange(warp * WARP, (warp + 1) * WARP)
            A = np.zeros((16, k), np.float32)
            B = np.zeros((k, 8), np.float32)
            C = np.zeros((16, 8), np.float32)
            for lane in range(WARP):
                g, t = lane // 4, lane % 4
                thread = lanes[lane]
                if k == 16:
                    for r, (row, col) in enumerate(((g, 2 * t), (g + 8, 2 * t), (g, 2 * t + 8),
                                                    (g + 8, 2 * t + 8))):
                        A[row, col:col + 2] = np.asarray(a[r][thread], np.float32)
                    for r, row in enumerate((2 * t, 2 * t + 8)):
                        B[row:row + 2, g] = np.asarray(b[r][thread], np.float32)
                else:
                    for r, (row, col) in enumerate(((g, t), (g + 8, t), (g, t + 4),
                                                    (g + 8, t + 4))):
                        A[row, col] = a[r][thread]
                    for r, row in enumerate((t, t + 4)):
                        B[row, g] = b[r][thread]
                for r, (row, col) in enumerate(((g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t),
                                                (g + 8, 2 * t + 1))):
                    C[row, col] = c[r][thread]
            if k == 8:
                A, B = _tf32(A), _tf32(B)
            D = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32) + C
            for lane in range(WARP):
                g, t = lane // 4, lane % 4
                out[lanes[lane]] = [D[g, 2 * t], D[g, 2 * t + 1], D[g + 8, 2 * t],
                                    D[g + 8, 2 * t + 1]]
        return out


    # -- sm_90a: TMA and wgmma ---------------------------------------------------

    def tma_load(self, op, operands, mask) -> None:
        """The box at the coordinates (innermost first) of the issuing
        thread, zeros out of bounds, into the shared view, swizzled as the
        descriptor says."""
        if not mask.any():
            return
        sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        dst, _, tensor_map = operands[:3]
        thread = int(np.argmax(mask))
        coordinates = [int(c[thread]) for c in operands[3:3 + sizes[3]]][::-1]
        array, box = tensor_map.array, tensor_map.box
        if len(coordinates) != array.ndim or tuple(dst.shape) != box:
            raise NotImplementedError(f"a TMA box {box} at {coordinates} into {dst.shape}")
        data = np.zeros(box, array.dtype)
        inside = tuple(slice(max(c, 0), min(c + b, d)) for c, b, d in
                       zip(coordinates, box, array.shape))
        if all(s.start < s.stop for s in inside):
            data[tuple(slice(s.start - c, s.stop - c) for s, c in zip(inside, coordinates))] = \
                array[inside]
        rows, cols = box[-2], box[-1]
        itemsize = array.dtype.itemsize
        r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
        address = dst.address + r * cols * itemsize + c * itemsize
        if tensor_map.swizzled:
            address = _swizzled(address)
        element_bytes = data.reshape(rows, cols)[..., None].view(np.uint8).reshape(rows, cols,
                                                                                  itemsize)
        for byte in range(itemsize):
            self.shared[address + byte] = element_bytes[..., byte]

    def matrix_descriptor(self, tensor: MemRef, tensor_map: TensorMap) -> np.ndarray:
        """The wgmma matrix descriptor as upstream's lowering of
        nvgpu.warpgroup.generate.descriptor makes it: 128-byte swizzle, the
        stride byte offset of 8 rows of 128 bytes, a leading byte offset of
        the box's first dim x 128 bytes, the start address in 16 bytes."""
        if not tensor_map.swizzled:
            raise NotImplementedError("wgmma descriptors of tiles that are not swizzled")
        leading = tensor_map.box[0] * 128 >> 4
        descriptor = (1 << 62) | (1024 >> 4) << 32 | leading << 16 | (
            (tensor.address >> 4) & 0x3FFF)
        return np.full(self.threads, descriptor, np.int64)

    def descriptor_matrix(self, descriptor: np.ndarray, rows: int, cols: int, k_major: bool,
                          dtype: np.dtype) -> np.ndarray:
        """The rows x cols matrix a wgmma reads through a descriptor (A: M x
        K, B: K x N), from 128-byte swizzled shared memory: K-major, row i
        at (i / 8) stride-offsets and (i % 8) x 128 bytes and k contiguous;
        MN-major (B), n contiguous in 64-element rows, n / 64 leading
        offsets, k at (k / 8) stride-offsets and (k % 8) x 128 bytes."""
        d = _uniform(descriptor) & ((1 << 64) - 1)
        start = (d & 0x3FFF) << 4
        leading = ((d >> 16) & 0x3FFF) << 4
        stride = ((d >> 32) & 0x3FFF) << 4
        if d >> 62 != 1:
            raise NotImplementedError("wgmma descriptors without the 128-byte swizzle")
        i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
        size = dtype.itemsize
        if k_major:
            address = start + i // 8 * stride + i % 8 * 128 + j * size
        else:  # B as K x N, N contiguous
            per_row = 128 // size
            address = start + j // per_row * leading + j % per_row * size + i // 8 * stride \
                + i % 8 * 128
        address = _swizzled(address)
        raw = np.stack([self.shared[address + b] for b in range(size)], axis=-1)
        return raw.copy().view(dtype).reshape(rows, cols).astype(np.float32)

    def wgmma(self, op, operands) -> np.ndarray:
        """wgmma.mma_async m64nNk16 with an f32 accumulator tied in place:
        D += A x B over the warpgroup (the block), A from a descriptor or
        from four registers a lane in mma.sync's A layout."""
        text = str(ir.StringAttr(op.attributes["asm_string"]).value)
        n, dtype = re.search(r"m64n(\d+)k16\.f32\.(\w+)\.", text).groups()
        n = int(n)
        immediates = re.search(r"p, 1, 1, (?:(\d), )?(\d);", text)
        if self.threads != 128 or immediates.group(1) not in (None, "0"):
            raise NotImplementedError(f"a wgmma of {self.threads} threads or A transposed")
        k_major_b = immediates.group(2) == "0"
        element = numpy_dtype(dtype)
        count = n // 2
        accumulator, rest = operands[:count], operands[count:]
        registers = len(rest) == 6
        A = np.zeros((64, 16), np.float32)
        tid = np.arange(128)
        w, g, t = tid // WARP, tid % WARP // 4, tid % 4
        if registers:
            for r, (dr, dc) in enumerate(((0, 0), (8, 0), (0, 8), (8, 8))):
                pair = np.asarray(rest[r]).astype(np.float32)
                for v in range(2):
                    A[16 * w + g + dr, 2 * t + dc + v] = pair[:, v]
        else:
            A = self.descriptor_matrix(rest[0], 64, 16, True, element)
        b = rest[4] if registers else rest[1]
        return self.warpgroup_product(accumulator, A, self.b_matrix(b, n, k_major_b, element))

    def b_matrix(self, descriptor, n: int, k_major: bool, element: np.dtype) -> np.ndarray:
        """wgmma's B (16 x n) through its descriptor, K-major or MN-major."""
        return self.descriptor_matrix(descriptor, n, 16, True, element).T if k_major \
            else self.descriptor_matrix(descriptor, 16, n, False, element)

    def warpgroup_product(self, accumulator, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """D += A x B of one m64nNk16: the lanes' accumulator registers (N / 2
        of them, in wgmma's layout) in and out."""
        n = B.shape[1]
        count = n // 2
        D = np.zeros((64, n), np.float32)
        tid = np.arange(128)
        w, g, t = tid // WARP, tid % WARP // 4, tid % 4
        for j in range(n // 8):
            for h in range(2):
                for v in range(2):
                    D[16 * w + g + 8 * h, 8 * j + 2 * t + v] = accumulator[4 * j + 2 * h + v]
        D = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32) + D
        out = np.zeros((128, count), np.float32)
        for j in range(n // 8):
            for h in range(2):
                for v in range(2):
                    out[:, 4 * j + 2 * h + v] = D[16 * w + g + 8 * h, 8 * j + 2 * t + v]
        return out

    def warpgroup_mma(self, op, operands) -> np.ndarray:
        """nvgpu.warpgroup.mma as upstream's lowering (NVGPUToNVVM's
        WarpgroupGemm) expands it: per 64 rows of the accumulator i and
        k-step k of 16, one m64nNk16 whose A descriptor is advanced by
        (16 k + K x A's dim 1 x i) elements and whose B descriptor by B's
        dim 0 x 16 k elements (in 16-byte units); A K-major (not
        transposed), B MN-major where transposeB is set, else K-major. The
        accumulator travels as M / 64 structs of N / 2 f32 (flattened)."""
        if "transposeA" in op.attributes or self.threads != 128:
            raise NotImplementedError("a warpgroup.mma with A transposed or not one warpgroup")
        (a_shape, dtype), (b_shape, _) = (_described(v.type) for v in op.operands[:2])
        element = numpy_dtype(dtype)
        (m, k), n = a_shape, b_shape[1]
        k_major_b = "transposeB" not in op.attributes
        size = element.itemsize
        descriptor_a, descriptor_b, accumulator = operands[:3]
        out = np.array(accumulator, np.float32).reshape(self.threads, -1).copy()
        per_chunk = n // 2
        for i in range(m // 64):
            chunk = [out[:, i * per_chunk + c] for c in range(per_chunk)]
            for step in range(k // 16):
                A = self.descriptor_matrix(
                    descriptor_a + ((16 * step + k * a_shape[1] * i) * size >> 4), 64, 16, True,
                    element)
                B = self.b_matrix(descriptor_b + (b_shape[0] * 16 * step * size >> 4), n,
                                  k_major_b, element)
                product = self.warpgroup_product(chunk, A, B)
                chunk = [product[:, c] for c in range(per_chunk)]
            out[:, i * per_chunk:(i + 1) * per_chunk] = np.stack(chunk, axis=1)
        return out


def _described(t: ir.Type) -> tuple[list[int], str]:
    """The shape and element type of the tensor a warpgroup descriptor
    type describes."""
    found = re.search(r"tensor = memref<(\d+(?:x\d+)*)x(\w+),", str(t))
    return [int(d) for d in found.group(1).split("x")], found.group(2)


def _leaves(t: ir.Type) -> int:
    """The scalars of an LLVM struct (nested ones flattened), 1 otherwise."""
    if isinstance(t, llvm.StructType):
        return sum(_leaves(member) for member in llvm.StructType(t).body)
    return 1


def _leaf_index(t: ir.Type, position) -> int:
    """Where the member at `position` of an LLVM struct starts among its
    flattened scalars."""
    start = 0
    for index in position:
        body = llvm.StructType(t).body
        start += sum(_leaves(member) for member in body[:index])
        t = body[index]
    return start


def _bitcast(value: np.ndarray, t: ir.Type) -> np.ndarray:
    """arith.bitcast between f32 and i32 (integers are held as int64);
    llvm.bitcast, which hands f32 registers to mma.sync as i32, keeps the
    floats."""
    if isinstance(t, ir.IntegerType):
        return np.asarray(value, np.float32).view(np.int32).astype(np.int64)
    return (np.asarray(value, np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.float32)


def _tf32(x: np.ndarray) -> np.ndarray:
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
    return bits.view(np.float32)


def launch(module: ir.Module, arrays: list[np.ndarray]) -> None:
    """Runs the host function's gpu.launch_func ops of a `gpu`-stage module
    on NumPy arrays (the host function's memref arguments, in order),
    writing them in place."""
    host = next(op.operation for op in module.body.operations
                if op.operation.name == "func.func" and op.operation.regions[0].blocks)
    arguments = dict(zip(host.regions[0].blocks[0].arguments, arrays))
    constants = {}
    for op in host.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "arith.constant":
            constants[op.results[0]] = ir.IntegerAttr(op.attributes["value"]).value
        elif op.name in ("memref.collapse_shape", "memref.expand_shape"):
            arguments[op.results[0]] = arguments[op.operands[0]].reshape(
                ir.MemRefType(op.results[0].type).shape)
        elif op.name in ("memref.cast", "builtin.unrealized_conversion_cast"):
            arguments[op.results[0]] = arguments[op.operands[0]]
        elif op.name == "nvgpu.tma.create.descriptor":
            arguments[op.results[0]] = TensorMap.of_type(arguments[op.operands[0]],
                                                         op.results[0].type)
        elif op.name == "gpu.launch_func":
            operands = list(op.operands)
            grid = [constants[v] for v in operands[:3]]
            block = [constants[v] for v in operands[3:6]]
            shared = constants[operands[6]]
            kernel_arguments = [arguments[v] for v in operands[7:]]
            kernel_name = ir.SymbolRefAttr(op.attributes["kernel"])
            run_kernel(module, str(kernel_name).split("::@")[1], grid, block, shared,
                       kernel_arguments)


def run_kernel(module, name, grid, block, shared, arrays) -> None:
    gpu_module = next(op.operation for op in module.body.operations
                      if op.operation.name == "gpu.module")
    kernel = next(op.operation for op in gpu_module.regions[0].blocks[0].operations
                  if "sym_name" in op.operation.attributes
                  and ir.StringAttr(op.operation.attributes["sym_name"]).value == name)
    threads = int(np.prod(block))
    memrefs = [a if isinstance(a, TensorMap) else MemRef(a.reshape(-1), 0, a.shape)
               for a in arrays]
    for z in range(grid[2]):
        for y in range(grid[1]):
            for x in range(grid[0]):
                runner = Block(module, threads, (x, y, z), shared)
                runner.run_function(kernel, memrefs, np.ones(threads, bool))
