-- lockd settings: fastpath_lock_slots=16
\set VERBOSITY verbose
\set SHOW_CONTEXT never
-- The 2024 thread's join at its size: two tables of 100 range partitions
-- (1,000 keys each), joined on the key with a range of 10 keys on the
-- outer side. After the sixth execution of the prepared statement the
-- generic plan locks every partition of both sides and the inner side's
-- indexes: more than the 16 fast-path slots PostgreSQL 15 has, so most
-- locks go to the shared lock table. The locks, fast-path or not, must be
-- PostgreSQL's.
create table pj1 (k int not null, v int) partition by range (k);
create table pj2 (k int not null, v int) partition by range (k);
\o /dev/null
select format('create table pj1_%s partition of pj1 for values from (%s) to (%s)', i, i * 1000, (i + 1) * 1000),
       format('create table pj2_%s partition of pj2 for values from (%s) to (%s)', i, i * 1000, (i + 1) * 1000)
from generate_series(0, 99) i \gexec
\o
insert into pj1 select g, g % 97 from generate_series(0, 99999) g;
insert into pj2 select g, g % 89 from generate_series(0, 99999) g;
create index on pj1 (k);
create index on pj2 (k);
analyze pj1;
analyze pj2;
\set pjlocks 'select substr(c.relname, 1, 3) as tab, c.relkind, l.mode, l.fastpath, count(*) from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = ''relation'' and c.relname like ''pj%'' group by 1, 2, 3, 4 order by 1, 2, 3, 4'
\set fastpath 'select string_agg(c.relname, '' '' order by c.relname) from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = ''relation'' and l.fastpath and c.relname like ''pj%'''
prepare q(int) as select count(*) from pj1 join pj2 on pj1.k = pj2.k where pj1.k between $1 and $1 + 9;
begin;
execute q(500);
:pjlocks;
execute q(500);
execute q(500);
execute q(500);
execute q(500);
execute q(500);
:pjlocks;
execute q(99995);
:pjlocks;
:fastpath;
rollback;
begin;
execute q(42000);
:pjlocks;
:fastpath;
rollback;
-- simple protocol: a custom plan each time
begin;
select count(*) from pj1 join pj2 on pj1.k = pj2.k where pj1.k between 12345 and 12354;
:pjlocks;
rollback;
deallocate q;
drop table pj1, pj2;
