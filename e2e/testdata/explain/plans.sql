-- EXPLAIN (COSTS OFF) of queries whose plans lockd must show as
-- PostgreSQL 15 does. plans.out is PostgreSQL's transcript, written by
-- scripts/explain-golden.sh from a PostgreSQL it starts; the e2e test
-- (TestExplainGolden) holds lockd's transcript to it. Queries whose plans
-- still differ are listed with both plans in docs/planner.md.
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
create table p (k int not null, v int) partition by range (k);
create table p_0 partition of p for values from (0) to (1000);
create table p_1 partition of p for values from (1000) to (2000);
create table p_2 partition of p for values from (2000) to (3000);
create table p_3 partition of p for values from (3000) to (4000);
insert into p select g, g % 7 from generate_series(0, 3999) g;
create index on p (k);
vacuum analyze branches;
vacuum analyze tellers;
vacuum analyze accounts;
vacuum analyze p;
-- point lookups, ranges, lists
explain (costs off) select * from accounts where aid = 42;
explain (costs off) select abalance from accounts where aid between 100 and 110;
explain (costs off) select count(*) from accounts where aid between 100 and 110;
explain (costs off) select * from accounts where aid in (1, 2, 3);
explain (costs off) select * from accounts where aid = any ('{5,6}'::int[]);
-- whole-table scans and aggregates
explain (costs off) select sum(abalance) from accounts;
explain (costs off) select bid, sum(abalance) from accounts group by bid;
explain (costs off) select * from accounts where abalance > 0;
-- index-only scans: VACUUM made every page all-visible, so an index that
-- holds the columns a query reads is read alone, and the smallest index
-- is the cheapest way to count; an update's pages need heap fetches
explain (costs off) select count(*) from accounts;
explain (costs off) select count(*) from accounts where aid > 10;
explain (costs off) select count(*) from accounts where bid = 3;
explain (costs off) select count(distinct bid) from accounts;
explain (costs off) select aid from accounts where aid < 5;
explain (costs off) select max(bid) from accounts;
explain (costs off) select count(*) from branches;
explain (analyze, costs off, timing off, summary off) select count(*) from accounts where aid between 100 and 200;
begin;
update accounts set abalance = abalance + 1 where aid = 150;
explain (analyze, costs off, timing off, summary off) select count(*) from accounts where aid between 100 and 200;
rollback;
-- ordered by an index, and min/max
explain (costs off) select aid from accounts order by aid limit 5;
explain (costs off) select aid, abalance from accounts order by aid desc limit 1;
explain (costs off) select max(aid) from accounts;
explain (costs off) select min(aid), max(aid) from accounts;
-- joins
explain (costs off) select sum(a.abalance) from accounts a join branches b on a.bid = b.bid;
explain (costs off) select a.aid, b.bbalance from accounts a left join branches b on a.bid = b.bid where a.aid between 1 and 99;
-- partitions: pruned by constants, and a join of two partitioned tables
create table q (k int not null, w int) partition by range (k);
create table q_0 partition of q for values from (0) to (2000);
create table q_1 partition of q for values from (2000) to (4000);
insert into q select g, g % 5 from generate_series(0, 3999, 2) g;
create index on q (k);
vacuum analyze q;
explain (costs off) select p.v, count(*) from p join q on p.k = q.k group by p.v;
explain (costs off) select * from p where k = 1500;
explain (costs off) select count(*) from p where k between 900 and 1100;
explain (costs off) select count(*) from p;
-- estimates from ANALYZE's statistics: a histogram's tail, a most
-- common value, a selective join
explain (costs off) select * from accounts where aid < 5;
explain (costs off) select * from accounts where aid > 99995;
explain (costs off) select * from accounts where aid > 10;
explain (costs off) select * from p where v = 3;
explain (costs off) select t.tid, b.bbalance from tellers t join branches b on t.bid = b.bid where t.tid = 7;
explain (costs off) select a.aid, t.tid from accounts a join tellers t on a.bid = t.bid where t.tid = 7;
-- EXISTS, IN (subquery) and NOT EXISTS as semi and anti joins: through
-- an index keyed by the outer row, hashed, kept in memory, or made
-- unique (HashAggregate) for an inner join on either side; a unique
-- index makes a semi join an inner join; nested, and beside an index
-- scan; NOT IN and an uncorrelated EXISTS stay subqueries
explain (costs off) select * from branches b where exists (select 1 from accounts a where a.bid = b.bid);
explain (costs off) select * from branches b where not exists (select 1 from accounts a where a.bid = b.bid);
explain (costs off) select * from branches b where bid in (select bid from accounts);
explain (costs off) select * from branches b where exists (select 1 from tellers t where t.bid = b.bid);
explain (costs off) select * from tellers t where exists (select 1 from branches b where t.bid = b.bid);
explain (costs off) select * from tellers t where not exists (select 1 from branches b where t.bid = b.bid);
explain (costs off) select * from accounts a where bid in (select bid from branches where bbalance = 0);
explain (costs off) select * from tellers t where t.bid in (select bid from tellers where tid = 3);
explain (costs off) select * from tellers t where exists (select 1 from accounts a where a.aid = t.tid + 1000);
explain (costs off) select * from branches b where exists (select 1 from accounts a where a.bid = b.bid and a.abalance > 0);
explain (costs off) select * from tellers t where not exists (select 1 from accounts a where a.bid = t.bid and a.abalance > 0);
explain (costs off) select * from tellers t where exists (select 1 from branches b where b.bid > t.bid and t.tid > 50);
explain (costs off) select * from tellers t where not exists (select 1 from branches b where b.bid > t.bid and t.tid > 50);
explain (costs off) select * from branches b where exists (select 1 from tellers t where t.bid = b.bid and t.tbalance <> b.bbalance);
explain (costs off) select * from tellers t1 where exists (select 1 from tellers t2 where t2.bid = t1.bid and t2.tid <> t1.tid);
explain (costs off) select * from accounts where aid < 10 and not exists (select 1 from tellers t where t.bid = accounts.bid);
explain (costs off) select sum(abalance) from accounts a where exists (select 1 from branches b where b.bid = a.bid and b.bbalance = 0);
explain (costs off) select * from tellers t where exists (select 1 from accounts a where a.bid = t.bid and not exists (select 1 from branches b where b.bid = t.tid));
explain (costs off) select * from tellers t where exists (select 1 from accounts a where a.bid = t.bid and not exists (select 1 from branches b where b.bid = a.aid));
explain (costs off) select * from branches b where exists (select 1 from p where p.v = b.bid);
explain (costs off) select * from branches b where b.bid in (select v from p where k < 2000);
explain (costs off) select * from p where exists (select 1 from branches b where b.bbalance = p.v);
explain (costs off) select count(*) from q where exists (select 1 from p where p.k = q.k and p.v = q.w);
explain (costs off) select * from tellers t where not exists (select 1 from p where p.v = t.tid);
explain (costs off) select * from p where not exists (select 1 from tellers t where t.tid = p.k);
explain (costs off) select * from branches where exists (select 1 from tellers where tbalance > 0);
explain (costs off) select * from tellers t where tid not in (select aid from accounts where aid < 50);
-- INSERT, UPDATE, DELETE
create table hist (tid int, bid int, aid int, delta int);
explain (costs off) update accounts set abalance = abalance + 1 where aid = 5;
explain (costs off) update accounts set abalance = 0 where abalance > 100;
explain (costs off) delete from hist where tid = 3;
explain (costs off) insert into hist values (1, 1, 1, 1);
explain (costs off) insert into hist values (1, 1, 1, 1), (2, 2, 2, 2);
explain (costs off) insert into hist select aid, bid, 1, 1 from accounts where aid between 1 and 3;
explain (costs off) insert into branches values (1, 0, '') on conflict (bid) do update set bbalance = excluded.bbalance;
explain (costs off) insert into branches values (1, 0, '') on conflict do nothing;
begin;
explain (analyze, costs off, timing off, summary off) update accounts set abalance = abalance + 1 where aid between 5 and 9;
rollback;
-- a condition with a correlated subquery is checked by the scan of the
-- table it reads, which shows the SubPlan
create table spa (id int primary key, v int);
create table spb (id int, aid int);
insert into spa select g, g % 100 from generate_series(1, 1000) g;
insert into spb select g, g % 500 + 1 from generate_series(1, 3000) g;
vacuum analyze spa;
vacuum analyze spb;
explain (costs off) select id from spa where v = 3 and (select max(spb.id) from spb where spb.aid = spa.id) > 5;
create table spc (id int, k int);
create table spd (k int, w int);
insert into spc select g, g % 700 from generate_series(1, 9000) g;
insert into spd select g, g % 13 from generate_series(1, 1000) g;
vacuum analyze spc;
vacuum analyze spd;
explain (costs off) select count(*) from spc join spd on spd.k = spc.k where (select max(x.w) from spd x where x.k = spc.id) > 5;
