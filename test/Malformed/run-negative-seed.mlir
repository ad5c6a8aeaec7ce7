// Malformed: a negative random seed.
// TOOL: lamina-run --random --seed -1
// ERROR-LINE: none
// ERROR: --seed must be a non-negative integer, got -1
func.func @main() {
  return
}
