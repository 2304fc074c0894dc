\set VERBOSITY verbose
\set SHOW_CONTEXT never
\pset null '(null)'
-- UPDATE ... FROM and DELETE ... USING
create table acc (id int primary key, owner text, bal int not null);
insert into acc values (1, 'ann', 100), (2, 'bob', 200), (3, 'cy', 300), (4, 'dee', 400);
create table pay (acc int, amount int, note text);
insert into pay values (1, 10, 'a'), (2, 20, 'b'), (4, 40, 'd');
update acc set bal = bal + pay.amount from pay where pay.acc = acc.id returning acc.id, acc.bal, pay.note;
select * from acc order by id;
-- every column of both sides
update acc set bal = bal - p.amount from pay p where p.acc = acc.id and p.note = 'a' returning *;
-- a target row joining several rows is updated once
insert into pay values (2, 1, 'b2'), (2, 2, 'b3');
update acc set owner = upper(owner) from pay where pay.acc = acc.id and acc.id = 2 returning acc.id, acc.owner;
update acc set bal = 0 from pay where pay.acc = acc.id and pay.acc = 2;
select * from acc order by id;
-- several FROM items, a join, VALUES and a subquery
update acc a set bal = a.bal + v.delta from (values (1, 1), (3, 3)) v(id, delta) where v.id = a.id returning a.id, a.bal, v.delta;
update acc set bal = bal + s.total from (select acc, sum(amount) as total from pay group by acc) s where s.acc = acc.id and acc.id = 4 returning acc.id, acc.bal, s.total;
update acc set bal = 1 from pay join (values ('d', 'x')) m(note, tag) on m.note = pay.note where pay.acc = acc.id returning acc.id, m.tag;
update acc set bal = 2 from pay, (values (4)) v(id) where pay.acc = acc.id and v.id = acc.id returning acc.id, pay.note;
-- a self-join under another name
update acc set bal = other.bal * 10 from acc other where other.id = acc.id + 1 and acc.id = 3 returning acc.id, acc.bal, other.id;
-- no row qualifies; a FROM item with no rows
update acc set bal = 0 from pay where pay.acc = acc.id and false;
update acc set bal = 0 from (select 1 where false) e(x);
select * from acc order by id;
-- DELETE ... USING
delete from acc using pay where pay.acc = acc.id and pay.note = 'd' returning acc.id, pay.note;
delete from acc a using pay p, pay q where p.acc = a.id and q.acc = p.acc and a.id = 2 returning a.id, a.owner;
delete from acc using (values (5)) v(id) where v.id = acc.id;
select * from acc order by id;
-- errors
update acc set bal = 1 from acc;
delete from acc using acc;
update acc set bal = 1 from nope;
update acc set bal = 1 from pay where pay.nope = 1;
update acc set bal = nope from pay;
update acc set nope = 1 from pay;
update acc set ctid = '(0,1)' from pay;
update acc set bal = count(*) from pay;
update acc set bal = 1 from pay where count(*) > 0;
update acc set bal = 1 from pay returning sum(bal);
update acc set bal = generate_series(1, 2) from pay;
update acc set bal = 1, bal = 2 from pay where pay.acc = acc.id;
update acc set bal = 'x' from pay where pay.acc = acc.id;
update acc set bal = null from pay where pay.acc = acc.id;
update acc set bal = 1 from pay where pay.acc;
update acc set bal = 1 from pay where acc = acc.id returning nope;
update acc set bal = pay.amount from pay where amount > 0 and id = acc;
update acc set (bal, owner) = (7, 'z') from pay where pay.acc = acc.id returning acc.*;
update acc set (bal, owner) = (7) from pay;
-- partitioned targets: pruning, row movement, RETURNING tableoid
create table pt (k int primary key, v text) partition by range (k);
create table pt1 partition of pt for values from (0) to (10);
create table pt2 partition of pt for values from (10) to (20);
insert into pt values (1, 'one'), (2, 'two'), (11, 'eleven');
create table mv (k int, d int);
insert into mv values (1, 10), (11, 1);
update pt set k = pt.k + mv.d from mv where mv.k = pt.k returning pt.tableoid::regclass, pt.k, pt.v, mv.d;
select tableoid::regclass, * from pt order by k;
update pt1 set k = 15 from mv where pt1.k = 2;
update pt set v = upper(v) from mv where pt.k = 12 and mv.k = 11 returning pt.tableoid::regclass, pt.*;
delete from pt using mv where pt.k = mv.k + mv.d returning pt.tableoid::regclass, pt.k, mv.*;
update only pt set v = 'x' from mv;
select tableoid::regclass, * from pt order by k;
-- locks: the target RowExclusiveLock with its indexes, the other tables AccessShareLock
create table dim (id int primary key, tag text);
create index dim_tag on dim (tag);
insert into dim values (1, 'x');
begin;
update acc set bal = bal + 1 from dim where dim.id = acc.id;
select relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text not like 'pg_%' order by relation::regclass::text;
rollback;
begin;
delete from pt using dim where dim.id = pt.k and pt.k = 12;
select relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text not like 'pg_%' order by relation::regclass::text;
rollback;
-- prepared
prepare up(int, int) as update acc set bal = $2 from dim where dim.id = acc.id and acc.id = $1 returning acc.id, acc.bal, dim.tag;
execute up(1, 77);
execute up(2, 77);
deallocate up;
select * from acc order by id;
