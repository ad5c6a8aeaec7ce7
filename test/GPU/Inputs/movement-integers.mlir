// Elementwise groups on integers: casts between f32, f16, bf16, i32, i64
// and i1, an integer comparison broadcasting a row, integer adds and a
// select of i64.
func.func @main(%x: tensor<5x7xf32>, %i: tensor<5x7xi32>, %l: tensor<7xi64>, %h: tensor<5x7xf16>) -> (tensor<5x7xi64>, tensor<5x7xf32>, tensor<5x7xi1>, tensor<5x7xi32>, tensor<5x7xbf16>, tensor<5x7xi64>, tensor<5x7xf16>) {
  %0 = "nn.cast"(%x) : (tensor<5x7xf32>) -> tensor<5x7xi64>
  %1 = "nn.cast"(%i) : (tensor<5x7xi32>) -> tensor<5x7xf32>
  %il0 = "nn.cast"(%i) : (tensor<5x7xi32>) -> tensor<5x7xi64>
  %2 = "nn.compare"(%il0, %l) {predicate = "ge"} : (tensor<5x7xi64>, tensor<7xi64>) -> tensor<5x7xi1>
  %li = "nn.cast"(%l) : (tensor<7xi64>) -> tensor<7xi32>
  %3 = "nn.add"(%i, %li) : (tensor<5x7xi32>, tensor<7xi32>) -> tensor<5x7xi32>
  %b = "nn.cast"(%2) : (tensor<5x7xi1>) -> tensor<5x7xbf16>
  %m = "nn.cast"(%h) : (tensor<5x7xf16>) -> tensor<5x7xi1>
  %il = "nn.cast"(%i) : (tensor<5x7xi32>) -> tensor<5x7xi64>
  %s = "nn.select"(%m, %il, %0) : (tensor<5x7xi1>, tensor<5x7xi64>, tensor<5x7xi64>) -> tensor<5x7xi64>
  %hm = "nn.mul"(%h, %h) : (tensor<5x7xf16>, tensor<5x7xf16>) -> tensor<5x7xf16>
  %hc = "nn.cast"(%s) : (tensor<5x7xi64>) -> tensor<5x7xf16>
  %6 = "nn.sub"(%hm, %hc) : (tensor<5x7xf16>, tensor<5x7xf16>) -> tensor<5x7xf16>
  return %0, %1, %2, %3, %b, %s, %6 : tensor<5x7xi64>, tensor<5x7xf32>, tensor<5x7xi1>, tensor<5x7xi32>, tensor<5x7xbf16>, tensor<5x7xi64>, tensor<5x7xf16>
}
