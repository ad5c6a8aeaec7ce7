// Malformed: text that is not MLIR at all.
// ERROR-LINE: 4
// ERROR: custom op 'this' is unknown
this is not an MLIR file

