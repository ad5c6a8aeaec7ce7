// Malformed: a dense array of index elements (upstream's parser aborts on it).
// ERROR-LINE: 4
// ERROR: dense arrays of index elements are not supported
func.func @f() attributes {perm = array<index: 1, 0>} {
  return
}
