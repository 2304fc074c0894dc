\set VERBOSITY verbose
\set SHOW_CONTEXT never
-- the relation locks DML holds until the end of its transaction
create table il (a int primary key, b int);
create index il_b on il (b);
begin;
insert into il values (1, 1);
select relation::regclass::text as rel, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text like 'il%' order by 1, 2;
insert into il select 2, 2;
select relation::regclass::text as rel, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text like 'il%' order by 1, 2;
insert into il select a + 10, b from il;
select relation::regclass::text as rel, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text like 'il%' order by 1, 2;
rollback;
begin;
update il set b = 3 where a = 1;
insert into il values (5, 5);
select relation::regclass::text as rel, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text like 'il%' order by 1, 2;
rollback;
begin;
copy il from stdin;
\.
select relation::regclass::text as rel, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text like 'il%' order by 1, 2;
rollback;
begin;
insert into il values (7, 7) returning *;
select relation::regclass::text as rel, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text like 'il%' order by 1, 2;
rollback;
begin;
copy il to stdout;
select relation::regclass::text as rel, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text like 'il%' order by 1, 2;
rollback;
begin;
delete from il where a = 1;
select relation::regclass::text as rel, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text like 'il%' order by 1, 2;
rollback;
begin;
select * from il where b = 1;
select relation::regclass::text as rel, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text like 'il%' order by 1, 2;
rollback;
begin;
lock table il in share mode;
insert into il values (8, 8);
select relation::regclass::text as rel, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text like 'il%' order by 1, 2;
rollback;
drop table il;
-- a subquery's relations are locked with the statement's, even when the
-- subquery never runs
create table sl1 (a int);
create table sl2 (a int primary key, b int);
create index sl2_b on sl2 (b);
begin;
select (select count(*) from sl2 where sl2.a = sl1.a) from sl1;
select relation::regclass::text as rel, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text like 'sl%' order by 1, 2;
rollback;
begin;
delete from sl1 where a in (select b from sl2 where b > 0);
select relation::regclass::text as rel, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text like 'sl%' order by 1, 2;
rollback;
drop table sl1, sl2;
-- a bitmap scan: AccessShareLock on the table and on each index it reads
-- (the planner opens every index of a plain table anyway); on a
-- partitioned table's cached generic plan the executor opens only the
-- indexes of the partitions run-time pruning keeps
create table bl (a int primary key, b int, c int);
create index bl_b on bl (b);
create index bl_c on bl (c);
insert into bl select g, (g * 7919) % 1000, g % 100 from generate_series(1, 20000) g;
analyze bl;
explain (costs off) select count(*) from bl where b < 50 and c < 5;
begin;
select count(*) from bl where b < 50 and c < 5;
select relation::regclass::text as rel, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text like 'bl%' order by 1, 2;
rollback;
drop table bl;
create table blp (k int not null, v int, w int) partition by range (k);
create table blp_0 partition of blp for values from (0) to (10000);
create table blp_1 partition of blp for values from (10000) to (20000);
insert into blp select g, (g * 7919) % 500, g % 50 from generate_series(0, 19999) g;
create index blp_v on blp (v);
create index blp_w on blp (w);
analyze blp;
prepare blq(int) as select count(*) from blp where k < $1 and (v = 3 or v = 7);
set plan_cache_mode = force_generic_plan;
execute blq(5000);
begin;
execute blq(5000);
select relation::regclass::text as rel, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text like 'blp%' order by 1, 2;
rollback;
reset plan_cache_mode;
deallocate blq;
begin;
select count(*) from blp where v = 3 or v = 7;
select relation::regclass::text as rel, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text like 'blp%' order by 1, 2;
rollback;
drop table blp;
