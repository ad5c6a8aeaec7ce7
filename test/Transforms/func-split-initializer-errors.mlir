// RUN: lamina-opt %s --split-input-file --func-split-initializer --verify-diagnostics

// A function naming an initialiser the module does not define.

// expected-error @+1 {{@f names initialiser @f_init, which the module does not define}}
func.func @f(%x: tensor<2xf32>, %p: tensor<2xf32> {lamina.prepared}) -> tensor<2xf32>
    attributes {lamina.initializer = @f_init} {
  %0 = "nn.add"(%x, %p) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// An initialiser returning fewer values than the function takes prepared weights.

func.func @g_init(%w: tensor<2xf32> {lamina.bound}) -> tensor<2xf32> {
  return %w : tensor<2xf32>
}
// expected-error @+1 {{@g takes 2 prepared weights but its initialiser returns 1}}
func.func @g(%x: tensor<2xf32>, %p: tensor<2xf32> {lamina.prepared},
             %q: tensor<2xf32> {lamina.prepared}) -> tensor<2xf32>
    attributes {lamina.initializer = @g_init} {
  %0 = "nn.add"(%x, %p) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "nn.add"(%0, %q) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}
