package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestPgbenchPartitionedForeignKeys initialises pgbench's tables with
// --partitions=10 --foreign-keys, range and hash: pgbench_history then
// references the partitioned pgbench_accounts, so every history INSERT of
// the tpcb-like script looks its account up in the one partition that can
// hold it and locks the row there FOR KEY SHARE, while other clients update
// it. The catalog must hold the 25 foreign-key rows PostgreSQL 15 holds
// (pgbench_history_aid_fkey and a clone for each partition, the
// partitions' share of pgbench_accounts_bid_fkey) and psql's \d must print
// what psql 15 printed against PostgreSQL 15; then each -M mode runs with
// no failed transaction and balances that add up.
func TestPgbenchPartitionedForeignKeys(t *testing.T) {
	pgbench := need(t, "pgbench")
	need(t, "psql")
	for _, method := range []string{"range", "hash"} {
		t.Run(method, func(t *testing.T) {
			inst, conn, sum := startForPgbench(t)
			args := []string{"-i", "-s", "1", "--partitions=10", "--partition-method=" + method, "--foreign-keys"}
			o := run(t, 60*time.Second, pgbench, append(args, conn...)...)
			if o.code != 0 || !strings.Contains(o.stderr, "creating foreign keys...") || !strings.Contains(o.stderr, "done in") {
				t.Fatalf("pgbench %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), o.code, o.stdout, o.stderr)
			}
			if n := sum("select count(*) from pg_constraint where contype = 'f'"); n != 25 {
				t.Errorf("%d foreign-key rows in pg_constraint, PostgreSQL 15 has 25", n)
			}
			if n := sum("select count(*) from pg_constraint where conname ~ '^pgbench_history_aid_fkey[0-9]+$' and conparentid <> 0"); n != 10 {
				t.Errorf("%d clones of pgbench_history_aid_fkey, want 10", n)
			}
			for _, d := range pgbenchPartFKDescribe(method) {
				wantOutput(t, d.cmd, psql(t, inst.Port, "-c", d.cmd), 0, d.want, "")
			}
			pgbenchEveryMode(t, pgbench, conn, sum, true)
			// the referenced partitions cannot go while history needs them
			o = psql(t, inst.Port, "-c", "truncate pgbench_accounts_3")
			if o.code == 0 || !strings.Contains(o.stderr, `Table "pgbench_history" references "pgbench_accounts_3".`) {
				t.Errorf("truncate pgbench_accounts_3: exit %d\n%s", o.code, o.stderr)
			}
			// pgbench -i again drops the tables in one statement, keys,
			// clones and all
			o = run(t, 60*time.Second, pgbench, append([]string{"-i", "-s", "1", "-I", "dt"}, conn...)...)
			if o.code != 0 {
				t.Fatalf("pgbench -i -I dt over the foreign keys: exit %d\nstderr:\n%s", o.code, o.stderr)
			}
			if n := sum("select count(*) from pg_constraint where contype = 'f'"); n != 0 {
				t.Errorf("%d foreign keys left after dropping the tables", n)
			}
		})
	}
}

// pgbenchPartFKDescribe is psql 15's \d of the tables PostgreSQL 15 made
// with pgbench -i -s 1 --partitions=10 --partition-method=method
// --foreign-keys.
func pgbenchPartFKDescribe(method string) []struct{ cmd, want string } {
	key, bound1, bound10 := "RANGE (aid)", "FROM (MINVALUE) TO (10001)", "FROM (90001) TO (MAXVALUE)"
	if method == "hash" {
		key, bound1, bound10 = "HASH (aid)", "WITH (modulus 10, remainder 0)", "WITH (modulus 10, remainder 9)"
	}
	// psql centres the title over the 59 columns of the table
	partition := func(n, bound string) string {
		title := `Table "public.pgbench_accounts_` + n + `"`
		return strings.Repeat(" ", (59-len(title))/2) + title + `
  Column  |     Type      | Collation | Nullable | Default 
----------+---------------+-----------+----------+---------
 aid      | integer       |           | not null | 
 bid      | integer       |           |          | 
 abalance | integer       |           |          | 
 filler   | character(84) |           |          | 
Partition of: pgbench_accounts FOR VALUES ` + bound + `
Indexes:
    "pgbench_accounts_` + n + `_pkey" PRIMARY KEY, btree (aid)
Foreign-key constraints:
    TABLE "pgbench_accounts" CONSTRAINT "pgbench_accounts_bid_fkey" FOREIGN KEY (bid) REFERENCES pgbench_branches(bid)
Referenced by:
    TABLE "pgbench_history" CONSTRAINT "pgbench_history_aid_fkey" FOREIGN KEY (aid) REFERENCES pgbench_accounts(aid)

`
	}
	return []struct{ cmd, want string }{
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
		{`\d pgbench_accounts`, `        Partitioned table "public.pgbench_accounts"
  Column  |     Type      | Collation | Nullable | Default 
----------+---------------+-----------+----------+---------
 aid      | integer       |           | not null | 
 bid      | integer       |           |          | 
 abalance | integer       |           |          | 
 filler   | character(84) |           |          | 
Partition key: ` + key + `
Indexes:
    "pgbench_accounts_pkey" PRIMARY KEY, btree (aid)
Foreign-key constraints:
    "pgbench_accounts_bid_fkey" FOREIGN KEY (bid) REFERENCES pgbench_branches(bid)
Referenced by:
    TABLE "pgbench_history" CONSTRAINT "pgbench_history_aid_fkey" FOREIGN KEY (aid) REFERENCES pgbench_accounts(aid)
Number of partitions: 10 (Use \d+ to list them.)

`},
		{`\d pgbench_accounts_1`, partition("1", bound1)},
		{`\d pgbench_accounts_10`, partition("10", bound10)},
	}
}
