package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestPgbenchForeignKeys initialises pgbench's tables with --foreign-keys
// and runs the tpcb-like script in every -M mode. Every history INSERT
// checks three foreign keys, locking FOR KEY SHARE the account, teller and
// branch rows other clients update at FOR NO KEY UPDATE strength; the two
// must not block each other. No transaction may fail, and the balances
// must add up.
func TestPgbenchForeignKeys(t *testing.T) {
	pgbench := need(t, "pgbench")
	inst, conn, sum := startForPgbench(t)
	o := run(t, 60*time.Second, pgbench, append([]string{"-i", "-s", "2", "--foreign-keys"}, conn...)...)
	if o.code != 0 || !strings.Contains(o.stderr, "creating foreign keys...") || !strings.Contains(o.stderr, "done in") {
		t.Fatalf("pgbench -i --foreign-keys: exit %d\nstdout:\n%s\nstderr:\n%s", o.code, o.stdout, o.stderr)
	}
	if n := sum("select count(*) from pg_constraint where contype = 'f'"); n != 5 {
		t.Fatalf("%d foreign keys after pgbench -i --foreign-keys, want 5", n)
	}
	// psql's \d, as psql 15 printed it against PostgreSQL 15
	for _, d := range pgbenchFKDescribe {
		wantOutput(t, d.cmd, psql(t, inst.Port, "-c", d.cmd), 0, d.want, "")
	}
	pgbenchEveryMode(t, pgbench, conn, sum, true)
	// pgbench -i again drops the four tables in one statement, keys and all
	o = run(t, 60*time.Second, pgbench, append([]string{"-i", "-s", "1", "-I", "dt"}, conn...)...)
	if o.code != 0 {
		t.Fatalf("pgbench -i -I dt over the foreign keys: exit %d\nstderr:\n%s", o.code, o.stderr)
	}
	if n := sum("select count(*) from pg_constraint where contype = 'f'"); n != 0 {
		t.Errorf("%d foreign keys left after dropping the tables", n)
	}
}

var pgbenchFKDescribe = []struct{ cmd, want string }{
	{`\d pgbench_accounts`, `              Table "public.pgbench_accounts"
  Column  |     Type      | Collation | Nullable | Default 
----------+---------------+-----------+----------+---------
 aid      | integer       |           | not null | 
 bid      | integer       |           |          | 
 abalance | integer       |           |          | 
 filler   | character(84) |           |          | 
Indexes:
    "pgbench_accounts_pkey" PRIMARY KEY, btree (aid)
Foreign-key constraints:
    "pgbench_accounts_bid_fkey" FOREIGN KEY (bid) REFERENCES pgbench_branches(bid)
Referenced by:
    TABLE "pgbench_history" CONSTRAINT "pgbench_history_aid_fkey" FOREIGN KEY (aid) REFERENCES pgbench_accounts(aid)

`},
	{`\d pgbench_history`, `                    Table "public.pgbench_history"
 Column |            Type             | Collation | Nullable | Default 
--------+-----------------------------+-----------+----------+---------
 tid    | integer                     |           |          | 
 bid    | integer                     |           |          | 
 aid    | integer                     |           |          | 
 delta  | integer                     |           |          | 
 mtime  | timestamp without time zone |           |          | 
 filler | character(22)               |           |          | 
Foreign-key constraints:
    "pgbench_history_aid_fkey" FOREIGN KEY (aid) REFERENCES pgbench_accounts(aid)
    "pgbench_history_bid_fkey" FOREIGN KEY (bid) REFERENCES pgbench_branches(bid)
    "pgbench_history_tid_fkey" FOREIGN KEY (tid) REFERENCES pgbench_tellers(tid)

`},
	{`\d pgbench_branches`, `              Table "public.pgbench_branches"
  Column  |     Type      | Collation | Nullable | Default 
----------+---------------+-----------+----------+---------
 bid      | integer       |           | not null | 
 bbalance | integer       |           |          | 
 filler   | character(88) |           |          | 
Indexes:
    "pgbench_branches_pkey" PRIMARY KEY, btree (bid)
Referenced by:
    TABLE "pgbench_accounts" CONSTRAINT "pgbench_accounts_bid_fkey" FOREIGN KEY (bid) REFERENCES pgbench_branches(bid)
    TABLE "pgbench_history" CONSTRAINT "pgbench_history_bid_fkey" FOREIGN KEY (bid) REFERENCES pgbench_branches(bid)
    TABLE "pgbench_tellers" CONSTRAINT "pgbench_tellers_bid_fkey" FOREIGN KEY (bid) REFERENCES pgbench_branches(bid)

`},
	{`\d pgbench_tellers`, `              Table "public.pgbench_tellers"
  Column  |     Type      | Collation | Nullable | Default 
----------+---------------+-----------+----------+---------
 tid      | integer       |           | not null | 
 bid      | integer       |           |          | 
 tbalance | integer       |           |          | 
 filler   | character(84) |           |          | 
Indexes:
    "pgbench_tellers_pkey" PRIMARY KEY, btree (tid)
Foreign-key constraints:
    "pgbench_tellers_bid_fkey" FOREIGN KEY (bid) REFERENCES pgbench_branches(bid)
Referenced by:
    TABLE "pgbench_history" CONSTRAINT "pgbench_history_tid_fkey" FOREIGN KEY (tid) REFERENCES pgbench_tellers(tid)

`},
}
