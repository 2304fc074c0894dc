package server_test

import (
	"testing"

	"lockd/internal/lockdtest"
	"lockd/locks"
)

// TestLWLockWakeupRuleLive: a fresh server wakes LWLock waiters by
// PostgreSQL 9.5+'s rule; ALTER SYSTEM and pg_reload_conf switch every
// LWLock to 8.4's without a restart, and back.
func TestLWLockWakeupRuleLive(t *testing.T) {
	old := locks.WakeupRule()
	t.Cleanup(func() { locks.SetWakeupRule(old) })
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	if got := queryText(t, c, "show lwlock_wakeup_rule"); got != "pg95" {
		t.Fatalf("SHOW lwlock_wakeup_rule = %q on a fresh server, want pg95", got)
	}
	if locks.WakeupRule() != locks.WakePG95 {
		t.Fatalf("locks run rule %v on a fresh server", locks.WakeupRule())
	}
	if got := queryText(t, c, "select context, enumvals from pg_settings where name = 'lwlock_wakeup_rule'"); got != "sighup,{pg95,pg84}" {
		t.Errorf("pg_settings: %q", got)
	}
	mustExec(t, c, "alter system set lwlock_wakeup_rule = pg84")
	if got := queryText(t, c, "show lwlock_wakeup_rule"); got != "pg95" {
		t.Fatalf("before pg_reload_conf: %q", got)
	}
	mustExec(t, c, "select pg_reload_conf()")
	if got := queryText(t, c, "show lwlock_wakeup_rule"); got != "pg84" {
		t.Fatalf("after pg_reload_conf: SHOW lwlock_wakeup_rule = %q, want pg84", got)
	}
	if locks.WakeupRule() != locks.WakePG84 {
		t.Fatalf("after pg_reload_conf locks run rule %v, want pg84", locks.WakeupRule())
	}
	if _, err := c.Exec(t.Context(), "set lwlock_wakeup_rule = pg95"); err == nil {
		t.Error("SET of a sighup setting succeeded")
	}
	mustExec(t, c, "alter system reset lwlock_wakeup_rule")
	mustExec(t, c, "select pg_reload_conf()")
	if got := queryText(t, c, "show lwlock_wakeup_rule"); got != "pg95" || locks.WakeupRule() != locks.WakePG95 {
		t.Fatalf("after ALTER SYSTEM RESET + reload: %q, locks %v", got, locks.WakeupRule())
	}
}
