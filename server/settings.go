package server

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"lockd/guc"
	"lockd/locks"
	"lockd/storage"
	"lockd/txn"
	"lockd/wal"
)

// How settings reach the instance. There is one way per kind of setting:
//
//   - Restart-only settings (postmaster context: max_connections,
//     max_locks_per_transaction, lock_partitions, shared_buffers, port,
//     listen_addresses) are read once, when openInstance builds the
//     subsystems, into their constructors' configs.
//   - Reloadable settings that tune a subsystem reach it only through an
//     assign hook attached here. guc runs a hook at once with the current
//     value and again after every change (reload, ALTER SYSTEM +
//     pg_reload_conf), so the start-up value arrives the same way as a
//     reloaded one.
//   - What a connection needs as it starts or ends (authentication_timeout,
//     max_message_size, log_connections, log_disconnections) it reads from
//     the registry then, as a PostgreSQL backend reads its GUCs; the sql
//     package reads its own settings from the registry and the session's
//     guc.Session.
//
// A Registry's hooks cannot be removed, so one Registry serves one Server.

// LoadSettings reads the configuration files into reg, as the postmaster
// does at start-up: configFile, or if that is "" DATADIR/lockd.conf, then
// DATADIR/lockd.auto.conf (ALTER SYSTEM). Settings set on reg's command line
// beforehand keep their priority. With create, a missing DATADIR/lockd.conf
// is created (with the data directory), as initdb writes postgresql.conf,
// so that editing it and sending SIGHUP always works; without, it is read
// only if it exists. LoadSettings returns the configuration file it read
// ("" if none).
func LoadSettings(reg *guc.Registry, dataDir, configFile string, create bool) (string, error) {
	if configFile == "" {
		p := filepath.Join(dataDir, "lockd.conf")
		if create {
			if err := ensureConfigFile(p); err != nil {
				return "", err
			}
			configFile = p
		} else if fileExists(p) {
			configFile = p
		}
	}
	return configFile, reg.LoadFiles(configFile, dataDir)
}

// ensureConfigFile creates an empty configuration file (and the data
// directory) if there is none.
func ensureConfigFile(path string) error {
	if fileExists(path) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("could not create data directory: %w", err)
	}
	header := "# lockd configuration file (TOML). Every setting, with its default and\n" +
		"# meaning, is listed in lockd.conf.example. Edit and send SIGHUP (or run\n" +
		"# SELECT pg_reload_conf()) to apply reloadable settings.\n"
	return os.WriteFile(path, []byte(header), 0o600)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// lockConfig is the lock manager's restart-only sizing.
func lockConfig(reg *guc.Registry, maxConnections int, logger *slog.Logger) locks.Config {
	return locks.Config{
		MaxConnections:         maxConnections,
		MaxLocksPerTransaction: int(reg.Value("max_locks_per_transaction").Int),
		Partitions:             int(reg.Value("lock_partitions").Int),
		Logger:                 logger,
	}
}

// attachLockHooks pushes the reloadable lock settings into the lock
// manager (and the process-wide LWLock policy).
func attachLockHooks(reg *guc.Registry, mgr *locks.Manager) {
	wake := func(guc.Value) {
		locks.SetWakePolicy(reg.Value("wake_up_all_waiters").Bool, int(reg.Value("lwlock_wakeup_limit").Int))
	}
	reg.OnChange("wake_up_all_waiters", wake)
	reg.OnChange("lwlock_wakeup_limit", wake)
	reg.OnChange("lwlock_wakeup_rule", func(v guc.Value) { r, _ := locks.ParseWakeRule(v.Str); locks.SetWakeupRule(r) })
	reg.OnChange("deadlock_timeout", func(v guc.Value) { mgr.SetDeadlockTimeout(time.Duration(v.Int) * time.Millisecond) })
	reg.OnChange("log_lock_waits", func(v guc.Value) { mgr.SetLogLockWaits(v.Bool) })
	reg.OnChange("track_lock_timing", func(v guc.Value) { locks.SetTrackTiming(v.Bool) })
	reg.OnChange("fastpath_lock_slots", func(v guc.Value) { mgr.SetFastPathSlots(int(v.Int)) })
}

