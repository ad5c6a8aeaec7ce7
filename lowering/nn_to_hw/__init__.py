"""--convert-nn-to-hw: nn programs as hw kernels for an NVIDIA architecture.

Each fusion group (`nn.fused`, from `nn-fuse`) becomes one kernel and its
launch, and so does each nn op outside a group that a kernel covers:

* contraction groups: the matmul's kernel (f16, bf16 and f32 on tensor
  cores, an operand made by a transpose of its last two dims read in
  place), the group's other ops its
  epilogue (`group_chain`: elementwise ops of the result's shape with an
  arith-only scalar form, casts, splat constants, arguments shaped like
  the result or like a row of it; each op computed in f32 and rounded to
  its type, as the nn references do). A group that is no such chain is
  lowered op by op;
* elementwise groups (and elementwise ops): a grid-stride kernel over the
  result's index space, each block a tile of consecutive elements
  (`nvidia.elementwise_kernel_shape`), each thread its vectors of it;
* reduction groups (and reductions): a row kernel, one block per row (a
  warp for short rows, `nvidia.row_kernel_shape`), the blocks striding
  over the rows, the row held in registers so that its inputs are read
  once and its outputs written once. A row is the folded axes' elements:
  contiguous (and read in vectors) where they are trailing, else walked in
  place, strided, with no transpose. A row longer than the registers hold
  (16384 elements) is walked in chunks, once per reduction (the chunks'
  folds folded) and once for the results, its values computed again in
  each pass.

* data movement (transpose, broadcast_to, slice, pad, concat, gather,
  iota, cumsum, argmax) and pooling: a grid-stride kernel over the
  result's index space, each element read through the op's index map
  (`hw.gather_elements`), a swap of the last two dims through shared
  memory; a reshape is a view of its operand's buffer.
* attention (`nn.attention`): a flash-attention kernel, one block per
  query tile of each batch entry looping over key tiles with an online
  softmax, the scores never in global memory (`attention`); on sm_90a,
  f16 and bf16 ones load Q, K and V by TMA on mbarriers and multiply by
  wgmma.
* convolutions (`nn.conv2d`, alone or with the elementwise ops of its
  convolution group as the epilogue; `conv`): f16 and bf16 ones of one
  group as an implicit GEMM on tensor cores (the matmul kernel on the
  pixels by the O channels, K = C*KH*KW taps, each K step's tile of the
  input's im2col matrix gathered into shared memory, `hw.im2col`, the
  OIHW filter's rows read in place; an NCHW result a batch of the images'
  O x OH*OW matrices), the others as a direct kernel on
  CUDA cores (a thread per output element summing its window in f32,
  `hw.conv_elements`, the group's ops computed on it in registers);
  `nvidia.conv_kernel` chooses. A group built around a pooling is lowered
  op by op.

Elementwise and row kernels are written the same way (`GroupKernel`): each
value of the group is a 1-d register tile, a row's (or a tile's) elements
or a row's statistic (one element every thread holds); inputs are loaded
per thread, broadcast into the group's index space (`hw.load_elements`: an
operand that broadcasts is read from global memory per element rather than
held by other threads), each nn op is the `hw.elementwise` of its scalar
form (`hw.cast` for casts), each reduction a `hw.block_reduce` (warp
shuffles, then a shared scratch of one f32 per warp between barriers) in
f32 with its finish (a mean's division), and outputs are stored as runs
(`hw.store_elements`). Why hw kernels rather than linalg -> gpu through
the transform dialect: the row kernels keep a row in registers across
several reductions and their consumers (softmax's two passes over one
read), which tiling each linalg op on its own does not, and the emulation
and the hazard checker see the block-collective ops.

The kernel kinds are modules of this package: `matmul` (contraction
groups), `groups` (elementwise and row kernels), `attention` (flash
attention), `movement` (data movement), `pooling`, `conv` (convolutions); `kernels` holds what
they share, `convert` the pass.

The lowerings are class-keyed, in the registry of this conversion
(`lamina.lowering.registry`, `to="hw"`), where the matmul chain's is
registered for `nn.MatmulOp` and a plugin registers its op's:

    @lowering(MyOp, to="hw")
    def lower_my_op(op, target: HWLowering) -> list[ir.Operation] | None:
        kernel = new_kernel(target.kernels, target.name, argument_types, loc)
        ...                                   # the kernel's hw ops
        launch(op.operation, [x], target.name, grid)
        return [op.operation]                 # the ops it lowered

Each op of a host function with a lowering (its class's or its nearest
base class's) is offered to it in order, the op's location current; the
function returns the ops it lowered, whose results it has replaced (the
pass erases them, last first), or None to leave the op. `new_kernel` and
`launch` build the kernel function and replace the op's result by a
launch's output buffer.

Expects verified nn IR (fusion groups formed or not). An nn op it does not
convert is an error at the op saying why (the cuda targets have no other
way to the GPU yet), unless `keep-unconverted` is set: attention with a
mask broadcast over queries or keys, or with head dims whose tiles need
more shared memory than a block has. Booleans in global memory are i1 memrefs here (bytes after
convert-hw-to-nvgpu, through cpu-widen-bool-memrefs). Guarantees: the
groups and ops it converts are gone, and so are the bodies of the groups
(and the transposes a matmul kernel reads in place, where it was their
only user);
each kernel verifies and computes the values of its ops, f16 and bf16
products and sums accumulated in f32 and rounded once, f32 products
accurate to f32 (3xTF32, or rounded to tf32 where nn.matmul allows it),
each elementwise op rounded to its type, as the nn references do;
convolutions' sums accumulated in f32 with the bias and rounded once.
"""

# The kernel kinds register their lowerings when imported.
from lamina.lowering.nn_to_hw import attention, conv, groups, matmul, movement, pooling  # noqa: F401
from lamina.lowering.nn_to_hw.convert import ConvertNNToHW
from lamina.lowering.nn_to_hw.kernels import (TO_HW, GroupNotLowered, HWLowering, is_empty,
                                              launch, new_kernel, reshaped)
from lamina.lowering.nn_to_hw.matmul import TileConfig, choose_tiles, parse_tiles
