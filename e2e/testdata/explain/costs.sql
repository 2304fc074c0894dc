-- EXPLAIN with costs: the numbers lockd prints must be PostgreSQL 15's
-- where the plans agree. costs.out is PostgreSQL's transcript, written
-- by scripts/explain-golden.sh from a PostgreSQL it starts, never by
-- hand; the e2e test (TestExplainGolden) holds lockd's transcript to it.
-- The tables are pgbench's, built as pgbench -i builds them (primary
-- keys added after the rows), small enough that ANALYZE reads every row,
-- so both servers keep the same statistics.
\set VERBOSITY verbose
\set SHOW_CONTEXT never
set max_parallel_workers_per_gather = 0;
set jit = off;
create table pgbench_branches (bid int not null, bbalance int, filler char(88));
create table pgbench_tellers (tid int not null, bid int, tbalance int, filler char(84));
create table pgbench_accounts (aid int not null, bid int, abalance int, filler char(84));
insert into pgbench_branches (bid, bbalance) select g, 0 from generate_series(1, 2) g;
insert into pgbench_tellers (tid, bid, tbalance) select g, (g - 1) / 10 + 1, 0 from generate_series(1, 20) g;
insert into pgbench_accounts select g, (g - 1) / 10000 + 1, 0, '' from generate_series(1, 20000) g;
alter table pgbench_branches add primary key (bid);
alter table pgbench_tellers add primary key (tid);
alter table pgbench_accounts add primary key (aid);
vacuum analyze pgbench_branches;
vacuum analyze pgbench_tellers;
vacuum analyze pgbench_accounts;
-- an index read backward to its first row, a Limit taking its share
explain select * from pgbench_accounts order by aid desc limit 1;
explain select * from pgbench_accounts order by aid limit 5;
-- min and max: InitPlans over index-only scans, charged to the Result
explain select max(aid) from pgbench_accounts;
explain select min(aid), max(aid) from pgbench_accounts;
-- hash joins: the hashed side unique on the key (costed as a semi
-- join) or not; widths are the columns read above each node
explain select count(*) from pgbench_accounts a join pgbench_branches b on a.bid = b.bid;
explain select * from pgbench_accounts a join pgbench_tellers t on a.bid = t.bid where a.aid < 100;
explain select a.aid, t.tid from pgbench_accounts a join pgbench_tellers t on a.bid = t.bid where a.aid < 100;
-- ranges: the histogram's first bin, the share of x = c at each bound
explain select * from pgbench_accounts where aid between 100 and 110;
explain select abalance from pgbench_accounts where aid < 1000;
explain select * from pgbench_accounts where aid > 19990;
-- lists: an IN list's values compared half-way on average, a constant
-- array's values estimated one by one
explain select * from pgbench_accounts where abalance in (1, 2, 3);
explain select * from pgbench_accounts where aid = any ('{1,2}'::int[]);
explain select * from pgbench_accounts where aid in (7, 8, 9);
explain select * from pgbench_accounts where abalance = any ('{1,2,3,4,5,6,7,8,9,10}'::int[]);
-- aggregation and filters
explain select bid, sum(abalance) from pgbench_accounts group by bid;
explain select count(*) from pgbench_accounts where bid is not null;
explain select distinct bid from pgbench_accounts;
explain select distinct tbalance from pgbench_tellers order by tbalance;
explain select * from pgbench_branches where bid = (select max(bid) from pgbench_tellers);
-- sorts: a bounded heap sort under a Limit (an OFFSET's rows read
-- first), in memory, and an external merge sort past work_mem
explain select * from pgbench_accounts order by abalance limit 10;
explain select * from pgbench_accounts order by abalance limit 10 offset 5;
explain select * from pgbench_tellers order by tbalance;
explain select * from pgbench_accounts order by abalance;
-- writes
explain update pgbench_accounts set abalance = abalance + 1 where aid = 5;
explain delete from pgbench_tellers where tid < 5;
