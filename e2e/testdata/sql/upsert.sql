\set VERBOSITY verbose
\set SHOW_CONTEXT never
\pset null '(null)'
-- INSERT ... ON CONFLICT
create table kv (k int primary key, v int not null default 0, note text);
insert into kv values (1, 10, 'a'), (2, 20, 'b');
insert into kv values (1, 0, 'x') on conflict do nothing;
insert into kv values (1, 0, 'x') on conflict (k) do nothing returning *;
insert into kv values (3, 30, 'c') on conflict (k) do nothing returning *;
insert into kv values (1, 5, 'x') on conflict (k) do update set v = kv.v + excluded.v returning *;
insert into kv values (1, 5, 'x'), (2, 5, 'y'), (4, 40, 'd') on conflict (k) do update set v = kv.v + excluded.v, note = kv.note || excluded.note returning k, v, note;
insert into kv as t values (2, 1, 'z') on conflict (k) do update set v = t.v * 2 where t.v > 1000 returning *;
insert into kv as t values (2, 1, 'z') on conflict (k) do update set v = t.v * 2 where t.v < 1000 and excluded.note = 'z' returning *;
insert into kv values (3, 0, 'q') on conflict on constraint kv_pkey do update set note = excluded.note returning *;
insert into kv values (3, 0, 'q') on conflict ((k)) do update set v = default returning *;
insert into kv values (3, 0, 'q') on conflict (k, k) do update set (v, note) = (excluded.v + 1, default) returning *;
insert into kv (k) values (5) on conflict (k) where v > 0 do update set v = excluded.v returning *;
insert into kv values (3, 0, 'q') on conflict (k) do update set v = (select max(v) from kv) returning k, v;
insert into kv as excluded values (3, 0, 'q') on conflict (k) do update set note = 'alias' returning note;
-- rows of one statement that share a key
insert into kv values (6, 1, 'a'), (6, 2, 'b') on conflict (k) do nothing returning *;
insert into kv values (7, 1, 'a'), (7, 2, 'b') on conflict (k) do update set v = excluded.v;
insert into kv values (1, 1, 'a'), (1, 2, 'b') on conflict (k) do update set v = excluded.v;
insert into kv select g % 2 + 100, g, 's' from generate_series(1, 4) g on conflict (k) do nothing returning k, v;
insert into kv select g + 200, g, 's' from generate_series(1, 3) g on conflict (k) do update set v = 0 returning k, v;
select * from kv order by k;
-- NULL keys never conflict; a table without unique indexes inserts
create table nk (k int, v int);
create unique index nk_k on nk (k);
create table nk2 (k int, v int);
insert into nk values (null, 1), (null, 2) on conflict do nothing;
insert into nk2 values (1, 1), (1, 2) on conflict do nothing;
select count(*) from nk;
select count(*) from nk2;
-- a unique index that is no arbiter still raises 23505
create table two (a int primary key, b int);
create unique index two_b on two (b);
insert into two values (1, 1), (2, 2);
insert into two values (3, 1) on conflict (a) do nothing;
insert into two values (1, 2) on conflict (a) do update set b = excluded.b;
insert into two values (3, 1) on conflict do nothing returning *;
insert into two values (1, 9) on conflict (a) do update set a = 2;
insert into two values (1, 9) on conflict (b) do nothing;
-- errors
insert into kv values (1) on conflict do update set v = 0;
insert into kv values (1) on conflict (v) do nothing;
insert into kv values (1) on conflict (nope) do nothing;
insert into kv values (1) on conflict ((k + 1)) do nothing;
insert into kv values (1) on conflict (k desc) do nothing;
insert into kv values (1) on conflict (k nulls last) do nothing;
insert into kv values (1) on conflict (ctid) do nothing;
insert into kv values (1) on conflict on constraint nope do nothing;
insert into kv values (1) on conflict (k) where nope do nothing;
insert into kv values (1) on conflict (k) do update set nope = 1;
insert into kv values (1) on conflict (k) do update set ctid = '(0,1)';
insert into kv values (1) on conflict (k) do update set v = v + 1;
insert into kv values (1) on conflict (k) do update set v = excluded.nope;
insert into kv values (1) on conflict (k) do update set v = excluded.ctid;
insert into kv values (1) on conflict (k) do update set v = 'x';
insert into kv values (1) on conflict (k) do update set v = null;
insert into kv values (1) on conflict (k) do update set v = count(*);
insert into kv values (1) on conflict (k) do update set v = generate_series(1, 2);
insert into kv values (1) on conflict (k) do update set v = 1 where 1;
insert into kv values (1) on conflict (k) do update set v = 1 where sum(kv.v) > 0;
insert into kv values (1) on conflict (k) do update set v = 1, v = 2;
insert into kv values (1) on conflict (v) do update set v = 1, v = 2;
insert into kv values (1) on conflict (k) do update set v = 1 returning excluded.v;
insert into kv values (1) on conflict do nothing returning excluded.v;
insert into kv as t values (1) on conflict (k) do update set v = kv.v;
insert into kv values (1) on conflict (k) do update set (v, note) = (1);
create table tx (k text primary key, v int);
insert into tx values ('a', 1) on conflict (k collate "default") do nothing;
insert into tx values ('a', 1) on conflict (k collate "C") do nothing;
insert into tx values ('a', 1) on conflict (k text_ops) do nothing;
insert into tx values ('a', 1) on conflict (k text_pattern_ops) do nothing;
insert into tx values ('a', 1) on conflict (k nope_ops) do nothing;
insert into tx values ('a', 1) on conflict (k collate "nope") do nothing;
select * from tx;
-- partitioned tables
create table pu (k int primary key, n int) partition by range (k);
create table pu1 partition of pu for values from (0) to (10);
create table pu2 partition of pu for values from (10) to (20);
create index pu_n on pu (n);
insert into pu values (1, 1), (11, 11) on conflict (k) do nothing;
insert into pu values (1, 5), (12, 12), (11, 5) on conflict (k) do update set n = pu.n + excluded.n returning tableoid::regclass, *;
insert into pu values (1, 1) on conflict (k) do update set k = 11;
insert into pu1 values (1, 1) on conflict (k) do update set k = 2 returning tableoid::regclass, *;
insert into pu1 values (2, 1) on conflict (k) do update set k = 15;
insert into pu1 values (15, 1) on conflict do nothing;
insert into pu values (30, 1) on conflict do nothing;
insert into pu values (12, 0) on conflict on constraint pu_pkey do update set n = 0 returning tableoid::regclass, *;
select tableoid::regclass, * from pu order by k;
-- locks: RowExclusiveLock on the table, and on the indexes arbiter inference opens
begin;
insert into kv values (1, 1) on conflict (k) do update set v = 1;
select relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text not like 'pg_%' order by relation::regclass::text;
rollback;
begin;
insert into two values (8, 8) on conflict do nothing;
select relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text not like 'pg_%' order by relation::regclass::text;
rollback;
begin;
insert into pu values (1, 1) on conflict (k) do update set n = 1;
select relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text not like 'pg_%' order by relation::regclass::text;
rollback;
-- the row lock DO UPDATE leaves, also where WHERE rejects the row
begin;
insert into kv values (2, 0) on conflict (k) do update set v = 0 where false;
select locktype, mode from pg_locks where pid = pg_backend_pid() and locktype in ('tuple', 'transactionid') order by 1;
rollback;
-- repeatable read: the transaction's own rows are no serialization failure
begin isolation level repeatable read;
insert into kv values (50, 1);
insert into kv values (50, 1) on conflict (k) do update set v = kv.v + 1 returning *;
insert into kv values (50, 1) on conflict do nothing returning *;
commit;
-- prepared
prepare ups(int, int) as insert into kv values ($1, $2) on conflict (k) do update set v = kv.v + excluded.v returning k, v;
execute ups(60, 1);
execute ups(60, 2);
deallocate ups;
