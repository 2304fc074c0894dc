"""psycopg2's named (server-side) cursors against a server given by DSN:
iteration in itersize batches, fetchmany, scrolling, WITH HOLD cursors.
Prints one line per check; exits non-zero on the first failure."""
import sys

import psycopg2

dsn = sys.argv[1]
conn = psycopg2.connect(dsn)
cur = conn.cursor()
cur.execute("drop table if exists curs")
cur.execute("create table curs (i int primary key, s text)")
cur.execute("insert into curs select g, 'row ' || g from generate_series(1, 2500) g")
conn.commit()


def check(what, got, want):
    if got != want:
        print("FAIL %s: got %r, want %r" % (what, got, want))
        sys.exit(1)
    print("ok %s" % what)


# iteration fetches itersize rows per FETCH FORWARD
named = conn.cursor("big")
named.itersize = 700
named.execute("select i, s from curs order by i")
rows = list(named)
check("iterate", (len(rows), rows[0], rows[-1]), (2500, (1, "row 1"), (2500, "row 2500")))
named.close()

# fetchone, fetchmany, fetchall
named = conn.cursor("parts")
named.execute("select i from curs where i <= %s order by i", (10,))
check("fetchone", named.fetchone(), (1,))
check("fetchmany", named.fetchmany(3), [(2,), (3,), (4,)])
check("fetchall", named.fetchall(), [(i,) for i in range(5, 11)])
named.close()
conn.commit()

# scrollable: scroll relative and absolute
named = conn.cursor("scroller", scrollable=True)
named.execute("select i from curs order by i")
named.scroll(99)
check("scroll relative", named.fetchone(), (100,))
named.scroll(10, mode="absolute")
check("scroll absolute", named.fetchone(), (11,))
named.scroll(-5)
check("scroll back", named.fetchone(), (7,))
named.close()
conn.commit()

# withhold: the cursor outlives the commit
named = conn.cursor("held", withhold=True)
named.execute("select i from curs where i > 2490 order by i")
check("withhold first", named.fetchone(), (2491,))
conn.commit()
check("withhold after commit", named.fetchmany(2), [(2492,), (2493,)])
named.close()

# a closed cursor is gone on the server
cur.execute("select count(*) from pg_cursors")
check("pg_cursors empty", cur.fetchone(), (0,))
conn.rollback()
cur.execute("drop table curs")
conn.commit()
conn.close()
print("done")
