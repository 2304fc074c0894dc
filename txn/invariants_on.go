//go:build invariants

package txn

// invariantsEnabled turns on expensive self-checks (built with -tags invariants).
const invariantsEnabled = true