// attachWALHooks pushes the write-ahead log's reloadable settings into
// it. p is the proc full_page_writes' change takes the insertion locks
// with.
func attachWALHooks(reg *guc.Registry, w *wal.WAL, p *locks.Proc) {
	reg.OnChange("fsync", func(v guc.Value) { w.SetFsync(v.Bool) })
	reg.OnChange("wal_sync_method", func(v guc.Value) { m, _ := wal.ParseSyncMethod(v.Str); w.SetSyncMethod(m) })
	reg.OnChange("full_page_writes", func(v guc.Value) { w.SetFullPageWrites(p, v.Bool) })
	reg.OnChange("wal_writer_delay", func(v guc.Value) { w.SetWriterDelay(time.Duration(v.Int) * time.Millisecond) })
	reg.OnChange("wal_writer_flush_after", func(v guc.Value) { w.SetWriterFlushAfter(int(v.Int)) })
	reg.OnChange("wal_recycle", func(v guc.Value) { w.SetRecycle(v.Bool) })
	reg.OnChange("track_wal_io_timing", func(v guc.Value) { w.SetTrackIOTiming(v.Bool) })
	reg.OnChange("log_checkpoints", func(v guc.Value) { w.SetLogCheckpoints(v.Bool) })
	size := func(guc.Value) {
		w.SetWALSize(int(reg.Value("min_wal_size").Int), int(reg.Value("max_wal_size").Int))
	}
	reg.OnChange("min_wal_size", size)
	reg.OnChange("max_wal_size", size)
	sched := func(guc.Value) {
		w.SetCheckpointSchedule(time.Duration(reg.Value("checkpoint_timeout").Int)*time.Second,
			reg.Value("checkpoint_completion_target").Real)
	}
	reg.OnChange("checkpoint_timeout", sched)
	reg.OnChange("checkpoint_completion_target", sched)
}

// attachTxnHooks pushes procarray_group_update into the transaction
// manager.
func attachTxnHooks(reg *guc.Registry, txns *txn.Manager) {
	reg.OnChange("procarray_group_update", func(v guc.Value) { txns.SetGroupUpdate(v.Bool) })
}

// attachStorageHooks pushes the relation-extension settings into the
// store; each change sets the whole policy from the four current values.
func attachStorageHooks(reg *guc.Registry, st *storage.Store) {
	apply := func(guc.Value) {
		mode, _ := storage.ParseExtensionMode(reg.Value("relation_extension_mode").Str)
		st.SetExtensionPolicy(mode, int(reg.Value("relation_extension_blocks").Int),
			int(reg.Value("relation_extension_max_blocks").Int), int(reg.Value("relation_extension_fallocate_threshold").Int))
	}
	for _, name := range []string{"relation_extension_mode", "relation_extension_blocks", "relation_extension_max_blocks", "relation_extension_fallocate_threshold"} {
		reg.OnChange(name, apply)
	}
}

// attachLogLevel makes level follow log_min_messages.
func attachLogLevel(reg *guc.Registry, level *slog.LevelVar) {
	reg.OnChange("log_min_messages", func(v guc.Value) { level.Set(slogLevel(v.Str)) })
}

// slogLevel maps log_min_messages onto slog. lockd logs its LOG-level
// messages (start-up, reloads, connections) at Info, so every PostgreSQL
// level up to "log" keeps them visible, as PostgreSQL does.
func slogLevel(pgLevel string) slog.Level {
	switch pgLevel {
	case "debug5", "debug4", "debug3", "debug2", "debug1":
		return slog.LevelDebug
	case "fatal", "panic":
		return slog.LevelError
	}
	return slog.LevelInfo
}
