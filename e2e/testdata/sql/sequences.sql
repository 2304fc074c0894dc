\set VERBOSITY verbose
\set SHOW_CONTEXT never
\pset null '(null)'
-- the relation locks this session holds on user relations, with its xid
\set locks 'select locktype, relation::regclass as rel, mode, fastpath from pg_locks where pid = pg_backend_pid() and locktype in (\'relation\', \'transactionid\') and (relation is null or relation::regclass::text not like \'pg_%\') order by 1, relation::regclass::text, 3;'
-- CREATE SEQUENCE, nextval, currval, lastval
create sequence s;
select * from s;
select currval('s');
select lastval();
select nextval('s');
select * from s;
select nextval('s'), nextval('s'), currval('s'), lastval();
select last_value, is_called from s;
select s.log_cnt from s;
select nextval('nope');
select currval('nope');
create sequence s;
create sequence if not exists s;
create sequence if not exists s increment 0;
-- option errors
create sequence bad increment 0;
create sequence bad minvalue 10 maxvalue 5;
create sequence bad start 100 maxvalue 50;
create sequence bad start 0;
create sequence bad as smallint maxvalue 100000;
create sequence bad as smallint minvalue -100000;
create sequence bad as integer start 3000000000;
create sequence bad as text;
create sequence bad as numeric;
create sequence bad cache 0;
create sequence bad increment 1 increment 2;
create sequence bad cycle no cycle;
create sequence bad maxvalue 99999999999999999999;
create sequence bad restart 0;
create sequence bad owned by a;
create sequence bad owned by nope.a;
create sequence bad owned by s.last_value;
create sequence nope.bad;
select relname from pg_class where relname = 'bad';
-- limits, descending sequences, cycles, caches
create sequence up maxvalue 3;
select nextval('up'), nextval('up'), nextval('up');
select nextval('up');
select * from up;
create sequence down increment -1 minvalue -2 maxvalue 0;
select nextval('down'), nextval('down'), nextval('down');
select nextval('down');
create sequence neg increment -5;
select nextval('neg'), nextval('neg'), currval('neg');
create sequence cyc maxvalue 2 cycle;
select nextval('cyc'), nextval('cyc'), nextval('cyc'), nextval('cyc'), nextval('cyc');
create sequence cyd increment -2 minvalue -3 maxvalue 3 start 1 cycle;
select nextval('cyd'), nextval('cyd'), nextval('cyd'), nextval('cyd');
create sequence small as smallint start 32766;
select nextval('small'), nextval('small');
select nextval('small');
create sequence big start 9223372036854775806;
select nextval('big'), nextval('big');
select nextval('big');
create sequence cached cache 3;
select nextval('cached');
select * from cached;
select nextval('cached'), nextval('cached');
select * from cached;
select nextval('cached');
select * from cached;
create sequence by10 increment 10 start 5 minvalue 5;
select nextval('by10'), nextval('by10');
-- setval
select setval('s', 100);
select currval('s'), lastval();
select nextval('s');
select setval('s', 200, false), currval('s');
select nextval('s');
select setval('s', 300, true), nextval('s');
select * from s;
select setval('up', 5);
select setval('up', 0);
select setval('up', 2, false), nextval('up');
select setval('cached', 50), nextval('cached'), nextval('cached');
select * from cached;
-- nextval in queries: once per row; after ORDER BY (and stopped by LIMIT) unless a sort key reads it
create sequence q;
select nextval('q') from generate_series(1, 3);
select g, nextval('q') from generate_series(1, 3) g where nextval('q') > 0 order by g;
select nextval('q'), g from generate_series(1, 10) g order by g desc offset 3 limit 2;
select currval('q');
select nextval('q') as n, g from generate_series(1, 3) g order by n desc;
select nextval('q') + 0 as n, g from generate_series(1, 3) g order by g desc, 1;
select (select nextval('q')), nextval('q') + 100;
-- argument forms
select nextval('s'::regclass), nextval('S'), nextval('public.s'), nextval('"s"');
select nextval('s'::text);
select nextval(NULL), currval(NULL), setval(NULL, 1), setval('s', NULL);
select nextval('pg_class');
select nextval(1.5);
select setval('s', 1.5);
select setval('s');
select nextval();
create table t1 (a int);
select nextval('t1');
select currval('t1');
select setval('t1', 1);
-- values are not transactional
begin;
select nextval('s');
rollback;
select nextval('s');
begin;
select setval('s', 1000);
rollback;
select nextval('s');
begin;
select nextval('s');
savepoint sp;
select nextval('s');
rollback to sp;
select nextval('s'), currval('s');
commit;
-- ALTER SEQUENCE
create sequence a;
select nextval('a');
alter sequence a restart;
select * from a;
select nextval('a');
alter sequence a restart with 50;
select nextval('a'), currval('a');
alter sequence a increment by 10;
select * from a;
select nextval('a');
alter sequence a maxvalue 20;
alter sequence a as smallint;
\d a
alter sequence a as integer;
\d a
alter sequence a no maxvalue;
alter sequence a start with 5;
alter sequence a start with 0;
alter sequence a minvalue 100;
alter sequence a cycle cache 2;
\d a
alter sequence a no cycle cache 1;
alter sequence if exists nope restart;
alter sequence nope restart;
alter sequence t1 restart;
alter sequence a owned by nope;
begin;
alter sequence a restart with 1000;
select nextval('a');
rollback;
select nextval('a');
begin;
alter sequence a increment by 1;
select nextval('a');
commit;
select nextval('a');
-- DROP SEQUENCE
drop sequence up, down;
drop sequence up;
drop sequence if exists up, neg;
drop sequence t1;
drop table s;
drop index s;
begin;
drop sequence cyc;
rollback;
select nextval('cyc');
select lastval();
drop sequence cyc;
select lastval();
select nextval('cyd');
drop sequence cyd;
select lastval();
drop sequence a restrict;
drop sequence nope.a;
-- serial columns
create table t (id serial primary key, name text);
create table b (id bigserial, s smallserial, v text);
insert into t (name) values ('a'), ('b');
insert into t values (default, 'c');
insert into t values (10, 'd');
insert into t (name) values ('e') returning id;
select * from t order by id;
insert into b (v) values ('x'), ('y');
select * from b order by id;
select currval('t_id_seq'), lastval();
select * from t_id_seq;
\d t
\d t_id_seq
\d b
create table t2 (t_id serial, t_id_seq int, b_id_seq serial);
\d t2
create table e (id serial default 5);
create table e (id serial generated always as identity);
create table e (id serial[]);
-- sequence names: table_column_seq, shortened to 63 bytes, numbered when taken
create table abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij (klmnopqrstklmnopqrst serial, x serial);
create table abcdefghijabcdefghijabcdefghijabcdefghijabcdefghi2 (klmnopqrstklmnopqrst serial);
create table "Mixed Case" ("Id" serial, "é" serial);
select relname from pg_class where relkind = 'S' and (relname like 'abc%' or relname like 'Mixed%') order by 1;
\d "Mixed Case"
select pg_get_serial_sequence('"Mixed Case"', 'Id');
insert into "Mixed Case" default values returning *;
drop table abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij, abcdefghijabcdefghijabcdefghijabcdefghijabcdefghi2, "Mixed Case";
-- identity columns
create table ti (id int generated always as identity primary key, b bigint generated by default as identity (start with 10 increment by 5), v text);
insert into ti (v) values ('x');
insert into ti values (5, 6, 'y');
insert into ti (id, v) values (default, 'z');
insert into ti (id, v) values (default, 'z2'), (default, 'z3');
insert into ti (id, v) values (default, 'a'), (7, 'b');
insert into ti overriding system value values (50, 6, 'y');
insert into ti (b, v) values (100, 'w');
insert into ti overriding user value values (7, 8, 'u');
insert into ti (id, v) select 1, 'q';
insert into ti default values;
select * from ti order by id;
update ti set id = 100 where id = 1;
update ti set b = 1 where id = 2;
update ti set id = default where id = 2;
select * from ti order by id;
\d ti
\d+ ti
\d ti_id_seq
\d+ ti_id_seq
\d ti_b_seq
create table tn (id smallint generated always as identity (sequence name myseq cache 10 minvalue 5));
\d tn
\d myseq
insert into tn default values;
select * from tn;
create table e (id text generated always as identity);
create table e (id int generated always as identity default 5);
create table e (id int default 5 generated always as identity);
create table e (id int generated always as identity generated always as identity);
create table e (id int generated always as identity (increment 0));
create table e (id int generated always as identity (sequence name t));
create sequence bad sequence name x;
-- defaults that name sequences
create sequence sq;
create table td (id int default nextval('sq'), j int default nextval('sq'::regclass), k bigint default nextval('SQ') + 1);
\d td
insert into td default values;
select * from td;
create table e (id int default nextval('nope'));
drop sequence sq;
drop sequence sq, s;
drop sequence sq cascade;
\d td
create sequence one;
create table t1d (id int default nextval('one'));
drop sequence one cascade;
\d t1d
-- owned sequences: OWNED BY, dropping their table, identity sequences
create sequence own owned by t.name;
\d own
alter sequence own owned by none;
\d own
alter sequence own owned by t.nope;
alter sequence own owned by t_id_seq.last_value;
alter sequence own owned by t.name;
alter sequence ti_id_seq owned by none;
alter sequence ti_id_seq owned by t.name;
alter sequence ti_id_seq restart with 90;
insert into ti (v) values ('restarted');
drop sequence t_id_seq;
drop sequence ti_id_seq;
drop sequence ti_id_seq cascade;
create table tu (id int default nextval('t_id_seq'));
drop table t;
drop table t cascade;
\d tu
select relname from pg_class where relname in ('t_id_seq', 'own') order by 1;
drop table ti, b;
select relname from pg_class where relkind = 'S' order by 1;
-- TRUNCATE ... RESTART IDENTITY
create table tr (id serial, v text);
insert into tr (v) values ('a'), ('b');
truncate tr restart identity;
insert into tr (v) values ('c');
select * from tr;
truncate tr continue identity;
insert into tr (v) values ('d');
select * from tr;
begin;
truncate tr restart identity;
rollback;
insert into tr (v) values ('e');
select * from tr order by id;
create table trp (id int primary key);
create table trc (id serial, pid int references trp);
insert into trp values (1);
insert into trc (pid) values (1), (1);
truncate trp restart identity cascade;
insert into trp values (1);
insert into trc (pid) values (1);
select * from trc;
drop table trc, trp;
-- DISCARD SEQUENCES, read-only transactions
create sequence ds cache 5;
select nextval('ds');
discard sequences;
select currval('ds');
select lastval();
select nextval('ds');
select * from ds;
begin read only;
select nextval('ds');
rollback;
begin read only;
select setval('ds', 3);
rollback;
begin read only;
select currval('ds'), lastval(), last_value from ds;
rollback;
begin read only;
create sequence ro;
rollback;
begin read only;
alter sequence ds restart;
rollback;
begin read only;
drop sequence ds;
rollback;
begin read only;
insert into tr (v) values ('x');
rollback;
drop sequence ds;
-- catalogs
select pg_get_serial_sequence('tr', 'id'), pg_get_serial_sequence('tr', 'v'), pg_get_serial_sequence('public.tr', 'id'), pg_get_serial_sequence('tn', 'id');
select pg_get_serial_sequence('nope', 'id');
select pg_get_serial_sequence('tr', 'nope');
select pg_get_serial_sequence('"tr"', 'ID');
select seqrelid::regclass, seqtypid::regtype, seqstart, seqincrement, seqmax, seqmin, seqcache, seqcycle from pg_sequence order by seqrelid::regclass::text;
select * from pg_sequences order by sequencename;
select relname, relkind, relpersistence, relnatts, relam, relhasindex, relpages, reltuples, relreplident from pg_class where relkind = 'S' order by 1;
select attname, atttypid::regtype, attnum, attnotnull from pg_attribute where attrelid = 'tr_id_seq'::regclass and attnum > 0 order by attnum;
select attname, attidentity, atthasdef, attnotnull from pg_attribute where attrelid = 'tn'::regclass and attnum > 0;
select adnum, pg_get_expr(adbin, adrelid) from pg_attrdef where adrelid = 'tr'::regclass;
select classid::regclass, objid::regclass, objsubid, refclassid::regclass, refobjid::regclass, refobjsubid, deptype from pg_depend where objid in ('tr_id_seq'::regclass, 'myseq'::regclass, 'own'::regclass) order by objid::regclass::text, refclassid::regclass::text;
select pg_relation_size('tr_id_seq'), pg_table_size('myseq');
create unlogged sequence unl;
create unlogged table ut (id serial);
select relname, relpersistence from pg_class where relname in ('unl', 'ut', 'ut_id_seq') order by 1;
\ds
-- a sequence where a table is expected
insert into by10 values (1, 0, true);
update by10 set last_value = 1;
delete from by10;
copy by10 to stdout;
truncate by10;
create index on by10 (last_value);
alter table by10 add primary key (last_value);
select * from by10 for update;
begin;
lock table by10;
rollback;
select count(*), max(last_value) from by10, tr;
select ctid, tableoid::regclass, * from by10;
vacuum by10;
analyze by10;
vacuum analyze by10, tr;
-- locks: a nextval that logs (the first, and every 32nd) takes an xid
create sequence lx;
begin;
select nextval('lx');
:locks
commit;
begin;
select nextval('lx');
:locks
commit;
begin;
savepoint sp;
select setval('lx', 10);
rollback to sp;
:locks
commit;
begin;
select nextval('by10');
:locks
select nextval('by10');
select currval('by10');
:locks
commit;
begin;
select currval('by10');
:locks
commit;
begin;
select setval('by10', 5);
:locks
commit;
begin;
select lastval();
:locks
commit;
begin;
select * from by10;
:locks
commit;
begin;
insert into tr (v) values ('locks');
:locks
commit;
begin;
alter sequence by10 restart;
:locks
commit;
begin;
alter sequence by10 owned by tr.v;
select locktype, relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text not like 'pg_%' order by 1, relation::regclass::text, 3;
commit;
begin;
create sequence lk owned by tr.v;
select locktype, relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text not like 'pg_%' order by 1, relation::regclass::text, 3;
commit;
begin;
create table tl (id serial, v int generated by default as identity);
select locktype, relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text not like 'pg_%' order by 1, relation::regclass::text, 3;
commit;
begin;
truncate tl restart identity;
select locktype, relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text not like 'pg_%' order by 1, relation::regclass::text, 3;
commit;
begin;
drop table tl;
select locktype, mode, count(*) from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation not in (select oid from pg_class) group by 1, 2 order by 1, 2;
commit;
begin;
drop sequence lk;
select locktype, mode, count(*) from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation not in (select oid from pg_class) group by 1, 2 order by 1, 2;
commit;
