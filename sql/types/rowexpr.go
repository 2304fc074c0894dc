package types

import ()

// Row constructors: ROW(a, b) or (a, b). A row value carries its fields in
// A and its text form (record_out) in S, so it prints, groups and counts
// DISTINCT like PostgreSQL's anonymous records; comparisons between rows
// are compiled field by field (PostgreSQL's row-wise comparison).

const OIDRecord = 2249
