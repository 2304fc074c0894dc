\set VERBOSITY verbose
\set SHOW_CONTEXT never
-- Cursors from psql: DECLARE ... FETCH by hand, and psql's own FETCH_COUNT,
-- which reads a query's result through a cursor in batches.
create table cur (i int primary key, s text);
insert into cur select g, 'row ' || g from generate_series(1, 12) g;
begin;
declare c scroll cursor for select i, s from cur order by i;
fetch 3 from c;
fetch backward 2 from c;
move last in c;
fetch prior from c;
fetch absolute 5 from c;
select name, is_holdable, is_scrollable from pg_cursors;
close c;
commit;
\set FETCH_COUNT 5
select i, s from cur where i > 3 order by i;
\unset FETCH_COUNT
drop table cur;
