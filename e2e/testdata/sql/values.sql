\set VERBOSITY verbose
\set SHOW_CONTEXT never
\pset null '(null)'
create table t1 (id int, name text);
insert into t1 values (1, 'a'), (2, 'b'), (3, 'c'), (null, 'n1');
create table t2 (id int, val text);
insert into t2 values (2, 'x'), (3, 'y'), (4, 'z'), (null, 'n2');
create table emp (id int primary key, name text, mgr int, dept int, salary numeric(10,2));
insert into emp values (1, 'alice', null, 10, 5000), (2, 'bob', 1, 10, 4000), (3, 'carol', 1, 20, 4500), (4, 'dave', 2, 20, 3000), (5, 'eve', 2, null, 3500);
create table dept (dept int, dname text);
insert into dept values (10, 'eng'), (20, 'ops'), (30, 'hr');
values (1, 'a'), (2, 'b');
values (3), (1), (2) order by 1 desc;
values (1, 'a'), (2, 'b') order by column2 desc;
values (1, 'a') limit 0;
select * from (values (1, 'a'), (2, 'b')) as v(n, s) order by n;
select * from (values (1, 'a'), (2, 'b')) v order by 1;
select column1, column2 from (values (1, 'a')) v;
select v.n * 10, upper(v.s) from (values (1, 'a'), (2, 'b')) as v(n, s) order by 1;
select * from (values (1, 'a'), (2, 'b')) as v(n) order by n;
values (1), (2.5);
values (1, 'a'), (2, null), (null, 'c');
values (null), (null);
values (1), ('2');
values ('a'), (1);
values (1), (1, 2);
values (1), (true);
values ('2020-01-01'::date), ('2020-01-02');
select pg_typeof(column1) from (values (1), (2.5)) v limit 1;
select pg_typeof(column1) from (values ('a'), ('b')) v limit 1;
select pg_typeof(column1) from (values (null), (null)) v limit 1;
select * from (values (1)) v(a) join (values (1, 'x')) w(a, b) using (a);
