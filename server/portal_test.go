package server_test

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// TestPortals drives protocol portals and cursors as one namespace, as
// PostgreSQL 15 does (each expected exchange was recorded from a real
// PostgreSQL 15): Execute with a row limit suspends and resumes a query,
// each CommandComplete counting its own Execute's rows; FETCH and CLOSE
// reach a protocol portal and Execute a DECLAREd cursor; pg_cursors lists
// protocol portals; a statement with RETURNING runs whole at its first
// Execute; a portal survives a rolled-back savepoint it was read in; a
// protocol portal is NO SCROLL; it ends with its transaction.
func TestPortals(t *testing.T) {
	inst := startBad(t)
	c := connectRaw(t, inst)
	step := func(want []string, msgs ...pgproto3.FrontendMessage) {
		t.Helper()
		c.send(msgs...)
		if got := c.untilReady(); !equal(got, want) {
			t.Fatalf("got  %q\nwant %q", got, want)
		}
	}
	q := func(sql string, want ...string) { t.Helper(); step(want, &pgproto3.Query{String: sql}) }

	q("create table tt (x int)", "CommandComplete CREATE TABLE", "ReadyForQuery I")
	q("begin", "CommandComplete BEGIN", "ReadyForQuery T")
	step([]string{"ParseComplete", "BindComplete", "DataRow 1", "DataRow 2", "DataRow 3", "PortalSuspended",
		"DataRow 4", "DataRow 5", "CommandComplete SELECT 2", "CommandComplete SELECT 0", "ReadyForQuery T"},
		&pgproto3.Parse{Query: "select g from generate_series(1,5) g"}, &pgproto3.Bind{DestinationPortal: "p"},
		&pgproto3.Execute{Portal: "p", MaxRows: 3}, &pgproto3.Execute{Portal: "p"}, &pgproto3.Execute{Portal: "p"}, &pgproto3.Sync{})
	q("select name, statement, is_holdable, is_binary, is_scrollable from pg_cursors",
		"RowDescription name:25,statement:25,is_holdable:16,is_binary:16,is_scrollable:16",
		"DataRow p,select g from generate_series(1,5) g,f,f,f", "CommandComplete SELECT 1", "ReadyForQuery T")
	q("fetch all from p", "RowDescription g:23", "CommandComplete FETCH 0", "ReadyForQuery T")
	q("close p", "CommandComplete CLOSE CURSOR", "ReadyForQuery T")
	q("declare c cursor for select 1", "CommandComplete DECLARE CURSOR", "ReadyForQuery T")
	step([]string{"ParseComplete", `ErrorResponse ERROR 42P03 cursor "c" already exists`, "ReadyForQuery E"},
		&pgproto3.Parse{Query: "select 2"}, &pgproto3.Bind{DestinationPortal: "c"}, &pgproto3.Sync{})
	q("rollback", "CommandComplete ROLLBACK", "ReadyForQuery I")

	// an Execute that reads exactly the last row still suspends
	q("begin", "CommandComplete BEGIN", "ReadyForQuery T")
	step([]string{"ParseComplete", "BindComplete", "DataRow 1", "DataRow 2", "DataRow 3", "PortalSuspended",
		"CommandComplete SELECT 0", "ReadyForQuery T"},
		&pgproto3.Parse{Query: "select g from generate_series(1,3) g"}, &pgproto3.Bind{DestinationPortal: "e"},
		&pgproto3.Execute{Portal: "e", MaxRows: 3}, &pgproto3.Execute{Portal: "e", MaxRows: 3}, &pgproto3.Sync{})
	// INSERT ... RETURNING runs whole at its first Execute
	step([]string{"ParseComplete", "BindComplete", "DataRow 1", "DataRow 2", "PortalSuspended", "DataRow 3",
		"CommandComplete INSERT 0 1", "CommandComplete INSERT 0 0", "ReadyForQuery T"},
		&pgproto3.Parse{Query: "insert into tt select g from generate_series(1,3) g returning x"}, &pgproto3.Bind{DestinationPortal: "i"},
		&pgproto3.Execute{Portal: "i", MaxRows: 2}, &pgproto3.Execute{Portal: "i", MaxRows: 2}, &pgproto3.Execute{Portal: "i", MaxRows: 2}, &pgproto3.Sync{})
	q("select count(*) from tt", "RowDescription count:20", "DataRow 3", "CommandComplete SELECT 1", "ReadyForQuery T")
	q("commit", "CommandComplete COMMIT", "ReadyForQuery I")

	// outside a block the portal ends with the implicit transaction
	step([]string{"ParseComplete", "BindComplete", "DataRow 1", "PortalSuspended", "ReadyForQuery I"},
		&pgproto3.Parse{Query: "select g from generate_series(1,3) g"}, &pgproto3.Bind{DestinationPortal: "o"},
		&pgproto3.Execute{Portal: "o", MaxRows: 1}, &pgproto3.Sync{})
	step([]string{`ErrorResponse ERROR 34000 portal "o" does not exist`, "ReadyForQuery I"},
		&pgproto3.Execute{Portal: "o", MaxRows: 1}, &pgproto3.Sync{})

	// a portal read inside a savepoint that rolls back goes on; it cannot
	// move backward; once the block fails, it cannot run
	q("begin", "CommandComplete BEGIN", "ReadyForQuery T")
	step([]string{"ParseComplete", "BindComplete", "DataRow 1", "PortalSuspended", "ReadyForQuery T"},
		&pgproto3.Parse{Query: "select g from generate_series(1,3) g"}, &pgproto3.Bind{DestinationPortal: "u"},
		&pgproto3.Execute{Portal: "u", MaxRows: 1}, &pgproto3.Sync{})
	q("savepoint a", "CommandComplete SAVEPOINT", "ReadyForQuery T")
	step([]string{"DataRow 2", "PortalSuspended", "ReadyForQuery T"}, &pgproto3.Execute{Portal: "u", MaxRows: 1}, &pgproto3.Sync{})
	q("rollback to a", "CommandComplete ROLLBACK", "ReadyForQuery T")
	step([]string{"DataRow 3", "PortalSuspended", "ReadyForQuery T"}, &pgproto3.Execute{Portal: "u", MaxRows: 1}, &pgproto3.Sync{})
	q("move backward 1 in u", "ErrorResponse ERROR 55000 cursor can only scan forward", "ReadyForQuery E")
	step([]string{"ErrorResponse ERROR 25P02 current transaction is aborted, commands ignored until end of transaction block", "ReadyForQuery E"},
		&pgproto3.Execute{Portal: "u", MaxRows: 1}, &pgproto3.Sync{})
	q("rollback", "CommandComplete ROLLBACK", "ReadyForQuery I")

	// two portals of one named statement, read in turns, over a
	// partitioned table
	q("create table pt (x int) partition by range (x)", "CommandComplete CREATE TABLE", "ReadyForQuery I")
	q("create table pt1 partition of pt for values from (0) to (10)", "CommandComplete CREATE TABLE", "ReadyForQuery I")
	q("create table pt2 partition of pt for values from (10) to (20)", "CommandComplete CREATE TABLE", "ReadyForQuery I")
	q("insert into pt select g from generate_series(1, 19, 3) g", "CommandComplete INSERT 0 7", "ReadyForQuery I")
	q("begin", "CommandComplete BEGIN", "ReadyForQuery T")
	step([]string{"ParseComplete", "BindComplete", "DataRow 1", "DataRow 4", "PortalSuspended",
		"BindComplete", "DataRow 7", "DataRow 10", "PortalSuspended",
		"DataRow 7", "DataRow 10", "DataRow 13", "PortalSuspended",
		"DataRow 13", "DataRow 16", "DataRow 19", "CommandComplete SELECT 3",
		"DataRow 16", "DataRow 19", "CommandComplete SELECT 2", "ReadyForQuery T"},
		&pgproto3.Parse{Name: "s1", Query: "select x from pt where x > $1"},
		&pgproto3.Bind{PreparedStatement: "s1", DestinationPortal: "a", Parameters: [][]byte{[]byte("0")}},
		&pgproto3.Execute{Portal: "a", MaxRows: 2},
		&pgproto3.Bind{PreparedStatement: "s1", DestinationPortal: "b", Parameters: [][]byte{[]byte("5")}},
		&pgproto3.Execute{Portal: "b", MaxRows: 2},
		&pgproto3.Execute{Portal: "a", MaxRows: 3}, &pgproto3.Execute{Portal: "b"}, &pgproto3.Execute{Portal: "a"}, &pgproto3.Sync{})
	q("commit", "CommandComplete COMMIT", "ReadyForQuery I")

	// Execute and Describe reach a DECLAREd cursor
	q("begin", "CommandComplete BEGIN", "ReadyForQuery T")
	q("declare d cursor for select g from generate_series(1,3) g", "CommandComplete DECLARE CURSOR", "ReadyForQuery T")
	step([]string{"RowDescription g:23", "DataRow 1", "DataRow 2", "PortalSuspended", "DataRow 3", "CommandComplete SELECT 1", "ReadyForQuery T"},
		&pgproto3.Describe{ObjectType: 'P', Name: "d"}, &pgproto3.Execute{Portal: "d", MaxRows: 2}, &pgproto3.Execute{Portal: "d", MaxRows: 2}, &pgproto3.Sync{})
	q("commit", "CommandComplete COMMIT", "ReadyForQuery I")
	c.send(&pgproto3.Terminate{})
	c.expectEOF()
	assertServes(t, inst)
}
