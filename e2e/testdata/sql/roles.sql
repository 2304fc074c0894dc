-- Roles as the bootstrap superuser sees them: CREATE / ALTER / DROP ROLE
-- and USER, the stored password formats, pg_roles, pg_authid, pg_user and
-- psql's \du (docs/security.md).
create role alice login password 'wonderland';
create user bob createdb connection limit 5;
create role staff;
create role pg_x;
create role alice;
create role carol login nologin;
create role dave connection limit -2;
alter role bob nocreatedb valid until 'infinity';
alter role nobody login;
select rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin, rolreplication, rolconnlimit, rolpassword, rolvaliduntil, rolbypassrls
  from pg_roles where rolname in ('alice', 'bob', 'staff') order by rolname;
select rolname, rolpassword like 'SCRAM-SHA-256$4096:%' as scram from pg_authid where rolname = 'alice';
select usename, usecreatedb, usesuper, passwd, valuntil from pg_user where usename in ('alice', 'bob') order by 1;
\du
set password_encryption = md5;
alter role staff password 'secret';
select rolpassword from pg_authid where rolname = 'staff';
alter role staff rename to crew;
select rolpassword is null as cleared from pg_authid where rolname = 'crew';
reset password_encryption;
alter role crew password 'md5c7d0b0bd4b8ec1bd0d4b1e0f3e8bd4ad';
select rolpassword from pg_authid where rolname = 'crew';
begin;
drop role alice;
select count(*) from pg_roles where rolname = 'alice';
rollback;
select count(*) from pg_roles where rolname = 'alice';
drop role if exists crew, nobody;
drop role nobody;
drop role postgres;
drop role pg_database_owner;
drop role alice, bob;
\du
