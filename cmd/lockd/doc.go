// Command lockd starts the lockd server, PostgreSQL-style:
//
//	lockd [-D DATADIR] [-p PORT] [-c name=value ...] [--name=value ...] [--config FILE]
//	lockd -C name        print a setting (after files and -c) and exit
//	lockd version        print the version and exit (also --version, -V)
//	lockd --help
//
// Exit codes: 0 clean shutdown, 1 runtime failure (bad configuration file,
// data directory in use, cannot listen), 2 usage error (unknown option,
// bad -c, unknown setting).
//
// # What it owns
//
// The command line (flags.go: the flag package, behind a small pre-pass for
// the forms postgres takes and the flag package does not), the logger and
// its level, the command-line settings, the /metrics endpoint (metrics.go:
// wired here because metrics imports server), and signals (main.go):
// SIGHUP reloads, SIGTERM is a smart shutdown, SIGINT a fast one, SIGQUIT
// an immediate one.
//
// # What it must not do
//
// Build or tune subsystems: server.New takes the data directory, builds
// every subsystem and attaches the settings' hooks, and the server owns
// the instance's lifetime. cmd/lockd reaches SQL only through server (it
// does not import lockd/sql); the version it prints comes from
// lockd/internal/buildinfo, as SQL's version() does.
//
// # Concurrency
//
// main's goroutine waits for signals and accept failures and calls the
// server's shutdown methods; everything else runs in the server.
package main
