\set VERBOSITY verbose
\set SHOW_CONTEXT never
\pset null '(null)'
-- ALTER TABLE's column forms, RENAME and CREATE TABLE AS, with their locks
-- (relation locks of this session, by name: what a rewrite makes and drops
-- again has no name once the statement ends)
create table t (a int primary key, b text, c int);
create index t_c_idx on t (c);
create index t_bc_idx on t (b, c);
insert into t values (1, 'x', 10), (2, 'y', 20);
-- ADD COLUMN with a constant default: no rewrite, rows already there read it
begin;
alter table t add column d int default 5;
select c.relname, l.mode, l.granted from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname not like 'pg\_%' order by 1, 2;
select relname, relfilenode = oid as same_file from pg_class where relname in ('t', 't_pkey', 't_c_idx') order by 1;
commit;
select * from t order by a;
select attname, attnum, attisdropped, atthasmissing, attmissingval from pg_attribute where attrelid = 't'::regclass and attnum > 0 order by attnum;
insert into t (a, b) values (3, 'z');
select * from t order by a;
\d t
alter table t add column d int;
alter table t add column if not exists d int;
alter table t add column if not exists d text, add column d2 text default 'hello' not null;
alter table t add e numeric(5,2) default 1.5, add column f varchar(4) default 'ab';
alter table t add column ctid int;
alter table t add column g int not null;
alter table t add column g int not null default 0;
alter table t add column h bool default 'x';
alter table t add column h int default (select 1);
alter table t add column h int default a;
alter table nope add column x int;
alter table if exists nope add column x int;
select * from t order by a;
select attname, attnum, atthasmissing, attmissingval from pg_attribute where attrelid = 't'::regclass and attnum > 0 order by attnum;
-- a volatile default rewrites the table: every row its own value
begin;
alter table t add column r float8 default random();
select c.relname, l.mode, l.granted from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname not like 'pg\_%' order by 1, 2;
select relname, relfilenode = oid as same_file from pg_class where relname in ('t', 't_pkey', 't_c_idx') order by 1;
select count(*), count(r), min(r) >= 0 and max(r) < 1 as in_range from t;
select attname, atthasmissing from pg_attribute where attrelid = 't'::regclass and attnum > 0 order by attnum;
rollback;
-- DROP COLUMN: no rewrite; the indexes on the column go with it
begin;
alter table t drop column c;
select c.relname, l.mode, l.granted from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname not like 'pg\_%' order by 1, 2;
select relname from pg_class where relname like 't\_%' order by 1;
commit;
\d t
select * from t order by a;
select attname, attnum, attisdropped, atthasmissing, atttypid from pg_attribute where attrelid = 't'::regclass and attnum > 0 order by attnum;
select relname, relnatts from pg_class where relname = 't';
alter table t drop column c;
alter table t drop column if exists c;
alter table t drop c;
alter table t drop column tableoid;
alter table t drop column f, drop column e;
alter table t add column c int default 7;
select attname, attnum, attisdropped from pg_attribute where attrelid = 't'::regclass and attnum > 0 order by attnum;
select * from t order by a;
insert into t values (4, 'w', 8, 'bye', 0, 9);
select * from t order by a;
-- DROP runs before ADD whatever the order written (AT_PASS_DROP)
alter table t add column k int, drop column k;
alter table t drop column b, add column b text default 'new';
select * from t order by a;
-- dependencies: foreign keys of other tables need CASCADE, the column's own go
create table p (id int primary key, code int unique, name text);
create table ch (id int, pid int references p, pcode int references p (code));
insert into p values (1, 100, 'one');
insert into ch values (1, 1, 100);
alter table p drop column id;
alter table p drop column id cascade;
alter table ch drop column pcode;
\d p
\d ch
create table cc (a int, b int, c int, check (a < b), check (c > 0), primary key (a, c));
alter table cc drop column b;
alter table cc drop column c;
\d cc
-- ALTER COLUMN SET DEFAULT, DROP DEFAULT
alter table t alter column b set default 'x';
alter table t alter column g set default 2 + 3;
alter table t alter column g set default 'a';
alter table t alter column g set default (select 1);
alter table t alter column g set default b;
alter table t alter column nope set default 1;
alter table t alter column ctid set default 1;
alter table t alter d2 drop default;
\d t
insert into t (a, d2) values (5, 'five');
select * from t order by a;
-- ALTER COLUMN TYPE: a rewrite when the stored form changes, indexes rebuilt
create table ty (id int primary key, v varchar(10), n int check (n > 0), s text);
create index ty_v_idx on ty (v);
create index ty_n_idx on ty (n);
insert into ty values (1, 'one', 1, '10'), (2, 'two', 2, '20');
begin;
alter table ty alter column v type varchar(20);
select c.relname, l.mode, l.granted from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname not like 'pg\_%' order by 1, 2;
select relname, relfilenode = oid as same_file from pg_class where relname = 'ty';
commit;
begin;
alter table ty alter column n type bigint;
select c.relname, l.mode, l.granted from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname not like 'pg\_%' order by 1, 2;
select relname, relfilenode = oid as same_file from pg_class where relname = 'ty';
commit;
alter table ty alter column s type int;
alter table ty alter column s type int using s::int * 2;
alter table ty alter column s set data type numeric(6,1);
alter table ty alter column s type numeric(2,1);
alter table ty alter column v type int;
alter table ty alter column v type int using nope;
alter table ty alter column v type int using length(v) > 0;
alter table ty alter column n type text;
alter table ty alter column nope type int;
alter table ty alter column ctid type int;
alter table ty alter column v type varchar(2);
alter table ty alter column v type char(5), alter column id type bigint;
\d ty
select * from ty order by id;
select pg_typeof(id), pg_typeof(v), pg_typeof(n), pg_typeof(s) from ty limit 1;
create table tu (x text unique, y int not null);
insert into tu values ('a', 1), ('A', 2);
alter table tu alter column x type text using lower(x);
alter table tu alter column y type int using null;
alter table tu alter column y type int using 1 / (y - 1);
-- RENAME
begin;
alter table ty rename column v to vv;
select c.relname, l.mode, l.granted from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname not like 'pg\_%' order by 1, 2;
commit;
\d ty
\d ty_v_idx
alter table ty rename column nope to x;
alter table ty rename column vv to id;
alter table ty rename column vv to ctid;
alter table ty rename column ctid to x;
alter table if exists nope rename column a to b;
begin;
alter index ty_v_idx rename to ty_vv_idx;
select c.relname, l.mode, l.granted from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname not like 'pg\_%' order by 1, 2;
alter table ty_n_idx rename to ty_nn_idx;
select c.relname, l.mode, l.granted from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname not like 'pg\_%' order by 1, 2;
commit;
begin;
alter table ty rename to ty2;
select c.relname, l.mode, l.granted from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname not like 'pg\_%' order by 1, 2;
commit;
alter index ty_pkey rename to ty2_pk;
begin;
alter table ty2 rename constraint ty_n_check to ty2_n_positive;
alter table ty2 rename constraint ty2_pk to ty2_pkey;
select c.relname, l.mode, l.granted from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname not like 'pg\_%' order by 1, 2;
commit;
alter table ty2 rename constraint ty2_pkey to ty2_pk;
alter table ty2 rename constraint nope to x;
alter table ty2 rename constraint ty2_pk to ty2_n_positive;
alter table ty2 rename constraint ty2_pk to t;
\d ty2
alter table ty2 rename to t;
alter table ty2 rename to ty2_pk;
alter table nope rename to x;
alter table if exists nope rename to x;
alter index if exists nope rename to x;
insert into ty2 values (3, 'three', 3, 3.5);
select * from ty2 order by id;
-- partitioned tables: ADD, DROP, RENAME and TYPE recurse, locking each partition
create table pt (a int, b int, c text) partition by range (a);
create table pt1 partition of pt for values from (0) to (10);
create table pt2 partition of pt for values from (10) to (20);
create index on pt (b);
insert into pt values (1, 1, 'x'), (15, 2, 'y');
begin;
alter table pt add column d int default 7;
select c.relname, l.mode, l.granted from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname not like 'pg\_%' order by 1, 2;
commit;
alter table only pt add column e int;
alter table only pt drop column d;
alter table only pt rename column d to dd;
alter table only pt alter column d type bigint;
alter table pt1 add column e int;
alter table pt1 drop column d;
alter table pt1 rename column d to dd;
alter table pt1 alter column d type bigint;
alter table pt drop column a;
alter table pt alter column a type bigint;
alter table pt rename column d to dd;
begin;
alter table pt drop column c;
select c.relname, l.mode, l.granted from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname not like 'pg\_%' order by 1, 2;
commit;
select attrelid::regclass::text as rel, attname, attnum, attisdropped, atthasmissing from pg_attribute where attrelid in ('pt'::regclass, 'pt1'::regclass) and attnum > 0 order by 1, attnum;
create table pt3 partition of pt for values from (20) to (30);
select attname, attnum, attisdropped from pg_attribute where attrelid = 'pt3'::regclass and attnum > 0 order by attnum;
begin;
alter table pt alter column dd type bigint;
select c.relname, l.mode, l.granted from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname not like 'pg\_%' order by 1, 2;
commit;
alter table pt1 alter column dd set default 8;
insert into pt (a, b) values (2, 3), (25, 4);
insert into pt1 (a, b) values (3, 3);
select tableoid::regclass, * from pt order by a;
\d pt
\d pt1
create table pe (a int, b int) partition by list (a);
alter table only pe add column c int;
alter table only pe drop column c;
-- serial and identity columns, DEFAULT NULL
create table sq (a int, b int default null);
insert into sq (a) values (10), (20);
begin;
alter table sq add column id serial;
select c.relname, c.relkind, l.mode, l.granted from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname not like 'pg\_%' order by 1, 3;
commit;
alter table sq add column gid bigint generated always as identity, alter column b set default null;
alter table sq alter column gid set default 1;
alter table sq alter column gid drop default;
alter table sq alter column gid type text;
alter table sq add column c int default null;
\d sq
select * from sq order by a;
alter table sq drop column id;
select relname from pg_class where relkind = 'S' order by 1;
alter table pt add column pid int generated always as identity;
-- CREATE TABLE AS, SELECT INTO
create table c1 as select * from ty2;
\d c1
create table c2 (x, y) as select id, vv, 'lit' as l, 1 + 1 as s, null as z, 1.5 as f, id::bigint as ib, n * 2 as n2, true as bo from ty2 where id = 1;
\d c2
select * from c2;
create table c3 as select * from ty2 with no data;
select * from c3;
create table if not exists c3 as select 1;
create table c3 as select 1;
create table c4 (x, y, z) as select 1, 2;
create table c5 as select 1 as x, 2 as x;
select id, vv into c6 from ty2 where id < 3 order by id;
select * from c6;
select 1 as q into c6;
create table c7 with (fillfactor = 50) as values (1, 'a'), (2, 'b');
\d+ c7
begin;
create unlogged table c8 as select id from ty2;
select c.relname, l.mode, l.granted from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname not like 'pg\_%' order by 1, 2;
commit;
\d c8
-- SET (fillfactor), SET LOGGED | UNLOGGED, and what is not supported
begin;
alter table c1 set (fillfactor = 40);
select c.relname, l.mode, l.granted from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname not like 'pg\_%' order by 1, 2;
commit;
select relname, reloptions from pg_class where relname = 'c1';
alter table c1 reset (fillfactor);
alter table c1 set (fillfactor = 5);
alter table c1 set (nope = 1);
alter table pt set (fillfactor = 20);
select relname, reloptions from pg_class where relname = 'c1';
begin;
alter table c1 set unlogged;
select c.relname, l.mode, l.granted from pg_locks l join pg_class c on c.oid = l.relation where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relname not like 'pg\_%' order by 1, 2;
select relname, relpersistence, relfilenode = oid as same_file from pg_class where relname = 'c1';
commit;
alter table c1 set logged;
select relname, relpersistence from pg_class where relname = 'c1';
select count(*) from c1;
alter table c1 alter column id set statistics 100;
