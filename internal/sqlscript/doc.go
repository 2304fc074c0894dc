// Package sqlscript runs data-driven SQL scripts against an in-process
// lockd: what client sessions send, and below each statement what they
// see back. It is a test helper that _test.go files use through one call,
//
//	func TestScripts(t *testing.T) { sqlscript.RunDir(t, "testdata/scripts") }
//
// which runs every *.txt file of the directory as a subtest, and every
// case of a file as a subtest of that. With -rewrite (go test -run
// Scripts -rewrite) the expected outputs are replaced in place by what the
// statements gave; read the diff before committing it. With
// -dsn=postgres://... the scripts run against that server instead, to
// compare lockd with a real PostgreSQL: restart, crash and checkpoint
// steps and the cases with a server of their own are skipped there.
//
// # Files and cases
//
// A file holds one or more cases. Lines starting with '#' are comments;
// blank lines end a step's output. Both are kept as they are by -rewrite.
//
//	# Lines before the first case describe the file. A settings line
//	# starts the file's lockd with these command-line settings.
//	settings deadlock_timeout=100ms
//
//	case routing
//	a: create table m (id int, region text) partition by list (region)
//	CREATE TABLE
//
// The cases of a file share one lockd, started before the first case: a
// server per file is much cheaper than a server per case. Each case still
// starts from an empty database: when it ends, the runner closes its
// sessions, waits until the server has ended them, drops every table and
// sequence left in schema public, and resets ALTER SYSTEM if the case used
// it. A case must not depend on another, and may run alone (go test -run
// Scripts/FILE/CASE). A case header takes options:
//
//	case NAME [fresh] [settings=NAME=VALUE[,NAME=VALUE...]] [verbose] [txstatus]
//
// fresh (implied by settings=) gives the case a lockd of its own, started
// with the file's settings and then the case's; verbose prints the schema,
// table, column, data type and constraint fields of errors (psql's
// \set VERBOSITY verbose); txstatus prints the transaction status the
// server reported (I, T or E) after each statement.
//
// # Statements
//
// A statement line names a session, optional modifiers and the text to
// send:
//
//	SESSION [MODIFIER...]: TEXT
//
// A session is a pgx connection over TCP, opened on first use and closed
// at the end of the case; its name is [a-z][a-z0-9_]*. TEXT continues on
// the following lines that start with a space or a tab. It is sent as one
// simple Query (several statements in it run as PostgreSQL runs them, and
// each result is shown), unless it ends in one of these psql-like
// meta-commands:
//
//	SQL \bind [PARAM...]   extended protocol, unnamed statement, text parameters
//	SQL \parse NAME        Parse (and Describe) a named statement
//	SQL \gexec             run the query, then each value of its result as a statement
//	\bind_named NAME [PARAM...]       Bind and Execute a named statement
//	\close NAME                       Close a named statement
//	\copy_binary TABLE (COLUMN, ...)  binary COPY FROM STDIN of the "< " rows (pgx's CopyFrom)
//
// Parameters are separated by spaces; single quotes keep one with spaces
// together (a quote inside is doubled). In TEXT, $NAME is replaced by the
// backend pid of session NAME (connecting it if need be) and $tmpdir by a
// temporary directory.
//
// Lines starting with "< " after the statement are its input: the data of
// a COPY FROM STDIN, each line a Go-quoted string or `seq A..B "FORMAT"`
// (FORMAT printed with every integer from A to B: %d, or %[1]d to use it
// twice); or the rows of \copy_binary, each line a comma-separated list of
// literals (NULL, numbers, true, false, 'text').
//
// The modifiers are:
//
//	waits        the statement must block on a lock. It is started, and the
//	             runner polls pg_stat_activity and pg_locks until that
//	             backend waits for a heavyweight lock (wait_event_type
//	             Lock, and a request not granted), then goes on. Nothing is
//	             printed if it does; "did not wait" and the outcome if it
//	             finished first. `await SESSION` prints the outcome later.
//	eventually   run the statement again (every 10ms, for up to 10s) until
//	             its output is the expected one.
//	took=MIN..MAX  the statement must take between MIN and MAX (Go
//	             durations; either may be left out).
//
// # Outputs
//
// The expected output follows the statement, up to the next blank line:
//
//   - notices as SEVERITY SQLSTATE: MESSAGE, with DETAIL: and HINT: lines;
//   - rows as a table: the column names, a rule, one line per row, in the
//     text format, columns separated by " | " and padded to the widest
//     value. NULL is NULL; a value that is empty, has a leading or trailing
//     space, a control character or '|', or could be read as NULL, a
//     quoted value, a pid or an input line is printed Go-quoted;
//   - the data of a COPY TO STDOUT as "> " lines, Go-quoted, one per line
//     of data;
//   - the command tag;
//   - an error as SEVERITY SQLSTATE: MESSAGE, then DETAIL:, HINT:,
//     POSITION: and CONTEXT: lines where the server sent them (and the
//     verbose fields).
//     A field's later lines are indented by two spaces.
//
// In columns whose name ends in "pid" or "pids", and after "process" in
// messages, a session's backend pid is printed as $NAME.
//
// # Other steps
//
//	await SESSION    the outcome of SESSION's statement started with waits (waits up to 10s)
//	poll SESSION     "waiting" while it waits for a lock, else its outcome
//	repeat N ... end the steps between run N times, each time with the expected outputs
//	restart          a clean restart of the server; sessions reconnect on their next statement
//	crash            an immediate stop without a checkpoint, then a start
//	checkpoint       a checkpoint, as the checkpointer makes one
//	file NAME        write the "< " lines (Go-quoted) to NAME in the data directory
//
// A step that prints must be followed by a blank line before the next
// step (or end); restart, crash, checkpoint and file print nothing.
package sqlscript
