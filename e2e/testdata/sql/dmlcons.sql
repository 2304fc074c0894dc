\set VERBOSITY verbose
\set SHOW_CONTEXT never
-- constraints and foreign keys under UPDATE ... FROM, DELETE ... USING and ON CONFLICT
create table par (id int primary key, name text);
insert into par values (1, 'one'), (2, 'two'), (3, 'three');
create table kid (id int primary key, par int references par on delete restrict, qty int check (qty > 0));
insert into kid values (10, 1, 5), (20, 2, 5);
create table src (k int, p int, q int);
insert into src values (10, 3, 7), (20, 9, 1), (30, 1, 0);
-- ON CONFLICT: the inserted row and the updated row are checked
insert into kid values (30, 9, 1) on conflict (id) do nothing;
insert into kid values (30, 1, 0) on conflict (id) do nothing;
insert into kid values (10, 1, 1) on conflict (id) do update set par = 9;
insert into kid values (10, 1, 1) on conflict (id) do update set qty = -1;
insert into kid values (10, 1, 1) on conflict (id) do update set par = excluded.par + 2, qty = kid.qty + 1 returning *;
insert into kid values (40, 2, 2) on conflict on constraint kid_qty_check do nothing;
insert into kid values (40, 2, 2) on conflict on constraint kid_par_fkey do nothing;
insert into kid values (40, 2, 2) on conflict on constraint kid_pkey do nothing returning *;
-- UPDATE ... FROM
update kid set par = src.p from src where kid.id = src.k and src.k = 20;
update kid set qty = src.q from src where kid.id = src.k - 20 and src.k = 30;
update kid set par = src.p, qty = src.q from src where kid.id = src.k and src.k = 10 returning kid.*;
-- DELETE ... USING on the referenced side
delete from par using src where par.id = src.p and src.k = 10;
delete from par using src where par.id = src.p + 1 and src.k = 10 returning par.*;
select * from kid order by id;
select * from par order by id;
-- identity columns
create table idt (id int generated always as identity primary key, v int);
insert into idt (v) values (1);
insert into idt (v) values (1) on conflict (id) do nothing;
insert into idt values (1, 5) on conflict (id) do update set v = 9;
insert into idt overriding system value values (1, 5) on conflict (id) do update set id = 7;
insert into idt overriding system value values (1, 5) on conflict (id) do update set v = excluded.v returning *;
