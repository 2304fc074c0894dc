package exec

import "testing"

// TestCommandTag checks the kept last tag against a tag made afresh as
// the word and the count change.
func TestCommandTag(t *testing.T) {
	var x Executor
	for _, tc := range []struct {
		word string
		n    int64
		want string
	}{
		{"SELECT", 1, "SELECT 1"},
		{"SELECT", 1, "SELECT 1"},
		{"SELECT", 0, "SELECT 0"},
		{"UPDATE", 0, "UPDATE 0"},
		{"DELETE", 0, "DELETE 0"},
		{"DELETE", 12345678901, "DELETE 12345678901"},
		{"SELECT", 1, "SELECT 1"},
	} {
		if got := x.commandTag(tc.word, tc.n); got != tc.want {
			t.Errorf("commandTag(%q, %d) = %q, want %q", tc.word, tc.n, got, tc.want)
		}
	}
}
