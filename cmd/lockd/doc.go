// Command lockd is the thin main of the lockd server: it parses
// postgres-style flags, loads settings (configuration file, command line,
// lockd.auto.conf), takes the data directory's lock file, wires settings'
// assign hooks to the subsystems they tune, listens, and turns signals
// into reloads and PostgreSQL's three shutdown modes.
package main
