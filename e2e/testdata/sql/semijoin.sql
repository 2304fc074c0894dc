\set VERBOSITY verbose
\set SHOW_CONTEXT never
\pset null '(null)'
-- EXISTS, IN (subquery) and NOT EXISTS pulled up into semi and anti
-- joins: every way of doing them must give PostgreSQL's rows. NULLs on
-- both sides, repeated inner keys (a semi join never repeats an outer
-- row), empty inner sides, partitioned tables, nested subqueries, and
-- each join method forced in turn.
create table o (id int, k int, s text);
insert into o values (1, 1, 'a'), (2, 2, 'b'), (3, 2, 'c'), (4, null, 'd'), (5, 5, null), (6, 7, 'f'), (7, null, null);
create table i (k int, w int, s text);
insert into i values (1, 10, 'a'), (1, 11, 'a'), (2, 20, 'x'), (2, 21, null), (2, 22, 'b'), (null, 30, 'c'), (null, 31, null), (9, 90, 'f');
create table e (k int, s text);
create table big (k int primary key, g int, s text);
insert into big select n, n % 10, 'v' || (n % 3) from generate_series(1, 2000) n;
create index big_g on big (g);
create table part (k int not null, v int) partition by range (k);
create table part_0 partition of part for values from (0) to (5);
create table part_1 partition of part for values from (5) to (10);
create table part_2 partition of part for values from (10) to (100);
insert into part values (1, 1), (1, 2), (2, 3), (6, 4), (7, 5), (50, 6);
create index on part (k);
analyze o;
analyze i;
analyze big;
analyze part;
-- semi joins: each outer row once, NULL keys never match
select * from o where exists (select 1 from i where i.k = o.k) order by id;
select * from o where k in (select k from i) order by id;
select * from o where k = any (select k from i) order by id;
select * from o where exists (select * from i where i.k = o.k and i.w > 20) order by id;
select * from o where exists (select 1 from i where i.k = o.k and i.s = o.s) order by id;
select * from o where exists (select 1 from i where i.k = o.k and i.s is not distinct from o.s) order by id;
select * from o where exists (select 1 from i where i.k > o.k) order by id;
select * from o where exists (select 1 from i where i.k = o.k limit 1) order by id;
select * from o where exists (select 1 from i where i.k = o.k and o.id > 2) order by id;
select * from o where (k, s) in (select k, s from i) order by id;
select o.id, count(*) from o where o.k in (select k from i where w < 30) group by o.id order by o.id;
select count(*) from o where exists (select 1 from i where i.k = o.k);
-- anti joins: NOT EXISTS keeps rows whose key is NULL; NOT IN does not
select * from o where not exists (select 1 from i where i.k = o.k) order by id;
select * from o where not exists (select 1 from i where i.k = o.k and i.w > 20) order by id;
select * from o where not exists (select 1 from i where i.k > o.k) order by id;
select * from o where not exists (select 1 from i where i.k = o.k and o.id > 2) order by id;
select * from o where k not in (select k from i) order by id;
select * from o where k not in (select k from i where k is not null) order by id;
-- an empty inner side
select * from o where exists (select 1 from e where e.k = o.k) order by id;
select * from o where not exists (select 1 from e where e.k = o.k) order by id;
select * from o where k in (select k from e) order by id;
select * from o where k not in (select k from e) order by id;
-- an empty outer side
select * from e where exists (select 1 from i where i.k = e.k);
select * from e where not exists (select 1 from i where i.k = e.k);
-- several, nested, and beside joins
select * from o where exists (select 1 from i where i.k = o.k) and not exists (select 1 from i where i.k = o.k and i.w = 22) order by id;
select * from o where exists (select 1 from i where i.k = o.k and not exists (select 1 from big where big.k = i.w)) order by id;
select * from o where exists (select 1 from i where i.k = o.k and exists (select 1 from big where big.g = i.w % 10 and big.k = o.id)) order by id;
select * from o where exists (select 1 from i where i.k = o.k and not exists (select 1 from e where e.k = o.id)) order by id;
select * from o where exists (select 1 from big where big.g = o.k and not exists (select 1 from i where i.w = big.k)) order by id;
select * from o where not exists (select 1 from big where big.g = o.k and big.k > 5 and not exists (select 1 from i where i.w = big.k)) order by id;
-- under NOT EXISTS, a NOT EXISTS that reads only the outer rows stays a subquery
select * from o where not exists (select 1 from i where i.k = o.k and not exists (select 1 from big where big.k = o.id)) order by id;
select * from o where not exists (select 1 from i where i.k = o.k and not exists (select 1 from i i2 where i2.w = o.id * 10)) order by id;
select * from o where not exists (select 1 from i where i.k = o.k and exists (select 1 from i i2 where i2.w = o.id * 10)) order by id;
select * from o where exists (select 1 from big where big.g = o.k and exists (select 1 from i where i.w = big.k)) order by id;
select * from o where exists (select 1 from big where big.k = o.id * 10 and not exists (select 1 from i where i.w = big.k)) order by id;
select * from o where not exists (select 1 from big where big.k = o.id * 10 and not exists (select 1 from i where i.w = big.k)) order by id;
select * from o where exists (select 1 from big where big.k = o.k * 10 and exists (select 1 from i where i.w = big.k)) order by id;
select o.id, i.w from o join i on i.k = o.k where exists (select 1 from big where big.k = i.w) order by 1, 2;
select o.id, b.s from o join big b on b.k = o.id and exists (select 1 from i where i.k = o.k) order by 1;
select o.id from o left join i on i.k = o.k where not exists (select 1 from big where big.k = i.w) order by 1;
select o.id, i.w from o left join i on i.k = o.k where o.id < (select max(big.g) + 5 from big where big.k = i.w) and not exists (select 1 from big where big.g = i.k) order by 1, 2;
select o.id from o left join i on i.k = o.k where (select count(*) from i i2 where i2.s = i.s) < 3 and exists (select 1 from big where big.k = o.id) order by 1;
select * from (select * from o where exists (select 1 from i where i.k = o.k)) s where s.id > 1 order by id;
with c as (select * from o where k in (select k from i)) select * from c order by id;
select id, exists (select 1 from i where i.k = o.k) as e from o order by id;
select * from o where exists (select 1 from i where i.k = o.k) or id = 7 order by id;
select * from o where exists (select 1 from i, big where i.k = o.k and big.k = i.w) order by id;
select * from o where exists (select 1 from i join big on big.k = i.w where i.k = o.k) order by id;
-- large inner sides, with and without an index
select count(*) from big where exists (select 1 from i where i.w = big.k);
select count(*) from big where not exists (select 1 from i where i.w = big.k);
select count(*) from big where g in (select k from i);
select count(*) from big where exists (select 1 from big b2 where b2.g = big.g and b2.k = big.k + 1);
select * from o where exists (select 1 from big where big.g = o.k) order by id;
select * from o where not exists (select 1 from big where big.g = o.k) order by id;
select * from o where exists (select 1 from big where big.k = o.k * 100) order by id;
select * from o where id in (select k from big where g = 3) order by id;
-- partitioned tables on either side
select * from o where exists (select 1 from part where part.k = o.k) order by id;
select * from o where not exists (select 1 from part where part.k = o.k) order by id;
select * from o where k in (select k from part where v > 1) order by id;
select * from part where exists (select 1 from o where o.k = part.k) order by k, v;
select * from part where not exists (select 1 from o where o.k = part.k) order by k, v;
select * from part where k in (select k from i) order by k, v;
-- each method in turn
set enable_hashjoin = off;
select * from o where exists (select 1 from i where i.k = o.k) order by id;
select * from o where not exists (select 1 from i where i.k = o.k) order by id;
select * from o where k in (select k from i) order by id;
select count(*) from big where exists (select 1 from i where i.w = big.k);
select * from o where exists (select 1 from part where part.k = o.k) order by id;
set enable_nestloop = off;
set enable_hashjoin = on;
select * from o where exists (select 1 from i where i.k = o.k) order by id;
select * from o where not exists (select 1 from i where i.k = o.k) order by id;
select * from o where exists (select 1 from big where big.g = o.k) order by id;
select * from o where not exists (select 1 from i where i.k > o.k) order by id;
reset enable_nestloop;
set enable_hashagg = off;
select * from o where k in (select k from i) order by id;
reset enable_hashagg;
-- prepared, so that generic plans run them too
prepare q(int) as select id from o where exists (select 1 from i where i.k = o.k and i.w > $1) order by id;
execute q(0);
execute q(20);
execute q(100);
execute q(0);
execute q(20);
execute q(21);
execute q(9);
deallocate q;
-- the relations a semi join's subquery reads are locked as the
-- subquery's were: partitions pruned by constants when it is planned,
-- the partitions and indexes a generic plan opens
\set sjlocks 'select c.relname, c.relkind, l.mode from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = ''relation'' and c.relname ~ ''^(o|i|big|big_g|big_pkey|part.*)$'' order by 1, 3'
begin;
select id from o where exists (select 1 from part where part.k = o.k) order by id;
:sjlocks;
rollback;
begin;
select id from o where exists (select 1 from part where part.k = o.k and part.k < 5) order by id;
:sjlocks;
rollback;
begin;
select id from o where not exists (select 1 from part where part.k = o.k and part.k >= 10) order by id;
:sjlocks;
rollback;
begin;
select id from o where k in (select g from big where big.k < 3) order by id;
:sjlocks;
rollback;
set enable_hashjoin = off;
begin;
select id from o where exists (select 1 from part where part.k = o.k) order by id;
:sjlocks;
rollback;
reset enable_hashjoin;
prepare ql(int) as select id from o where exists (select 1 from part where part.k = o.k and part.k < $1) order by id;
begin;
execute ql(5);
execute ql(5);
execute ql(5);
execute ql(5);
execute ql(5);
:sjlocks;
execute ql(5);
:sjlocks;
rollback;
set plan_cache_mode = force_generic_plan;
begin;
execute ql(7);
:sjlocks;
rollback;
set plan_cache_mode = force_custom_plan;
begin;
execute ql(7);
:sjlocks;
rollback;
reset plan_cache_mode;
deallocate ql;
