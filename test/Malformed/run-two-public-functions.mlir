// Malformed: two public functions and no @main.
// TOOL: lamina-run --random
// ERROR-LINE: 1
// ERROR: cannot choose the entry function
func.func @a() {
  return
}
func.func @b() {
  return
}
