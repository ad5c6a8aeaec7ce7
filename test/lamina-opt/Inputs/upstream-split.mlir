func.func @first(%a: i32, %b: i32) -> i32 {
  %0 = arith.addi %a, %b : i32
  %1 = arith.addi %a, %b : i32
  %2 = arith.muli %0, %1 : i32
  return %2 : i32
}

// -----

func.func @second(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %0 = arith.addi %a, %c0 : i32
  return %0 : i32
}

// -----

func.func @expected_failure(%a: i32) -> i32 {
  // expected-error @+1 {{use of undeclared SSA value name}}
  return %b : i32
}

// -----

// An empty chunk still prints an empty module.
