//go:build !invariants

package txn

// invariantsEnabled turns on expensive self-checks; build with
// -tags invariants to enable them.
const invariantsEnabled = false
