// Package types holds lockd's SQL values and data types, as PostgreSQL's
// utils/adt does: Type (OID, length, typmod, name), Datum, numeric,
// date/time and interval arithmetic, arrays, text and binary input and
// output in PostgreSQL's formats, casts between values, comparison and
// hashing of values, type names (format_type) and the reg* types' I/O.
//
// What it must not do: know about tables, sessions or expressions. The
// reg* types read names from a catalog through the RegNamer a FormatCtx
// carries; it imports nothing of lockd but pgerr.
//
// Concurrency: everything here is a value or a pure function; a FormatCtx
// belongs to its session.
package types
