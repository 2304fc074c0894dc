-- EXPLAIN of queries where PostgreSQL 15 merges joins or aggregates
-- sorted groups (GroupAggregate): pgbench-shaped tables as in plans.sql,
-- and a copy of accounts so that two large tables are joined on indexed
-- keys. mergejoin.out is PostgreSQL's transcript, written by
-- scripts/explain-golden.sh; TestExplainGolden holds lockd's to it.
\set VERBOSITY verbose
\set SHOW_CONTEXT never
set max_parallel_workers_per_gather = 0;
create table branches (bid int primary key, bbalance int, filler char(88));
create table tellers (tid int primary key, bid int, tbalance int, filler char(84));
create table accounts (aid int primary key, bid int, abalance int, filler char(84));
insert into branches select g, 0, '' from generate_series(1, 10) g;
insert into tellers select g, (g - 1) / 10 + 1, 0, '' from generate_series(1, 100) g;
insert into accounts select g, (g - 1) / 10000 + 1, 0, '' from generate_series(1, 100000) g;
create index accounts_bid on accounts (bid);
create table accounts2 (aid int primary key, bid int, abalance int, filler char(84));
insert into accounts2 select aid, bid, abalance, filler from accounts;
vacuum analyze branches;
vacuum analyze tellers;
vacuum analyze accounts;
vacuum analyze accounts2;
-- grouped in index order: GroupAggregate, no Sort for the ORDER BY
explain (costs off) select bid, count(*) from accounts group by bid;
explain (costs off) select bid, count(*) from accounts group by bid order by bid;
explain (costs off) select bid, count(*) from accounts group by bid order by bid desc;
explain (costs off) select bid, count(*) from accounts where bid > 3 group by bid having min(aid) > 1 order by bid;
explain (costs off) select bid, count(*) from accounts group by bid order by count(*);
explain (costs off) select aid, count(*) from accounts group by aid;
explain (costs off) select bid, abalance, count(*) from accounts group by bid, abalance;
select bid, count(*) from accounts group by bid order by bid;
-- sorted by a Sort when hashing is off
set enable_hashagg = off;
explain (costs off) select bid, sum(tbalance) from tellers group by bid;
select bid, sum(tbalance) from tellers group by bid order by bid;
reset enable_hashagg;
-- a small table sorted and merged with the start of a large index
explain (costs off) select b.bid, a.abalance from branches b join accounts a on a.aid = b.bid;
explain (costs off) select * from tellers t join accounts a on a.aid = t.tid;
select b.bid, a.abalance from branches b join accounts a on a.aid = b.bid order by b.bid;
explain (format json, costs off) select b.bid, a.abalance from branches b join accounts a on a.aid = b.bid;
explain (format json, costs off) select bid, count(*) from accounts group by bid;
-- two large tables read in key order
explain (costs off) select count(*) from accounts a join accounts2 b on a.aid = b.aid;
explain (costs off) select * from accounts a join accounts2 b on a.aid = b.aid;
explain (costs off) select * from accounts a left join accounts2 b on a.aid = b.aid;
explain (costs off) select * from accounts a full join accounts2 b on a.aid = b.aid;
explain (costs off) select * from accounts a join accounts2 b on a.aid = b.aid order by a.aid;
explain (costs off) select a.aid, b.abalance from accounts a join accounts2 b on a.aid = b.aid and a.abalance <> b.bid order by a.aid;
explain (costs off) select count(*) from accounts a full join accounts2 b on a.aid = b.aid where a.aid is null or b.aid is null;
select count(*), count(a.aid), count(b.aid) from accounts a full join accounts2 b on a.aid = b.aid;
explain (analyze, costs off, timing off, summary off) select count(*) from accounts a join accounts2 b on a.aid = b.aid;
-- with hash joins and nested loops off (PostgreSQL would memoize an
-- index nested loop otherwise, which lockd does not build)
set enable_hashjoin = off;
set enable_nestloop = off;
explain (costs off) select count(*) from tellers t join branches b on t.bid = b.bid;
explain (costs off) select t.tid, b.bbalance from tellers t left join branches b on t.bid = b.bid;
explain (costs off) select t.tid, b.bbalance from tellers t right join branches b on t.bid = b.bid;
explain (costs off) select count(*) from tellers t full join branches b on t.bid = b.bid;
explain (costs off) select t.tid, a.aid from tellers t left join accounts a on a.bid = t.bid and a.aid < 10000;
reset enable_hashjoin;
reset enable_nestloop;
set enable_mergejoin = off;
explain (costs off) select b.bid, a.abalance from branches b join accounts a on a.aid = b.bid;
reset enable_mergejoin;
