func.func @sum(%n: index, %init: f32, %buf: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (f32) {
    %v = memref.load %buf[%i] : memref<?xf32>
    %w = memref.load %buf[%i] : memref<?xf32>
    %s = arith.addf %v, %w : f32
    %t = arith.addf %s, %zero : f32
    %u = arith.addf %acc, %t : f32
    scf.yield %u : f32
  }
  return %r : f32
}

func.func @select(%c: i1, %a: i32) -> i32 {
  %true = arith.constant true
  %0 = arith.select %true, %a, %a : i32
  %1 = scf.if %c -> (i32) {
    scf.yield %0 : i32
  } else {
    scf.yield %a : i32
  }
  return %1 : i32
}
