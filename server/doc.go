// Package server is one lockd: it owns the instance (the data directory and
// every subsystem built over it) and speaks the PostgreSQL wire protocol
// (version 3.0, through pgproto3 from github.com/jackc/pgx/v5) to its
// clients, one backend per connection, as PostgreSQL's postmaster and
// backends do.
//
// # What it owns
//
// The instance's lifetime (instance.go): New validates its Config, takes
// the data directory's lock file (postmaster.pid, datadir.go), builds the
// lock manager, the transaction manager, the store and the SQL engine,
// attaches the settings' assign hooks (settings.go) and starts the
// checkpointer and the autovacuum launcher (autovacuum.go); Shutdown (smart), ShutdownFast (fast) and Close
// (immediate) end it, and Done reports when it has ended. No other
// package builds the subsystems of a running lockd.
//
// How settings reach the subsystems (settings.go): restart-only ones once,
// through the constructors' configs; reloadable ones only through their
// assign hooks, which guc runs with the start-up value and on every reload.
// LoadSettings reads the configuration files (creating DATADIR/lockd.conf
// as initdb writes postgresql.conf); ReloadConfig is SIGHUP and
// pg_reload_conf().
//
// The protocol, one file per phase:
//   - listen.go: listen_addresses and port, the accept loop, Ready and Err;
//   - startup.go: the startup packet, SSLRequest ('S' and the TLS
//     handshake with ssl on, else 'N') and GSSENCRequest ('N'),
//     CancelRequest, protocol version negotiation;
//   - tls.go: the SSL configuration (loaded and reloaded), channel
//     binding data, pg_stat_ssl's description of a connection;
//   - hba.go, authenticate.go: the pg_hba.conf rules in force and client
//     authentication (trust, reject, SCRAM-SHA-256, md5, password);
//   - auth.go: the role's checks (exists, LOGIN, connection limit), the
//     connection limit, the session;
//   - backend.go: one connection's message loop, statement cancellation
//     (CancelRequest, statement_timeout, pg_cancel_backend), termination
//     (pg_terminate_backend, fast shutdown, idle-in-transaction timeout),
//     ReadyForQuery and the output buffering;
//   - framing.go: message framing checked ahead of pgproto3, so that a bad
//     type byte or length is a typed error;
//   - simple.go, extended.go, copy.go: the simple query protocol, the
//     extended one (prepared statements, Sync rules; the portals
//     themselves are the session's, sql/portal.go), COPY FROM
//     STDIN and TO STDOUT; rows.go: RowDescription and DataRow encoding;
//   - errors.go: the server's own errors, the classification of a failed
//     read (by type, with errors.As and errors.Is), and the one place errors
//     become ErrorResponse and NoticeResponse messages.
//
// # What it must not do
//
// Parse or execute SQL (package sql does), hold settings state of its own
// (package guc does; the server reads the registry or is told through a
// hook), or know how locks work (package locks does). It does not import
// metrics: the /metrics endpoint reads the server and is wired by the
// embedder (cmd/lockd).
//
// # Concurrency
//
// Server is safe for concurrent use. Each backend's goroutine owns its
// connection and session; other goroutines touch a backend only through
// cancel and terminate, which take the backend's mutex and never write to
// the connection. Outgoing messages are buffered and written once per
// ReadyForQuery (or on Flush, or every 256 kB of rows), so a pgbench round
// trip costs one read and one write system call. The instance's fields are
// set by New and read-only afterwards; one checkpoint runs at a time.
package server
