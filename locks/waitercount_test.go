package locks

import (
	"context"
	"errors"
	"testing"
)

// TestWaiterCount checks LockWaiterCount semantics: requests in the shared
// table, holder included; 0 for an absent lock; a failed NOWAIT request
// and a re-acquisition by the holder add nothing.
func TestWaiterCount(t *testing.T) {
	m := newTestManager(t, Config{})
	ps := newTestProcs(t, m, 4)
	ctx := context.Background()
	tag := ExtendTag(5, 1234)
	if n := m.WaiterCount(tag); n != 0 {
		t.Fatalf("absent lock: %d", n)
	}
	must(t, m.Lock(ctx, ps[0], tag, ExclusiveLock, LockOptions{}))
	must(t, m.Lock(ctx, ps[0], tag, ExclusiveLock, LockOptions{})) // local count only
	if n := m.WaiterCount(tag); n != 1 {
		t.Fatalf("one holder: %d", n)
	}
	if err := m.Lock(ctx, ps[1], tag, ExclusiveLock, LockOptions{NoWait: true}); !errors.Is(err, ErrLockNotAvailable) {
		t.Fatalf("NOWAIT: %v", err)
	}
	if n := m.WaiterCount(tag); n != 1 {
		t.Fatalf("after failed NOWAIT: %d", n)
	}
	granted, release := make(chan struct{}), make(chan struct{})
	for _, p := range ps[1:] {
		go func() {
			if err := m.Lock(ctx, p, tag, ExclusiveLock, LockOptions{}); err != nil {
				t.Error(err)
			}
			granted <- struct{}{}
			<-release
			m.Unlock(p, tag, ExclusiveLock, false)
		}()
	}
	eventually(t, "three waiters", func() bool { return m.WaiterCount(tag) == 4 })
	if n := m.WaiterCount(ExtendTag(5, 4321)); n != 0 {
		t.Fatalf("other relation: %d", n)
	}
	m.Unlock(ps[0], tag, ExclusiveLock, false)
	if n := m.WaiterCount(tag); n != 4 {
		t.Fatalf("holder still holds once: %d", n)
	}
	m.Unlock(ps[0], tag, ExclusiveLock, false)
	for want := 3; want > 0; want-- {
		<-granted
		if n := m.WaiterCount(tag); n != want {
			t.Fatalf("after a release: %d, want %d", n, want)
		}
		release <- struct{}{}
		eventually(t, "release", func() bool { return m.WaiterCount(tag) == want-1 })
	}
	checkEmpty(t, m)
}
