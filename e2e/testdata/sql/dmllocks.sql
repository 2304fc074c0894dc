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
