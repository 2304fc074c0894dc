package expr

import (
	"lockd/locks"

	"lockd/storage"

	"lockd/sql/catalog"
)

// cat is the catalog as this session sees it: its own uncommitted DDL
// applied to the published catalog.
func (s *Backend) Cat() *catalog.CatalogState {
	if s.PendingCat != nil {
		return s.PendingCat
	}
	return s.Catalog.State()
}

// addCatOp records a DDL change in the current transaction.
func (s *Backend) AddCatOp(op *catalog.CatOp) {
	if s.PendingCat == nil {
		s.PendingCat = s.Catalog.State().Clone()
	}
	s.PendingCat.Apply(op)
	// A private catalog gets a version no published one has, so plans
	// cached against it are never taken for plans of another state (such
	// as the same DDL run again after a rollback).
	s.PendingCat.Version = s.Catalog.PrivateVersion()
	s.CatOps = append(s.CatOps, op)
}

// commitCatalog publishes the transaction's DDL and removes files that
// dropped or truncated relations no longer use.
func (s *Backend) CommitCatalog() error {
	if len(s.CatOps) == 0 {
		return nil
	}
	ops := s.CatOps
	s.CatOps, s.PendingCat = nil, nil
	if err := s.Catalog.Commit(ops); err != nil {
		return err
	}
	s.commitSequences(ops) // seqstore.go
	for _, op := range ops {
		switch op.Kind {
		case "drop":
			_ = s.Store.DropRelation(storage.RelID(op.OldFile))
			for _, f := range op.OldIdx {
				_ = s.Store.DropIndex(storage.RelID(f))
			}
		case "truncate", "rewrite":
			_ = s.Store.DropRelation(storage.RelID(op.OldFile))
			for _, f := range op.OldIdx {
				_ = s.Store.DropIndex(storage.RelID(f))
			}
		case "dropindex":
			_ = s.Store.DropIndex(storage.RelID(op.OldFile))
		}
	}
	return nil
}

// abortCatalog forgets the transaction's DDL and removes files it made.
func (s *Backend) AbortCatalog() {
	s.RemoveNewFiles(s.CatOps)
	s.CatOps, s.PendingCat = nil, nil
}

// removeNewFiles removes the files that ops made, whose (sub)transaction
// is being rolled back.
func (s *Backend) RemoveNewFiles(ops []*catalog.CatOp) {
	s.abortSequences(ops) // seqstore.go
	for _, op := range ops {
		switch op.Kind {
		case "create":
			_ = s.Store.DropRelation(storage.RelID(op.Table.RelFile))
		case "truncate", "rewrite":
			_ = s.Store.DropRelation(storage.RelID(op.Relfile))
			for _, f := range op.NewIdx {
				_ = s.Store.DropIndex(storage.RelID(f))
			}
		case "addindex":
			_ = s.Store.DropIndex(storage.RelID(op.Index.RelFile))
		}
	}
}

// lockNow takes a relation lock during execution.
func (s *Backend) LockNow(ec *EvalCtx, oid uint32, mode locks.LockMode) error {
	return s.Locks.Lock(ec.Ctx, s.Proc, locks.RelationTag(catalog.DatabaseOID, oid), mode, s.LockOptions(false, false))
}
