//go:build invariants

package locks

// invariantsEnabled turns on expensive self-checks (built with -tags invariants).
const invariantsEnabled = true
