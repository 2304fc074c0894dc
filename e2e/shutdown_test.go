package e2e

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"lockd/internal/lockdtest"
)

// TestShutdownDuringPacedCheckpoint: a fast shutdown that arrives while a
// checkpoint spreads its writes over checkpoint_completion_target of the
// interval does not wait for the schedule (minutes here): the rest is
// written at once, as PostgreSQL's checkpointer stops pacing when a
// shutdown is pending.
func TestShutdownDuringPacedCheckpoint(t *testing.T) {
	var log lockedBuffer
	inst := lockdtest.Start(t, lockdtest.Options{
		Settings: []string{"max_wal_size=32MB", "checkpoint_timeout=1h", "shared_buffers=128MB"},
		Logger:   slog.New(slog.NewTextHandler(&log, nil)),
	})
	c := inst.Connect(t)
	ctx := context.Background()
	// log past max_wal_size, a batch at a time, until a checkpoint
	// starts; then nothing more, so the checkpoint, with thousands of
	// dirty buffers to write and no log coming, paces itself against an
	// hour
	if _, err := c.Exec(ctx, "create table big (a int, b text)"); err != nil {
		t.Fatal(err)
	}
	for i := 0; !strings.Contains(log.String(), "checkpoint starting: wal"); i++ {
		if i == 400 {
			t.Fatalf("no checkpoint started; log:\n%s", log.String())
		}
		if _, err := c.Exec(ctx, "insert into big select g, repeat('x', 200) from generate_series(1, 5000) g"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond) // into the paced writes
	c.Close(ctx)
	start := time.Now()
	inst.Stop(t)
	// not a speed limit: without the fix the shutdown waits out the
	// schedule, minutes
	if d := time.Since(start); d > time.Minute {
		t.Fatalf("the shutdown waited %v for the paced checkpoint", d.Round(time.Second))
	}
	if !strings.Contains(log.String(), "checkpoint starting: shutdown") {
		t.Fatalf("no shutdown checkpoint; log:\n%s", log.String())
	}
}
