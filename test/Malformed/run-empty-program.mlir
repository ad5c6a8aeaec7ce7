// Malformed: a file with nothing but comments.
// TOOL: lamina-run --random
// ERROR-LINE: 1
// ERROR: cannot choose the entry function

