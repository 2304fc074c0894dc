\set VERBOSITY verbose
\set SHOW_CONTEXT never
-- psql's function and view listings: \df and \sf read pg_proc (the built-in
-- functions, with PostgreSQL's signatures), \dv lists no views.
\df now
\df pg_advisory_lock
\df count
\df generate_series
\sf now
\sf pg_catalog.pg_backend_pid
\sf count
\dv
select proname, prokind, provolatile, pronargs, prorettype::regtype from pg_proc where proname in ('now', 'pg_backend_pid', 'pg_sleep') order by oid;
select 'now'::regproc, 'now'::regproc::oid, 1299::regproc;
select 'pg_advisory_lock'::regproc;
select 'no_such_function'::regproc;
