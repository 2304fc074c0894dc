\set VERBOSITY verbose
\set SHOW_CONTEXT never
\pset null '(null)'
create table t1 (id int, name text);
insert into t1 values (1, 'a'), (2, 'b'), (3, 'c'), (null, 'n1');
create table parent (id int primary key, name text);
create table child (id int primary key, parent_id int references parent(id), note text);
insert into parent values (1, 'p1'), (2, 'p2'), (3, 'p3');
insert into child values (10, 1, 'ok');
insert into child values (11, 99, 'bad');
insert into child values (12, null, 'null fk ok');
update child set parent_id = 98 where id = 10;
update child set parent_id = 2 where id = 10;
delete from parent where id = 2;
update parent set id = 5 where id = 2;
update parent set name = 'p2 renamed' where id = 2;
delete from parent where id = 3;
insert into parent values (1, 'dup');
insert into parent values (null, 'x');
update parent set id = null where id = 1;
insert into child (id) values (null);
insert into child (parent_id) values (1);
create table c_cascade (id int, pid int references parent on delete cascade on update cascade);
create table c_setnull (id int, pid int references parent on delete set null);
create table c_setdef (id int, pid int default 1 references parent on delete set default);
create table c_restrict (id int, pid int references parent on delete restrict);
create table c_noaction (id int, pid int references parent on delete no action);
insert into parent values (7, 'p7'), (8, 'p8'), (9, 'p9');
insert into c_cascade values (1, 7), (2, 7), (3, 8);
insert into c_setnull values (1, 8), (2, 9);
insert into c_setdef values (1, 9);
delete from parent where id = 7;
select * from c_cascade order by id;
update parent set id = 80 where id = 8;
select * from c_cascade order by id;
delete from parent where id = 80;
select * from c_setnull order by id;
delete from parent where id = 9;
select * from c_setnull order by id;
select * from c_setdef order by id;
insert into parent values (6, 'p6');
insert into c_restrict values (1, 6);
delete from parent where id = 6;
insert into c_noaction values (1, 1);
delete from parent where id = 1;
create table cp (a int, b int, primary key (a, b));
create table cc (x int, a int, b int, foreign key (a, b) references cp (a, b));
insert into cp values (1, 1), (1, 2);
insert into cc values (1, 1, 1);
insert into cc values (2, 2, 1);
insert into cc values (3, 1, null);
insert into cc values (4, null, 99);
delete from cp where a = 1 and b = 1;
create table cc_full (x int, a int, b int, foreign key (a, b) references cp match full);
insert into cc_full values (1, 1, null);
create table bad1 (x text references t1(name));
create table bad2 (x int references t1);
create table bad3 (x text references parent(id));
create table bad4 (x int references nope(id));
create table bad5 (x int references parent(nope));
create table bad6 (a int, foreign key (a) references cp (a));
create table u (a int unique, b int, c int, unique (b, c));
insert into u values (1, 1, 1);
insert into u values (1, 2, 2);
insert into u values (2, 1, 1);
insert into u values (3, null, null), (4, null, null), (null, 5, null), (null, 6, null);
select * from u order by a nulls last, b;
create table items (id int primary key, code varchar(10) unique not null, qty int check (qty >= 0), price numeric(10,2) default 0 check (price < 100000), constraint price_pos check (price >= 0), check (qty < 1000 and price < 99999), check (qty <> 13));
select conname, contype, pg_get_constraintdef(oid) from pg_constraint where conrelid = 'items'::regclass order by conname;
insert into items values (1, 'A', -1, 0);
insert into items values (1, 'A', 5, -1);
insert into items values (1, 'A', 5000, 1);
insert into items values (1, 'A', 13, 1);
insert into items values (1, 'A', null, null);
insert into items values (2, null, 1, 1);
insert into items values (3, 'A', 1, 1);
insert into items (id, code) values (4, 'B') returning *;
update items set qty = -5 where id = 1;
insert into items values (5, 'this is too long', 1, 1);
create table lines (id int, item_id int references items(id), n int, primary key (id, n), constraint n_pos check (n > 0));
insert into lines values (1, 1, 0);
insert into lines values (1, 1, 1), (1, 4, 2);
insert into lines values (1, 1, 1);
insert into lines values (1, 2, 3);
insert into lines values (null, 1, 4);
create table cx (x int, y int);
insert into cx values (1, 1), (1, null), (2, 77);
alter table cx add constraint cx_fk foreign key (y) references parent(id);
alter table cx add foreign key (y) references parent(id);
alter table cx add constraint cx_u unique (x);
alter table cx add unique (x);
alter table cx add constraint cx_chk check (x > 1);
alter table cx add check (x > 1);
alter table cx alter column y set not null;
alter table cx add primary key (x);
alter table cx add constraint cx_chk check (x > 1) not valid;
alter table cx validate constraint cx_chk;
alter table cx add constraint cx_fk foreign key (y) references parent(id) not valid;
alter table cx validate constraint cx_fk;
select conname, contype, convalidated from pg_constraint where conrelid = 'cx'::regclass order by conname;
insert into cx values (0, 1);
alter table cx drop constraint cx_chk;
alter table cx drop constraint cx_chk;
alter table cx drop constraint if exists cx_chk;
alter table cx drop constraint cx_fk;
alter table items drop constraint items_qty_check;
insert into items values (9, 'Z', -1, 0);
alter table items drop constraint items_pkey;
alter table items drop constraint items_pkey cascade;
drop table parent;
drop table items;
truncate parent;
truncate cp;
drop table cp cascade;
\d cc
drop table parent cascade;
select conname from pg_constraint where conrelid = 'child'::regclass order by 1;
alter table child add constraint child_note_check check (length(note) > 0);
alter table child add constraint child_note_check check (length(note) > 1);
alter table nope add constraint x check (true);
-- what psql's \d shows
create table items2 (id int primary key, code varchar(10) unique not null, qty int check (qty >= 0), price numeric(10,2) default 0, note text, created timestamp default now(), flag bool);
create index items2_note_idx on items2 (note);
create table lines2 (id int, item_id int references items2(id), n int, primary key (id, n), constraint n_pos check (n > 0));
\d items2
\d lines2
\d+ items2
create table acts (id int primary key, pid int references items2 on delete cascade on update set null, a int, b int, foreign key (a, b) references lines2 (id, n) match full);
\d acts
select conname, contype, confupdtype, confdeltype, confmatchtype, conkey, confkey, conindid::regclass, convalidated from pg_constraint where conrelid = 'acts'::regclass order by conname;
select relname, relchecks, relhastriggers from pg_class where relname in ('items2', 'lines2', 'acts', 't1') order by relname;
-- how CHECK expressions are shown
create table d1 (a int, b int, s smallint, l bigint, n numeric(10,2), f float8, r real, t text, v varchar(10), c char(3), d date, ts timestamp, bo bool,
 check (a > 0), check (a + b > 1 + 2), check (a between 1 and 10), check (a in (1,2,3)), check (a not in (4,5)), check (t in ('x','y')),
 check (v = 'A'), check (c = 'ab'), check (t <> ''), check (length(t) > 0), check (lower(v) <> 'x'), check (a::text <> 'x'),
 check (s > a), check (l > a), check (n > 0), check (n > 1.5), check (n > a), check (f > a), check (r > 0.5),
 check (a is not null), check (a is null or b > 0), check (not (a > 5)), check (bo), check (bo is true), check (d > '2020-01-01'), check (ts < now()),
 check (t like 'a%'), check (-a < 0), check (a % 2 = 0), check (coalesce(a, 0) >= 0), check (case when a > 0 then b > 0 else true end),
 check ((a > 0 or b > 0) and t is not null), check (n >= -1), check (t = 'it''s'), check (a > 1 and (b < 2 or b > 5)),
 check (substr(t,1,1) = 'a'), check (t || 'x' <> 'y'), check (f > 1e10), check (l > 3000000000), check (v in ('a','b')), check (c in ('a','b')),
 check (a is distinct from b), check (cast(a as numeric) > 0), check (t is not distinct from 'x'), check (a >= 0 is true), check (not bo),
 check (round(a) > 0), check (mod(a, l) > 0), check (a in (1, 2) and l > 0), check (t in (v, 'x')), check (greatest(a, b) < 10), check (nullif(a, 0) > 0),
 check ((a + 1)::text <> 'x'), check (a::varchar(5) <> ''), check (trim(t) <> ''), check (coalesce(v, t) <> ''), check (n in (1, 2.5)));
