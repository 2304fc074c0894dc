\set VERBOSITY verbose
\set SHOW_CONTEXT never
\pset null '(null)'
-- PREPARE, EXECUTE, DEALLOCATE and pg_prepared_statements
create table tp (a int primary key, b int, c text);
create index tp_b on tp (b);
insert into tp select g, g * 10, 'r' || g from generate_series(1, 20) g;
prepare q(int) as select b, c from tp where a = $1;
prepare r as select count(*) from tp;
prepare s(int, text) as select $1 + 1, $2 || '!';
prepare ins(int, int) as insert into tp values ($1, $2, 'new') returning a, b, c;
prepare upd as update tp set b = b + 1 where a <= 2;
prepare inferred as select $1 = 'x', $2 + 1;
execute q(5);
execute q('7');
execute q(5.5);
execute q(2 + 1);
execute s(41, 'hi');
execute ins(100, 1000);
execute upd;
execute r;
select name, statement, parameter_types, from_sql from pg_prepared_statements order by name;
select name, generic_plans, custom_plans from pg_prepared_statements order by name;
-- five custom plans, then the generic plan, which pruning cannot beat here
execute q(1);
execute q(1);
execute q(1);
select name, generic_plans, custom_plans from pg_prepared_statements where name = 'q';
execute r;
select name, generic_plans, custom_plans from pg_prepared_statements where name in ('q', 'r') order by name;
-- errors
prepare q as select 1;
execute nope;
execute q;
execute q(1, 2);
execute q('x');
execute q(true);
execute s(1);
prepare bad(nosuchtype) as select 1;
prepare bad2 as select * from nosuchtable;
prepare bad3 as create table x (a int);
deallocate nope;
deallocate prepare q;
execute q(1);
select count(*) from pg_prepared_statements;
deallocate all;
select count(*) from pg_prepared_statements;
-- a prepared statement survives the rollback of the transaction that made it
begin;
prepare t as select 1 as one;
rollback;
execute t;
-- and is planned again after DDL, which may not change its result columns
create table tx (a int, b int);
insert into tx values (1, 2);
prepare star as select * from tx where a = 1;
prepare one as select a from tx where a = 1;
create index tx_a on tx (a);
execute star;
drop table tx;
create table tx (a int, b int, c int);
insert into tx values (1, 2, 3);
execute one;
execute star;
-- assignment casts: a number to a number, anything to a string type
prepare typed(int, text, numeric) as select $1, $2, $3;
execute typed(1.6, 42, 7);
execute typed('2', true, 1e3);
-- plan_cache_mode decides what the executions of a prepared statement lock
create table pt (a int primary key, b int) partition by range (a);
create table pt1 partition of pt for values from (0) to (10);
create table pt2 partition of pt for values from (10) to (20);
create table pt3 partition of pt for values from (20) to (30);
insert into pt select g, g from generate_series(0, 29) g;
prepare pq(int) as select b from pt where a = $1;
prepare locks as select relation::regclass::text as rel, mode from pg_locks
  where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text like 'pt%' order by 1;
begin;
execute pq(5);
execute locks;
commit;
execute pq(5);
execute pq(5);
execute pq(5);
execute pq(5);
begin;
execute pq(5);
execute locks;
commit;
begin;
execute pq(5);
execute locks;
commit;
select name, generic_plans, custom_plans from pg_prepared_statements where name = 'pq';
set plan_cache_mode = force_generic_plan;
prepare gq(int) as select b from pt where a = $1;
begin;
execute gq(15);
execute locks;
commit;
begin;
execute gq(15);
execute locks;
commit;
select name, generic_plans, custom_plans from pg_prepared_statements where name = 'gq';
set plan_cache_mode = force_custom_plan;
prepare cq as select count(*) from pt;
execute cq;
execute cq;
select name, generic_plans, custom_plans from pg_prepared_statements where name = 'cq';
show plan_cache_mode;
set plan_cache_mode = sometimes;
reset plan_cache_mode;
