// Package server speaks the PostgreSQL wire protocol (version 3.0, through
// pgproto3 from github.com/jackc/pgx/v5) and runs one backend per
// connection, as PostgreSQL's postmaster and backends do.
//
// What it owns: the listener loop, the startup handshake (SSL and GSSAPI
// encryption requests answered 'N', CancelRequest, protocol negotiation,
// trust authentication, ParameterStatus and BackendKeyData), the
// simple- and extended-query message loops with their error and Sync
// rules, prepared statements and portals, statement cancellation
// (CancelRequest, statement_timeout, pg_cancel_backend), session
// termination (pg_terminate_backend, fast shutdown, idle-in-transaction
// timeout), the connection limit, and the data directory's lock file.
// It is the only package that turns errors into ErrorResponse and
// NoticeResponse messages.
//
// What it must not do: parse or execute SQL (package sql does), hold
// settings state of its own (package guc does), or know how locks work
// (package locks does).
//
// Concurrency: Server is safe for concurrent use. Each backend's goroutine
// owns its connection and session; other goroutines touch a backend only
// through cancel and terminate, which take the backend's mutex and never
// write to the connection. Outgoing messages are buffered and written
// once per ReadyForQuery (or on Flush, or every 256 kB of rows), so a
// pgbench round trip costs one write system call.
package server
