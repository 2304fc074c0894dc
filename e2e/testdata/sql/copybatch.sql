-- COPY FROM buffers rows and inserts them a page at a time: row checks,
-- unique checks, foreign keys, partition routing and error lines must be
-- what row-at-a-time insertion gives (PostgreSQL's multi-insert COPY).
-- The rows come from awk through psql's \copy (COPY FROM STDIN).
create table cb (id int primary key, v int check (v >= 0), p int references cb, t text);
-- row 2500 references row 2999, read later in the same COPY
\copy cb from program 'awk -v n=N -v s=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx "BEGIN { for (g = 1; g <= 3000; g++) print g, g % 7, (g == 2500 ? 2999 : (g > 1 ? g - 1 : n)), substr(s, 1, g % 50) }"' with (delimiter ' ', null 'N')
select count(*), sum(v), sum(length(t)), count(p) from cb;
set enable_seqscan = off;
select count(*) from cb where id > 0;
select * from cb where id in (1, 1000, 2500, 3000) order by id;
reset enable_seqscan;
-- a duplicate key far into the input: the error names its line
create table cb2 (id int primary key, v int);
\copy cb2 from program 'awk "BEGIN { for (g = 1; g <= 3000; g++) print (g == 2345 ? 17 : g), g }"' with (delimiter ' ')
select count(*) from cb2;
-- a CHECK violation and a foreign key to a missing row
\copy cb from program 'awk "BEGIN { for (g = 3001; g <= 4000; g++) print g, (g == 3800 ? -1 : g), 1, g }"' with (delimiter ' ')
\copy cb from program 'awk "BEGIN { for (g = 4001; g <= 5000; g++) print g, 1, (g == 4700 ? 99999 : 1), g }"' with (delimiter ' ')
select count(*) from cb;
-- partitions: rows alternate between list partitions, and run in order
-- through range partitions
create table cbl (k int, v int) partition by list (k);
create table cbl0 partition of cbl for values in (0);
create table cbl1 partition of cbl for values in (1);
create table cbl2 partition of cbl for values in (2);
create index on cbl (v);
\copy cbl from program 'awk "BEGIN { for (g = 1; g <= 2500; g++) print g % 3, g }"' with (delimiter ' ')
select tableoid::regclass, count(*), min(v), max(v) from cbl group by 1 order by 1;
set enable_seqscan = off;
select count(*) from cbl where v > 0;
reset enable_seqscan;
create table cbr (k int primary key, v int) partition by range (k);
create table cbr1 partition of cbr for values from (1) to (1001);
create table cbr2 partition of cbr for values from (1001) to (2001);
\copy cbr from program 'awk "BEGIN { for (g = 1; g <= 2000; g++) print g, g * 2 }"' with (delimiter ' ')
select tableoid::regclass, count(*), min(k), max(k), sum(v) from cbr group by 1 order by 1;
-- a row with no partition
\copy cbr from program 'awk "BEGIN { for (g = 2001; g <= 2600; g++) print g, g }"' with (delimiter ' ')
-- into a partition directly: a row outside its bounds fails on its line
create table cbr3 partition of cbr for values from (2001) to (3001);
\copy cbr3 from program 'awk "BEGIN { for (g = 2001; g <= 2600; g++) print (g == 2456 ? 5000 : g), g }"' with (delimiter ' ')
\copy cbr3 from program 'awk "BEGIN { for (g = 2001; g <= 2600; g++) print g, g }"' with (delimiter ' ')
select count(*), sum(v) from cbr;
-- a volatile default: row by row, values in input order
create table cbs (id serial primary key, v int);
\copy cbs (v) from program 'awk "BEGIN { for (g = 1; g <= 1500; g++) print g }"'
select count(*), min(id), max(id), bool_and(id = v) from cbs;
-- inside a transaction block, rolled back: nothing stays
begin;
\copy cb2 from program 'awk "BEGIN { for (g = 1; g <= 1500; g++) print g, g }"' with (delimiter ' ')
select count(*) from cb2;
rollback;
select count(*) from cb2;
-- COPY FREEZE: only into storage made by the current subtransaction
create table cbf (k int primary key, v text);
copy cbf to stdout (freeze);
copy cbf from stdin (freeze);
1	a
\.
copy cbf from stdin (freeze off);
1	a
\.
copy cbf from stdin (freeze maybe);
begin;
truncate cbf;
copy cbf from stdin (freeze);
2	b
\.
savepoint s1;
copy cbf from stdin (freeze);
3	c
\.
rollback to s1;
truncate cbf;
\copy cbf from program 'awk "BEGIN { for (g = 10; g <= 3000; g++) print g, \"v\" g }"' with (freeze, delimiter ' ')
release s1;
copy cbf from stdin (freeze);
4	d
\.
declare c1 cursor for select 1;
copy cbf from stdin (freeze);
5	e
\.
rollback;
select count(*) from cbf;
begin;
create table cbf2 (k int, v text);
\copy cbf2 from program 'awk "BEGIN { for (g = 1; g <= 3000; g++) print g, \"w\" g }"' with (freeze, delimiter ' ')
insert into cbf2 values (0, 'zero');
select count(*), min(k), max(k) from cbf2;
commit;
begin isolation level repeatable read;
select count(*) from cbf2;
truncate cbf2;
\copy cbf2 from program 'awk "BEGIN { for (g = 1; g <= 2000; g++) print g, \"x\" g }"' with (freeze, delimiter ' ')
commit;
create index on cbf2 (k);
set enable_seqscan = off;
set enable_bitmapscan = off;
select count(*), sum(k) from cbf2 where k > 100;
reset enable_seqscan;
reset enable_bitmapscan;
update cbf2 set v = 'y' where k = 7;
select k, v from cbf2 where k between 6 and 8 order by k;
copy cbl from stdin (freeze);
1	1
\.
drop table cbf, cbf2;
