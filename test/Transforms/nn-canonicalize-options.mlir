// RUN: lamina-opt %s --nn-canonicalize='remove-unused=false' | FileCheck %s --check-prefix=KEEP
// RUN: lamina-opt %s -p 'builtin.module(func.func(nn-canonicalize{max-iterations=3 remove-unused=true}))' | FileCheck %s --check-prefix=ERASE
// RUN: not lamina-opt %s --nn-canonicalize='no-such-option=1' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not lamina-opt %s --nn-canonicalize='max-iterations=many' 2>&1 | FileCheck %s --check-prefix=BADVALUE

// KEEP-LABEL: func.func @unused
// KEEP: "nn.exp"
// ERASE-LABEL: func.func @unused
// ERASE-NOT: "nn.exp"
// BAD: lamina-opt: error: pass 'nn-canonicalize' has no option 'no-such-option'
// BADVALUE: lamina-opt: error: option 'max-iterations' of pass 'nn-canonicalize' expects int, got 'many'
func.func @unused(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %x : tensor<4xf32>
}
