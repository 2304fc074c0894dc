\set VERBOSITY verbose
\set SHOW_CONTEXT never
-- The 2024 thread's join of two range-partitioned tables (here 8
-- partitions of 1,000 keys each): the inner side is pruned per outer row
-- and read through each partition's index. The results, and the relation
-- locks custom and generic plans hold, must be PostgreSQL's.
create table pj1 (k int not null, v int) partition by range (k);
create table pj2 (k int not null, v int) partition by range (k);
select format('create table pj1_%s partition of pj1 for values from (%s) to (%s)', i, i * 1000, (i + 1) * 1000),
       format('create table pj2_%s partition of pj2 for values from (%s) to (%s)', i, i * 1000, (i + 1) * 1000)
from generate_series(0, 7) i \gexec
insert into pj1 select g, g % 97 from generate_series(0, 7999) g;
insert into pj2 select g, g % 89 from generate_series(0, 7999, 2) g;
create index on pj1 (k);
create index on pj2 (k);
analyze pj1;
analyze pj2;
\set pjlocks 'select c.relname, c.relkind, l.mode from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = ''relation'' and c.relname like ''pj%'' order by 1, 3'
select count(*), sum(pj2.v) from pj1 join pj2 on pj1.k = pj2.k where pj1.k between 995 and 1004;
select pj1.k, pj2.v from pj1 join pj2 on pj2.k = pj1.k where pj1.k between 1995 and 2004 order by 1;
select pj1.k, pj2.k from pj1 left join pj2 on pj1.k = pj2.k where pj1.k between 2997 and 3001 order by 1;
select count(*) from pj1 join pj2 on pj1.k = pj2.k where pj1.k between 995 and 1004 and pj2.k between 995 and 1004;
select count(*) from pj1 join pj2 on pj1.k = pj2.k and pj2.v > 10 where pj1.k in (10, 1010, 7010, 7998);
-- a custom plan prunes the outer side when it is planned and locks every
-- partition of the inner side, with its index
begin;
select count(*) from pj1 join pj2 on pj1.k = pj2.k where pj1.k between 995 and 1004;
:pjlocks;
rollback;
-- prepared: five custom plans, then a generic plan that locks every
-- partition of both sides (initial pruning only skips opening the
-- outer side's indexes)
prepare q(int) as select count(*) from pj1 join pj2 on pj1.k = pj2.k where pj1.k between $1 and $1 + 9;
begin;
execute q(995);
execute q(995);
execute q(995);
execute q(995);
execute q(995);
:pjlocks;
execute q(995);
execute q(3995);
:pjlocks;
rollback;
begin;
execute q(5995);
:pjlocks;
rollback;
deallocate q;
-- a correlated subquery prunes at each execution among the partitions
-- opened once, which are all of them
begin;
select k, (select count(*) from pj2 where pj2.k = pj1.k) from pj1 where k between 998 and 1001 order by k;
:pjlocks;
rollback;
begin;
delete from pj2 where k = (select max(k) from pj1 where k < 1500);
:pjlocks;
rollback;
drop table pj1, pj2;