select conname, pg_get_constraintdef(oid) as plain, pg_get_constraintdef(oid, true) as pretty from pg_constraint where conrelid = 'd1'::regclass order by oid;
-- CHECK errors when creating
create table e1 (a int check (a));
create table e1 (a int check (b > 0));
create table e1 (a int check (a > (select 1)));
create table e1 (a int check (count(*) > 0));
create table e1 (a int, constraint c1 check (a > 0), constraint c1 check (a > 1));
create table e1 (a int, constraint c1 check (a > 0), constraint c1 unique (a));
create table e1 (a int, constraint e1_a_check check (a > 0), check (a > 1), check (a > 2), check (a > 3 and a < 100));
select conname from pg_constraint where conrelid = 'e1'::regclass order by oid;
-- constraint attributes
create table e2a (a int unique deferrable);
create table e2b (a int references child deferrable initially deferred);
create table e2 (a int references child (id) not deferrable, foreign key (a) references child (id) initially immediate);
select conname from pg_constraint where conrelid = 'e2'::regclass order by conname;
-- foreign key definition errors
create table e3 (a int, b int, foreign key (a, b) references child);
create table e3 (a int, foreign key (a) references child (id, id));
create table e3 (a int references e3);
create table e3 (a int, b int references e3 (a));
create table e3 (e float8 references child);
create table e3 (a int, foreign key (nope) references child);
create table e3 (a int primary key, b int references e3);
insert into e3 values (1, null), (2, 1), (3, 3);
insert into e3 values (4, 5);
delete from e3 where a = 1;
update e3 set a = 10 where a = 3;
select * from e3 order by a;
-- unique constraints: names, duplicates merged with the primary key
create table u2 (a int primary key, b int, c int, unique (a), unique (b, c), unique (c, b), constraint u2_named unique (b));
select conname, contype, pg_get_constraintdef(oid) from pg_constraint where conrelid = 'u2'::regclass order by conname;
create table u3 (a int primary key, constraint u3_named unique (a));
create table u4 (a int unique, constraint u4_foo unique (a), constraint u4_bar unique (a));
select conrelid::regclass, conname, contype from pg_constraint where conrelid in ('u3'::regclass, 'u4'::regclass) order by 1, 2;
insert into u2 values (1, 1, 1), (2, 1, 2);
alter table u2 drop constraint u2_b_c_key;
drop index u2_named;
alter table u2 drop constraint u2_named;
\d u2
-- COPY and INSERT ... SELECT check every row
create table cc2 (id int primary key, v int check (v between 0 and 9), p int references cc2);
copy cc2 from stdin;
1	1	\N
2	2	1
\.
copy cc2 from stdin;
3	30	1
\.
copy cc2 from stdin;
3	3	99
\.
insert into cc2 select g, g, 1 from generate_series(4, 6) g;
insert into cc2 select g, g, 77 from generate_series(7, 8) g;
select * from cc2 order by id;
-- a self-referencing chain deleted by cascade
create table tree (id int primary key, parent int references tree on delete cascade);
insert into tree values (1, null), (2, 1), (3, 2), (4, 3), (5, 1);
delete from tree where id = 2;
select * from tree order by id;
update tree set id = 10 where id = 5;
-- keys changed on several rows in one statement
create table kp (id int primary key, name text);
create table kc (id int, pid int references kp on update cascade on delete cascade);
create table kn (id int, pid int references kp);
insert into kp values (1, 'a'), (2, 'b'), (3, 'c');
insert into kc values (1, 1), (2, 2), (3, 2);
update kp set id = id + 10;
select * from kc order by id;
insert into kn values (1, 13);
update kp set id = id + 10;
update kp set id = id + 10 where id <> 13;
select * from kp order by id;
select * from kc order by id;
delete from kp where id in (21, 22);
select * from kc order by id;
insert into tree values (20, 21), (21, null);
insert into tree values (30, 31), (31, 32);
select * from tree order by id;
-- partitioned tables: CHECKs and FOREIGN KEYs of the parent hold in each partition
create table pk (id int primary key);
insert into pk values (1), (2);
create table pc (k int, ref int references pk, v int check (v > 0)) partition by range (k);
create table pc1 partition of pc for values from (0) to (10);
create table pc2 partition of pc for values from (10) to (20);
insert into pc values (1, 1, 1), (11, 2, 2);
insert into pc values (2, 3, 1);
insert into pc values (12, 1, 0);
insert into pc1 values (3, 1, -1);
update pc set k = 15 where k = 1;
update pc set ref = 9 where k = 11;
delete from pk where id = 1;
select * from pc order by k;
\d pc
\d pc1
select conname, conrelid::regclass, conparentid <> 0 as clone, relchecks, relhastriggers from pg_constraint join pg_class on conrelid = pg_class.oid where conrelid in ('pc'::regclass, 'pc1'::regclass) order by 2, 1;
alter table pc1 drop constraint pc_v_check;
alter table pc1 drop constraint pc_ref_fkey;
create table x9 (k int, ref int, v int);
alter table pc attach partition x9 for values from (20) to (30);
alter table x9 add constraint pc_v_check check (v > 1);
alter table pc attach partition x9 for values from (20) to (30);
alter table x9 drop constraint pc_v_check;
alter table x9 add constraint pc_v_check check (v > 0);
insert into x9 values (25, 5, 1);
alter table pc attach partition x9 for values from (20) to (30);
update x9 set ref = 2;
alter table pc attach partition x9 for values from (20) to (30);
insert into pc values (26, 9, 1);
alter table pc detach partition pc2;
\d pc2
insert into pc2 values (12, 9, 1);
truncate pk;
truncate pk, pc;
alter table pc drop constraint pc_ref_fkey;
-- foreign keys between different types
create table tp (i int primary key, s smallint unique, v varchar(5) unique, t text unique);
create table tr (a bigint references tp(i), b int references tp(s), c text references tp(v), d varchar references tp(t), e smallint references tp(i));
insert into tp values (1, 1, 'a', 'a');
insert into tr values (1, 1, 'a', 'a', 1);
insert into tr values (5000000000, null, null, null, null);
insert into tr values (null, 2, null, null, null);
insert into tr values (null, null, 'b', null, null);
insert into tr values (null, null, null, null, 2);
delete from tp;
update tp set s = 2;
update tp set v = 'b';
select * from tr;
-- a plain unique index can back a foreign key; dropping it needs CASCADE
create table tq (a int);
create unique index tq_a on tq (a);
create table tqr (a int references tq (a));
insert into tq values (1);
insert into tqr values (1);
drop index tq_a;
drop index tq_a cascade;
\d tqr
insert into tqr values (2);
-- locks of a foreign-key check and of deleting a referenced row
create table lp (id int primary key, u int unique);
create table lc (id int, pid int references lp);
insert into lp values (1, 1), (2, 2);
begin;
insert into lc values (1, 1);
select relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text <> 'pg_locks' order by relation::regclass::text, mode;
commit;
begin;
update lc set id = 2 where id = 1;
select relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text <> 'pg_locks' order by relation::regclass::text, mode;
commit;
begin;
delete from lp where id = 2;
select relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text <> 'pg_locks' order by relation::regclass::text, mode;
rollback;
begin;
alter table lc add constraint lc_fk2 foreign key (pid) references lp;
select relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text <> 'pg_locks' order by relation::regclass::text, mode;
rollback;
begin;
alter table lc add constraint lc_chk check (id > 0);
select relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text <> 'pg_locks' order by relation::regclass::text, mode;
rollback;
begin;
drop table lc;
select relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text not in ('pg_locks', relation::text) order by relation::regclass::text, mode;
rollback;
-- the locks of index-backed constraints (DefineIndex's)
begin;
create table k2 (a int primary key, b int unique);
select relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text <> 'pg_locks' order by relation::regclass::text, mode;
rollback;
begin;
create table k1 (a int);
alter table k1 add primary key (a);
alter table k1 add constraint k1_u unique (a);
select relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text <> 'pg_locks' order by relation::regclass::text, mode;
rollback;
-- the locks of the referential actions
create table p2 (id int primary key, name text unique);
create table c_casc (id int primary key, pid int references p2 on delete cascade on update cascade);
create table c_sn (id int, pid int references p2 on delete set null on update set null);
create table c_restr (id int, pid int references p2 on delete restrict);
create index on c_sn (pid);
insert into p2 values (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd');
insert into c_casc values (1, 1);
insert into c_sn values (1, 2);
begin;
delete from p2 where id = 1;
select relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text <> 'pg_locks' order by relation::regclass::text, mode;
select * from c_casc;
rollback;
begin;
update p2 set id = 10 where id = 2;
select relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text <> 'pg_locks' order by relation::regclass::text, mode;
select * from c_sn;
rollback;
-- constraints in a rolled-back savepoint go with it
begin;
savepoint s;
alter table lc add constraint lc_chk check (id > 100);
rollback to savepoint s;
insert into lc values (5, 1);
commit;
select conname from pg_constraint where conrelid = 'lc'::regclass;
