-- count(*) over every partition of the 100-partition pgbench_accounts.
select count(*) from pgbench_accounts;
