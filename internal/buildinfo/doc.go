// Package buildinfo is the one home of lockd's version string: what
// `lockd version` prints, what SQL's version() reports and what the
// lockd_build_info metric carries.
//
// # What it owns
//
// [Version], worked out once: the value linked in with
//
//	go build -ldflags "-X lockd/internal/buildinfo.version=v1.2.3" ./cmd/lockd
//
// or else "dev-" and the first 12 hex digits of the VCS revision that `go
// build` stamps into the binary, or else "dev" (tests, builds outside a
// repository).
//
// # What it must not do
//
// buildinfo is a leaf: it imports only the standard library, and nothing in
// it may be changed at run time, so every reader sees the same string. The
// server_version setting (a 15.x string that clients' version checks read)
// is not lockd's version and does not live here.
//
// # Concurrency
//
// [Version] is safe to call from any goroutine.
package buildinfo
