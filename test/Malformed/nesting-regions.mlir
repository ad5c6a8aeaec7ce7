// Malformed: 300 nested regions (two brackets each).
// ERROR-LINE: 260
// ERROR: brackets nest more than 512 levels deep
func.func @f() {
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
"scf.execute_region"() ({
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
  return
}
