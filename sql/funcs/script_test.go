package funcs_test

import (
	"testing"

	"lockd/internal/sqlscript"
)

// TestScripts runs the SQL scripts of testdata/scripts against a real
// lockd over TCP: statements, and what a client sees back. Run with
// -rewrite to regenerate the expected outputs (then read the diff).
func TestScripts(t *testing.T) {
	sqlscript.RunDir(t, "testdata/scripts")
}
