package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	stamped := func(rev string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}}}, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	for _, tc := range []struct {
		name, linked string
		read         func() (*debug.BuildInfo, bool)
		want         string
	}{
		{"linked wins", "v1.2.3", stamped("0123456789abcdef0123"), "v1.2.3"},
		{"vcs revision", "", stamped("0123456789abcdef0123"), "dev-0123456789ab"},
		{"short revision", "", stamped("0123"), "dev"},
		{"no build info", "", none, "dev"},
	} {
		if got := resolve(tc.linked, tc.read); got != tc.want {
			t.Errorf("%s: resolve = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestVersionIsStable(t *testing.T) {
	if a, b := Version(), Version(); a == "" || a != b {
		t.Fatalf("Version() = %q then %q", a, b)
	}
}
