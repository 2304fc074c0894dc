-- The 2024 "scalability bottlenecks with (many) partitions" join: two
-- tables range-partitioned on k into 100 partitions of 1,000 keys each,
-- 100,000 rows each, an index on k. docs/planner.md runs it with
-- scripts/compare-pg.sh (SETUP_SQL="$(cat scripts/sql/partjoin.sql)") and
--   \set lo random(0, 99990)
--   select count(*) from pj1 join pj2 on pj1.k = pj2.k where pj1.k between :lo and :lo + 9;
drop table if exists pj1, pj2;
create table pj1 (k int not null, v int) partition by range (k);
create table pj2 (k int not null, v int) partition by range (k);
select format('create table pj1_%s partition of pj1 for values from (%s) to (%s)', i, i * 1000, (i + 1) * 1000),
       format('create table pj2_%s partition of pj2 for values from (%s) to (%s)', i, i * 1000, (i + 1) * 1000)
from generate_series(0, 99) i \gexec
insert into pj1 select g, g % 97 from generate_series(0, 99999) g;
insert into pj2 select g, g % 89 from generate_series(0, 99999) g;
create index on pj1 (k);
create index on pj2 (k);
analyze pj1;
analyze pj2;
