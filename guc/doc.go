// Package guc is lockd's settings registry ("Grand Unified Configuration",
// after PostgreSQL's guc.c).
//
// # What it owns
//
// One table of settings, [Table], is the single source of truth for every
// tunable lockd has, as guc_tables.c is for PostgreSQL: name, type, unit,
// boot value, range or enum values, context, category and descriptions.
// SHOW, SHOW ALL, the pg_settings view, ParameterStatus reports and
// lockd.conf.example ([ExampleFile]) are all generated from it.
//
// The package also owns:
//   - value parsing and display with PostgreSQL's rules ([ParseValue],
//     [FormatValue]): Boolean prefixes, integer units (kB, MB, ms, s, ...)
//     with PostgreSQL's rounding, ranges, enums;
//   - sources and their priority (default < configuration file < command
//     line < client < session) and contexts (internal, postmaster, sighup,
//     superuser-backend, backend, superuser, user) with PostgreSQL's
//     SQLSTATEs and message texts;
//   - the TOML configuration file and lockd.auto.conf (ALTER SYSTEM), their
//     error messages naming file and line, and reload (SIGHUP /
//     pg_reload_conf) semantics including pending_restart;
//   - per-session state: SET, SET LOCAL, RESET, RESET ALL, transactional
//     rollback of settings, and the reported-parameter bookkeeping.
//
// # What it must not do
//
// guc imports no lockd package (it is a leaf; only the standard library and
// BurntSushi/toml), touches no network and runs no goroutines. It does not
// know what a setting does: subsystems learn about values through assign
// hooks ([Registry.OnChange]) attached where the server is wired together, or
// read them from the [Session] of their connection.
//
// # Concurrency
//
// A [Registry] is safe for concurrent use. Hooks registered with
// [Registry.OnChange] are called one at a time, never while the registry's
// state lock is held, so a hook may call [Registry.Value]; a hook must not
// call [Registry.Reload], [Registry.LoadFiles], [Registry.SetCommandLine] or
// [Registry.OnChange] (they would wait for the hook to finish).
//
// A [Session] belongs to one connection and is used by one goroutine; it is
// not safe for concurrent use. It reads the Registry only in
// [Registry.NewSession], [Session.Refresh] and [Session.Rows], under the
// registry's read lock.
//
// [Table] and the [Def] values it holds are read-only after package
// initialisation.
package guc
