\set VERBOSITY verbose
\set SHOW_CONTEXT never
\pset null '(null)'
-- foreign keys referencing a partitioned table (and both sides partitioned)
create table p (id int primary key, v text) partition by range (id);
create table p1 partition of p for values from (0) to (10);
create table p2 partition of p for values from (10) to (20) partition by range (id);
create table p21 partition of p2 for values from (10) to (15);
create table p22 partition of p2 for values from (15) to (20);
create table c (a int, pid int references p);
create table c2 (a int, pid int, constraint myfk foreign key (pid) references p on delete cascade);
create table cn (a int, pid int references p on delete set null on update set null);
create table cp (a int, pid int references p on update cascade) partition by list (a);
create table cp1 partition of cp for values in (1);
create table cp2 partition of cp for values in (2);
select conname, conrelid::regclass, confrelid::regclass, conindid::regclass,
       (select min(x.conname::text) from pg_constraint x where x.oid = c.conparentid) as parent,
       conislocal, coninhcount, connoinherit, pg_get_constraintdef(oid)
  from pg_constraint c where contype = 'f' order by conrelid::regclass::text, conname;
\d p
\d p1
\d p21
\d c
\d cp
\d cp1
-- new partitions get clones of the keys referencing their parent
create table p3 partition of p for values from (20) to (30);
create table p4 (id int not null, v text);
alter table p attach partition p4 for values from (30) to (40);
select conname, conrelid::regclass, confrelid::regclass, conindid::regclass,
       (select min(x.conname::text) from pg_constraint x where x.oid = c.conparentid) as parent
  from pg_constraint c where confrelid in ('p3'::regclass, 'p4'::regclass) order by conname;
\d p4
-- the referencing side's checks
insert into p values (1, 'a'), (2, 'b'), (3, 'c'), (11, 'd'), (16, 'e'), (21, 'f'), (31, 'g');
insert into c values (1, 1), (2, 11), (3, 16);
insert into c values (9, 99);
insert into c values (9, 5);
insert into c values (9, null);
update c set pid = 21 where a = 9;
update c set pid = 25 where a = 9;
insert into cp values (1, 2), (2, 21);
insert into cp values (1, 99);
update cp set pid = 98 where a = 2;
update cp set a = 1 where a = 2;
select tableoid::regclass, * from cp order by a, pid;
insert into c2 values (1, 31), (2, 3);
insert into cn values (1, 3), (2, 11);
-- the referenced side: rows deleted or keys changed in a partition
delete from p where id = 1;
delete from p1 where id = 1;
delete from p where id = 16;
update p set id = 4 where id = 1;
update p set v = 'aa' where id = 1;
delete from p where id = 31;
select * from c2 order by a;
delete from p where id = 3;
select * from c2 order by a;
select * from cn order by a;
update p set id = 12 where id = 11;
insert into p values (13, 'h'), (14, 'i');
insert into cn values (3, 13), (4, 14);
update p set id = 12 where id = 14;
select * from cn order by a;
-- a row moving to another partition fires the ON UPDATE action of the
-- table the UPDATE names
update p set id = 15 where id = 1;
update p set id = 17 where id = 2;
select * from cp order by a, pid;
update p set id = 5 where id = 21;
select * from cp order by a, pid;
update p set id = 23 where id = 17;
select * from cp order by a, pid;
update p set id = 6 where id = 13;
select * from cn order by a;
update p2 set id = 18 where id = 12;
select tableoid::regclass, * from p order by id;
-- a foreign key referencing a partition in between cannot follow a move
create table cd (a int references p2);
insert into cd values (19);
insert into p values (19, 'j');
insert into cd values (19);
update p set id = 14 where id = 19;
update p set id = 26 where id = 18;
update p2 set id = 14 where id = 19;
update p2 set id = 17 where id = 18;
delete from cd;
update p2 set id = 14 where id = 19;
drop table cd;
-- TRUNCATE, DETACH and DROP of referenced partitions
truncate p1;
truncate p3;
truncate p;
begin;
truncate p3, c, c2, cn, cp;
select count(*) from p3;
rollback;
begin;
truncate p1 cascade;
rollback;
alter table p detach partition p1;
alter table p2 detach partition p22;
alter table p detach partition p2;
delete from c where pid = 16;
alter table p2 detach partition p22;
\d p22
select conname, conrelid::regclass, confrelid::regclass from pg_constraint where confrelid = 'p22'::regclass;
drop table p1;
drop table p21;
begin;
drop table p21 cascade;
select conname, conrelid::regclass, confrelid::regclass from pg_constraint where contype = 'f' order by conname;
rollback;
drop table p;
alter table c drop constraint c_pid_fkey1;
alter table c drop constraint c_pid_fkey;
\d c
select count(*) from pg_constraint where conrelid = 'c'::regclass;
-- a detached referencing partition keeps its foreign key, with clones of its own
alter table cp detach partition cp1;
select conname, conrelid::regclass, confrelid::regclass,
       (select min(x.conname::text) from pg_constraint x where x.oid = c.conparentid) as parent, conislocal
  from pg_constraint c where conrelid = 'cp1'::regclass order by conname;
\d cp1
insert into cp1 values (1, 98);
-- NOT VALID and VALIDATE
create table cv (a int);
insert into cv values (2), (11);
alter table cv add foreign key (a) references p not valid;
select conname, convalidated, pg_get_constraintdef(oid) from pg_constraint where conrelid = 'cv'::regclass order by conname;
alter table cv validate constraint cv_a_fkey;
select conname, convalidated from pg_constraint where conrelid = 'cv'::regclass order by conname;
insert into cv values (19);
alter table cv drop constraint cv_a_fkey;
insert into cv values (19);
alter table cv add foreign key (a) references p;
delete from cv where a = 19;
alter table cv add foreign key (a) references p;
-- multi-column keys and hash partitions
create table h (a int, b text, primary key (a, b)) partition by hash (a);
create table h0 partition of h for values with (modulus 2, remainder 0);
create table h1 partition of h for values with (modulus 2, remainder 1);
insert into h select i, 'x' || i from generate_series(1, 6) i;
create table hc (x int, a int, b text, foreign key (a, b) references h on delete restrict);
insert into hc values (1, 1, 'x1'), (2, 2, 'x2'), (3, 3, null);
insert into hc values (4, 4, 'x5');
delete from h where a = 1;
delete from h where a = 5;
update h set b = 'y2' where a = 2;
\d h
\d h0
-- a partitioned table referencing itself
create table sr (id int primary key, parent int references sr on delete cascade) partition by range (id);
create table sr1 partition of sr for values from (0) to (10);
create table sr2 partition of sr for values from (10) to (20);
select conname, conrelid::regclass, confrelid::regclass, conparentid <> 0 as clone
  from pg_constraint where conrelid::regclass::text like 'sr%' order by conname, conrelid::regclass::text;
insert into sr values (1, null), (11, 1), (2, 11);
insert into sr values (3, 99);
update sr set id = 12 where id = 2;
delete from sr where id = 1;
select * from sr order by id;
drop table sr;
-- dropping the referencing tables drops their clones
drop table c, c2, cn, cp, cp1, cv, hc;
select count(*) from pg_constraint where contype = 'f';
drop table p, h;
