package server

import (
	"lockd/guc"
	"lockd/sql"
	"lockd/storage"
	"lockd/txn"
)

// Read-only accessors for package metrics, which reads the subsystems'
// counters at scrape time. None of them takes a lock on a hot path.

// Txns returns the transaction manager.
func (s *Server) Txns() *txn.Manager { return s.inst.txns }

// Store returns the storage manager.
func (s *Server) Store() *storage.Store { return s.inst.store }

// Settings returns the server-wide settings registry.
func (s *Server) Settings() *guc.Registry { return s.settings }

// SessionStates counts the live sessions by pg_stat_activity state.
func (s *Server) SessionStates() map[string]int { return s.inst.engine.SessionStates() }

// StatementStats returns the statement counters of every session, live or
// gone: statements by kind and their durations.
func (s *Server) StatementStats() sql.StatementStats { return s.inst.engine.StatementStats() }
