// Malformed: an entry function that does not exist.
// TOOL: lamina-run --random --entry g
// ERROR-LINE: 1
// ERROR: no function @g in the module
func.func @main() {
  return
}
