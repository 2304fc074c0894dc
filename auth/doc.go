// Package auth holds what lockd's client authentication is made of, as
// PostgreSQL's libpq/ directory does: password verifiers in PostgreSQL's
// stored formats (SCRAM-SHA-256 and MD5, password.go), the server side of
// the SASL SCRAM-SHA-256 exchange (RFC 5802 and 7677, with PostgreSQL's
// mock authentication for unknown users, scram.go), and pg_hba.conf: its
// parser and the matching of a connection to a rule (hba.go).
//
// What it must not do: read sockets, catalogs or settings. The server
// feeds it the messages a client sends and the role's stored password;
// the SQL layer asks it to encrypt the passwords CREATE ROLE is given.
//
// Concurrency: a SCRAM exchange belongs to one connection's goroutine; a
// parsed HBA (a rule list) is immutable and may be shared.
package auth
