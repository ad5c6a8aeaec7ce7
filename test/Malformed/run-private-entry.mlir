// Malformed: an entry function that is private.
// TOOL: lamina-run --random --entry main
// ERROR-LINE: 5
// ERROR: @main is private
func.func private @main() {
  return
}
