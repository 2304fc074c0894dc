package e2e

import (
	"strconv"
	"testing"
	"time"

	"lockd/internal/lockdtest"
)

// psql's describe commands after pgbench -i, plain and partitioned. Each
// expected output is what psql 15 printed against PostgreSQL 15 for the
// same pgbench -i, with the owner being the superuser "postgres".
// Differences that stay by design (docs/sql-compat.md): \l lists the one
// database lockd serves, under the name the client connected with, with
// lockd's C collation.
func TestPsqlDescribe(t *testing.T) {
	pgbench := need(t, "pgbench")
	need(t, "psql")
	cases := []struct {
		name string
		init []string
		cmds []struct{ cmd, want string }
	}{
		{"plain", nil, []struct{ cmd, want string }{
			// the heap is as large as PostgreSQL's: 61 accounts a page
			// (char(84) filler stored blank-padded)
			{`select relname, pg_relation_size(oid) from pg_class where relname like 'pgbench%' and relkind = 'r' order by 1`, `     relname      | pg_relation_size 
------------------+------------------
 pgbench_accounts |         13434880
 pgbench_branches |             8192
 pgbench_history  |                0
 pgbench_tellers  |             8192
(4 rows)

`},
			{`\dt`, `              List of relations
 Schema |       Name       | Type  |  Owner   
--------+------------------+-------+----------
 public | pgbench_accounts | table | postgres
 public | pgbench_branches | table | postgres
 public | pgbench_history  | table | postgres
 public | pgbench_tellers  | table | postgres
(4 rows)

`},
			{`\di`, `                          List of relations
 Schema |         Name          | Type  |  Owner   |      Table       
--------+-----------------------+-------+----------+------------------
 public | pgbench_accounts_pkey | index | postgres | pgbench_accounts
 public | pgbench_branches_pkey | index | postgres | pgbench_branches
 public | pgbench_tellers_pkey  | index | postgres | pgbench_tellers
(3 rows)

`},
			{`\d pgbench_accounts`, `              Table "public.pgbench_accounts"
  Column  |     Type      | Collation | Nullable | Default 
----------+---------------+-----------+----------+---------
 aid      | integer       |           | not null | 
 bid      | integer       |           |          | 
 abalance | integer       |           |          | 
 filler   | character(84) |           |          | 
Indexes:
    "pgbench_accounts_pkey" PRIMARY KEY, btree (aid)

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

`},
			{`\du`, `                                   List of roles
 Role name |                         Attributes                         | Member of 
-----------+------------------------------------------------------------+-----------
 postgres  | Superuser, Create role, Create DB, Replication, Bypass RLS | {}

`},
			{`\dn`, `      List of schemas
  Name  |       Owner       
--------+-------------------
 public | pg_database_owner
(1 row)

`},
			{`\l`, `                                          List of databases
   Name   |  Owner   | Encoding | Collate | Ctype | ICU Locale | Locale Provider | Access privileges 
----------+----------+----------+---------+-------+------------+-----------------+-------------------
 postgres | postgres | UTF8     | C       | C     |            | libc            | 
(1 row)

`},
			{`\d nothing`, ""},
		}},
		{"range", []string{"--partitions=4"}, []struct{ cmd, want string }{
			{`\dt`, `                     List of relations
 Schema |        Name        |       Type        |  Owner   
--------+--------------------+-------------------+----------
 public | pgbench_accounts   | partitioned table | postgres
 public | pgbench_accounts_1 | table             | postgres
 public | pgbench_accounts_2 | table             | postgres
 public | pgbench_accounts_3 | table             | postgres
 public | pgbench_accounts_4 | table             | postgres
 public | pgbench_branches   | table             | postgres
 public | pgbench_history    | table             | postgres
 public | pgbench_tellers    | table             | postgres
(8 rows)

`},
			{`\di`, `                                  List of relations
 Schema |          Name           |       Type        |  Owner   |       Table        
--------+-------------------------+-------------------+----------+--------------------
 public | pgbench_accounts_1_pkey | index             | postgres | pgbench_accounts_1
 public | pgbench_accounts_2_pkey | index             | postgres | pgbench_accounts_2
 public | pgbench_accounts_3_pkey | index             | postgres | pgbench_accounts_3
 public | pgbench_accounts_4_pkey | index             | postgres | pgbench_accounts_4
 public | pgbench_accounts_pkey   | partitioned index | postgres | pgbench_accounts
 public | pgbench_branches_pkey   | index             | postgres | pgbench_branches
 public | pgbench_tellers_pkey    | index             | postgres | pgbench_tellers
(7 rows)

`},
			{`\d pgbench_accounts`, `        Partitioned table "public.pgbench_accounts"
  Column  |     Type      | Collation | Nullable | Default 
----------+---------------+-----------+----------+---------
 aid      | integer       |           | not null | 
 bid      | integer       |           |          | 
 abalance | integer       |           |          | 
 filler   | character(84) |           |          | 
Partition key: RANGE (aid)
Indexes:
    "pgbench_accounts_pkey" PRIMARY KEY, btree (aid)
Number of partitions: 4 (Use \d+ to list them.)

`},
			{`\d+ pgbench_accounts`, `                                   Partitioned table "public.pgbench_accounts"
  Column  |     Type      | Collation | Nullable | Default | Storage  | Compression | Stats target | Description 
----------+---------------+-----------+----------+---------+----------+-------------+--------------+-------------
 aid      | integer       |           | not null |         | plain    |             |              | 
 bid      | integer       |           |          |         | plain    |             |              | 
 abalance | integer       |           |          |         | plain    |             |              | 
 filler   | character(84) |           |          |         | extended |             |              | 
Partition key: RANGE (aid)
Indexes:
    "pgbench_accounts_pkey" PRIMARY KEY, btree (aid)
Partitions: pgbench_accounts_1 FOR VALUES FROM (MINVALUE) TO (25001),
            pgbench_accounts_2 FOR VALUES FROM (25001) TO (50001),
            pgbench_accounts_3 FOR VALUES FROM (50001) TO (75001),
            pgbench_accounts_4 FOR VALUES FROM (75001) TO (MAXVALUE)

`},
			{`\d pgbench_accounts_1`, `             Table "public.pgbench_accounts_1"
  Column  |     Type      | Collation | Nullable | Default 
----------+---------------+-----------+----------+---------
 aid      | integer       |           | not null | 
 bid      | integer       |           |          | 
 abalance | integer       |           |          | 
 filler   | character(84) |           |          | 
Partition of: pgbench_accounts FOR VALUES FROM (MINVALUE) TO (25001)
Indexes:
    "pgbench_accounts_1_pkey" PRIMARY KEY, btree (aid)

`},
		}},
		{"hash", []string{"--partitions=4", "--partition-method=hash"}, []struct{ cmd, want string }{
			{`\d pgbench_accounts`, `        Partitioned table "public.pgbench_accounts"
  Column  |     Type      | Collation | Nullable | Default 
----------+---------------+-----------+----------+---------
 aid      | integer       |           | not null | 
 bid      | integer       |           |          | 
 abalance | integer       |           |          | 
 filler   | character(84) |           |          | 
Partition key: HASH (aid)
Indexes:
    "pgbench_accounts_pkey" PRIMARY KEY, btree (aid)
Number of partitions: 4 (Use \d+ to list them.)

`},
			{`\d pgbench_accounts_2`, `             Table "public.pgbench_accounts_2"
  Column  |     Type      | Collation | Nullable | Default 
----------+---------------+-----------+----------+---------
 aid      | integer       |           | not null | 
 bid      | integer       |           |          | 
 abalance | integer       |           |          | 
 filler   | character(84) |           |          | 
Partition of: pgbench_accounts FOR VALUES WITH (modulus 4, remainder 1)
Indexes:
    "pgbench_accounts_2_pkey" PRIMARY KEY, btree (aid)

`},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inst := lockdtest.Start(t, lockdtest.Options{})
			args := append([]string{"-i", "-s", "1", "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(inst.Port), "-U", "postgres"}, c.init...)
			if o := run(t, 60*time.Second, pgbench, append(args, "postgres")...); o.code != 0 {
				t.Fatalf("pgbench -i: exit %d\n%s", o.code, o.stderr)
			}
			for _, m := range c.cmds {
				o := psql(t, inst.Port, "-c", m.cmd)
				if m.want == "" { // a relation that does not exist
					wantOutput(t, m.cmd, o, 1, "", "Did not find any relation named \"nothing\".\n")
					continue
				}
				wantOutput(t, m.cmd, o, 0, m.want, "")
			}
		})
	}
}
