package txn

import "testing"

func TestXidComparisons(t *testing.T) {
	tests := []struct {
		a, b                       Xid
		precedes, precedesOrEquals bool
	}{
		{3, 4, true, true},
		{4, 3, false, false},
		{5, 5, false, true},
		{FrozenXid, 3, true, true},
		{3, FrozenXid, false, false},
		{InvalidXid, BootstrapXid, true, true},
		{0xFFFFFFF0, 10, true, true}, // wrapped: 10 is newer
		{10, 0xFFFFFFF0, false, false},
		{3, 3 + 1<<31 - 1, true, true},
	}
	for _, tt := range tests {
		if got := Precedes(tt.a, tt.b); got != tt.precedes {
			t.Errorf("Precedes(%d, %d) = %v", tt.a, tt.b, got)
		}
		if got := PrecedesOrEquals(tt.a, tt.b); got != tt.precedesOrEquals {
			t.Errorf("PrecedesOrEquals(%d, %d) = %v", tt.a, tt.b, got)
		}
		if got := Follows(tt.b, tt.a); got != tt.precedes {
			t.Errorf("Follows(%d, %d) = %v", tt.b, tt.a, got)
		}
		if got := FollowsOrEquals(tt.b, tt.a); got != tt.precedesOrEquals {
			t.Errorf("FollowsOrEquals(%d, %d) = %v", tt.b, tt.a, got)
		}
	}
}

func TestGroupSizeBucket(t *testing.T) {
	for n, want := range map[int]int{1: 0, 2: 1, 3: 1, 4: 2, 7: 2, 8: 3, 16: 4, 31: 4, 32: 5, 63: 5, 64: 6, 1000: 6} {
		if got := groupSizeBucket(n); got != want {
			t.Errorf("groupSizeBucket(%d) = %d, want %d", n, got, want)
		}
	}
}
