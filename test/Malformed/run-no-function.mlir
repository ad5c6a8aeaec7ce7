// Malformed: a program with no function to run.
// TOOL: lamina-run --random
// ERROR-LINE: 5
// ERROR: cannot choose the entry function
module {
}
