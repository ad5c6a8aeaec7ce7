// Malformed: a type alias that is never defined.
// ERROR-LINE: 4
// ERROR: undefined symbol alias id 'undefined_alias'
func.func @f(%x: !undefined_alias) {
  return
}
