package buildinfo

import (
	"runtime/debug"
	"sync"
)

// version is set at build time with
// -ldflags "-X lockd/internal/buildinfo.version=...". Read it only through
// Version.
var version = ""

// Version returns lockd's version: the linked-in string, else
// "dev-<revision>" from the binary's VCS stamp, else "dev".
func Version() string { return resolved() }

var resolved = sync.OnceValue(func() string { return resolve(version, debug.ReadBuildInfo) })

// resolve picks the version from the linked-in value and the build info.
func resolve(linked string, read func() (*debug.BuildInfo, bool)) string {
	if linked != "" {
		return linked
	}
	if bi, ok := read(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
	}
	return "dev"
}
