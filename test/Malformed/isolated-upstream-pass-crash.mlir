// Malformed: a function returning one allocation twice, on which an upstream pass crashes: isolated, the crash is an error.
// TOOL: lamina-opt --isolate-passes --buffer-results-to-out-params=hoist-static-allocs
// ERROR-LINE: 1
// ERROR: upstream pass 'buffer-results-to-out-params{hoist-static-allocs}' crashed (signal 11)
func.func private @f() -> (memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  return %a, %a : memref<4xf32>, memref<4xf32>
}
