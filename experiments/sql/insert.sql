-- 2016 workload "insert": 1,000 rows of 1 kB per transaction.
insert into data select * from test_data;
