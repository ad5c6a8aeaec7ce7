// RUN: lamina-opt %s --split-input-file --verify-diagnostics

// Pipelining annotations open loops; mbarriers and their users are typed.

func.func @pipeline_outside_loop() attributes {hw.kernel} {
  // expected-error @+1 {{'hw.pipeline' op must be the first op of an scf.for body}}
  "hw.pipeline"() {stages = 2 : i64} : () -> ()
  return
}

// -----

func.func @pipeline_not_first() attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
    "hw.barrier"() : () -> ()
    // expected-error @+1 {{'hw.pipeline' op must be the first op of an scf.for body}}
    "hw.pipeline"() {stages = 2 : i64} : () -> ()
  }
  return
}

// -----

func.func @pipeline_stages() attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
    // expected-error @+1 {{'hw.pipeline' op 'stages' must be >= 1, got 0}}
    "hw.pipeline"() {stages = 0 : i64} : () -> ()
  }
  return
}

// -----

func.func @mbarrier_count() attributes {hw.kernel} {
  // expected-error @+1 {{'hw.mbarrier_init' op 'count' and 'barriers' must be >= 1, got 0 and 1}}
  %bar = "hw.mbarrier_init"() {count = 0 : i64} : () -> !hw.mbarrier
  return
}

// -----

func.func @mbarrier_wait_parity(%p: i1) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %bar = "hw.mbarrier_init"() : () -> !hw.mbarrier
  // expected-error @+1 {{'hw.mbarrier_wait' op operand #2 has type i1; expected index}}
  "hw.mbarrier_wait"(%bar, %c0, %p) : (!hw.mbarrier, index, i1) -> ()
  return
}

// -----

func.func @token_type() attributes {hw.kernel} {
  // expected-error @+1 {{'hw.mbarrier_init' op result has type !hw.token; expected !hw.mbarrier}}
  %bar = "hw.mbarrier_init"() : () -> !hw.token
  return
}

// -----

func.func @unknown_type() attributes {hw.kernel} {
  // expected-error @+1 {{type '!hw.fence' is not a type of the hw dialect}}
  %bar = "hw.mbarrier_init"() : () -> !hw.fence
  return
}
