-- The 2024 thread's one-sided partitioned join: a range on pj1 only, so
-- the plan reaches every partition of pj2 (and locks them, with their
-- indexes, at each execution).
\set lo random(1, 99990)
select count(*) from pj1 join pj2 on pj1.k = pj2.k where pj1.k between :lo and :lo + 9;
