-- pgbench's select-only transaction followed by 200 ms of think time
-- (see tpcb-think.sql).
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
\sleep 200 ms
