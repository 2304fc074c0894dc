-- Partitioned tables through psql. partitions.out is what psql 15 printed
-- against a real PostgreSQL 15 (fresh database) for this script.
create table ri (a int not null, b text) partition by range (a);
create table ri1 partition of ri for values from (minvalue) to (10);
create table ri2 partition of ri for values from (10) to (20);
create table ri3 partition of ri for values from (20) to (maxvalue);
create table h (a int not null, b int) partition by hash (a);
create table h1 partition of h for values with (modulus 2, remainder 1);
create table h0 partition of h for values with (modulus 2, remainder 0);
create table l (a int) partition by list (a);
create table l1 partition of l for values in (1, 2);
create table l2 partition of l for values in (null);
create table rt (a text) partition by range (a);
create table rt1 partition of rt for values from ('a') to ('m');
create table rm (a int, b int, c int) partition by range (a, b, c);
create table rm1 partition of rm for values from (1, 5, minvalue) to (3, maxvalue, maxvalue);
create table rmd partition of rm default;
alter table h add primary key (a);
create index on ri (b);
-- bound errors
create table x partition of ri for values from (5) to (15);
create table x partition of ri for values in (1);
create table x partition of l for values from (1) to (2);
create table x partition of l for values in (2, 3);
create table x partition of l for values in (5, null);
create table x partition of h for values with (modulus 0, remainder 0);
create table x partition of h for values with (modulus 4, remainder 1);
create table x partition of h for values with (modulus 3, remainder 1);
create table x partition of h default;
create table x partition of rt for values from ('z') to ('c');
create table x partition of rm for values from (1) to (2);
create table x partition of rm for values from (5, minvalue, 3) to (6, 1, 1);
create table x partition of ri for values from ('abc') to (20);
create table x partition of ri for values from (null) to (2);
create table x partition of ri for values from (a) to (2);
create table x (a int, b int) partition by list (a, b);
create table x (a int, b int) partition by range (z);
create table x partition of ri default;
create table x partition of ri default;
create table x2 partition of ri for values from (100) to (200);
create unique index on ri (b);
alter table l add primary key (a);
-- routing, constraints, movement
insert into ri values (5, 'a'), (15, 'b'), (25, 'c');
insert into ri values (null, 'n');
insert into ri2 values (5, 'x');
insert into l values (1), (2), (null);
insert into l values (7);
insert into h select g, g from generate_series(1, 10) g;
insert into h select g, g from generate_series(1, 10) g where g % 2 = 1;
insert into rt values ('zz');
insert into rm values (1, 5, 0), (2, 0, 0), (3, 9, 9);
insert into rm values (10, 0, 0);
update ri set a = a + 100 where a = 25;
update ri1 set a = 12 where a = 5;
update ri set a = 12 where a = 5;
select * from ri order by a;
select * from ri2 order by a;
select count(*) from h;
select a from h1 order by a;
select a from h0 order by a;
select * from rm order by a;
select * from rmd order by a;
select * from l order by a;
select count(*) from only ri;
delete from ri where a > 10;
select count(*) from ri;
copy ri to stdout;
copy (select * from ri) to stdout;
copy ri from stdin;
7	seven
8	eight
\.
copy ri2 from stdin;
11	eleven
9	nine
\.
select * from ri order by a;
truncate only ri;
truncate ri;
select count(*) from ri;
alter table ri detach partition ri3;
insert into ri values (50, 'fifty');
alter table ri attach partition ri3 for values from (20) to (maxvalue);
insert into ri3 values (50, 'fifty');
alter table ri detach partition ri3;
alter table ri attach partition ri3 for values from (20) to (40);
delete from ri3;
alter table ri attach partition ri3 for values from (20) to (40);
drop index ri1_b_idx;
drop table ri1;
insert into ri values (1, 'one');
drop table ri;
select * from ri3;
