-- EXPLAIN of queries PostgreSQL 15 reads through bitmap scans (Bitmap
-- Heap Scan over Bitmap Index Scans, BitmapAnd, BitmapOr). bitmap.out is
-- PostgreSQL's transcript, written by scripts/explain-golden.sh; the e2e
-- test (TestExplainGolden) holds lockd's to it. The tables are small
-- enough for ANALYZE to read every row, so both servers estimate alike.
\set VERBOSITY verbose
\set SHOW_CONTEXT never
set max_parallel_workers_per_gather = 0;
create table bt (a int primary key, b int, c int, d int);
insert into bt select g, (g * 7919) % 1000, g % 100, g % 7 from generate_series(1, 20000) g;
create index bt_b on bt (b);
create index bt_c on bt (c);
create table bs (x int, y int);
insert into bs select (g * 173) % 1000, g from generate_series(1, 5) g;
create table bp (k int not null, v int) partition by range (k);
create table bp_0 partition of bp for values from (0) to (10000);
create table bp_1 partition of bp for values from (10000) to (20000);
insert into bp select g, (g * 7919) % 500 from generate_series(0, 19999) g;
create index on bp (v);
vacuum analyze bt;
vacuum analyze bs;
vacuum analyze bp;
-- ORs of equalities and of ranges, on one index and on two
explain (costs off) select * from bt where b = 5 or b = 17;
explain (costs off) select * from bt where b = 5 or b = 17 or b = 900;
explain (costs off) select * from bt where a < 50 or a > 19950;
explain (costs off) select * from bt where b = 5 or c = 7;
explain (costs off) select count(*) from bt where (b = 5 and d = 1) or c = 7;
explain (costs off) select * from bt where d = 3 and (b < 3 or b > 996);
-- a long IN list, and = ANY of an array
explain (costs off) select * from bt where b in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20);
explain (costs off) select * from bt where b = any ('{1,2,3,4,5,6,7,8,9,10,11,12}'::int[]);
-- a range of a column the heap is not ordered by
explain (costs off) select * from bt where b between 100 and 120;
explain (costs off) select * from bt where b = 3;
-- two indexed conditions together: BitmapAnd
explain (costs off) select * from bt where b < 50 and c < 5;
explain (costs off) select * from bt where b = 5 and c = 7;
-- ORDER BY ... LIMIT: an index giving the order, stopping early, against
-- the bitmap scan and a top-N sort
explain (costs off) select * from bt where b between 100 and 120 order by a limit 5;
explain (costs off) select * from bt where b between 100 and 120 order by b limit 5;
explain (costs off) select * from bt where b = 5 or c = 7 order by c limit 3;
-- the inner side of a nested loop, rescanned for each outer row
explain (costs off) select * from bs join bt on bt.b = bs.x;
explain (costs off) select * from bs join bt on bt.b = bs.x and bt.c < 50;
-- what the scans found, and what rechecking removed
-- (queries whose rows lie on different pages in both servers' heaps,
-- whose tuple sizes differ)
explain (analyze, costs off, timing off, summary off) select * from bt where b = 5 and d = 2;
explain (analyze, costs off, timing off, summary off) select * from bt where b = 5 or b = 400 or b = 800;
explain (analyze, costs off, timing off, summary off) select * from bs join bt on bt.b = bs.x;
explain (analyze, costs off, timing off, summary off) select * from bt where b = 5000 and c = 7;
explain (analyze, costs off, timing off, summary off, format json) select * from bt where b = 5 or b = 400 or b = 800;
-- the rows UPDATE and DELETE change
explain (costs off) update bt set d = d + 1 where b = 5 or b = 17;
explain (costs off) delete from bt where b < 50 and c < 5;
-- partitions: each partition's scan
explain (costs off) select * from bp where v = 3 or v = 7;
explain (costs off) select * from bp where k < 10000 and (v = 3 or v = 7);
-- switched off: PostgreSQL adds its disable cost
set enable_bitmapscan = off;
explain (costs off) select * from bt where b = 5 or b = 17;
explain (costs off) select * from bt where b between 100 and 120;
reset enable_bitmapscan;
