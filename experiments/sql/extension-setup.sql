-- The 2016 relation-extension workloads' tables (Dilip Kumar's tests):
-- test_data holds 1,000 rows of an int and a 1 kB text, inserted into
-- data by each transaction of workload "insert"; copy.bin holds 10,000
-- one-column text rows in COPY's binary format, loaded into data2 by each
-- transaction of workload "copy". copy.bin is written by the server into
-- its data directory (PostgreSQL wants an absolute path for COPY TO), where
-- the workload's COPY FROM 'copy.bin' finds it (a relative path is relative
-- to the data directory on lockd and PostgreSQL alike).
drop table if exists test_data, data, data2;
create table test_data (a int, b text);
insert into test_data select g, repeat('x', 1024) from generate_series(1, 1000) g;
create table data (a int, b text);
create table data2 (v text);
select current_setting('data_directory') as datadir \gset
\set copyfile :datadir '/copy.bin'
copy (select g.i::text from generate_series(1, 10000) g(i)) to :'copyfile' with binary;
