package expr

import (
	"lockd/pgerr"

	"lockd/sql/catalog"
)

// commitSequences runs after the catalog of a committing transaction is
// published: the storage that dropped and rewritten sequences no longer
// use is forgotten, and the file is written so that new sequences and
// restarts are on disk.
func (s *Backend) commitSequences(ops []*catalog.CatOp) {
	changed := false
	for _, op := range ops {
		switch op.Kind {
		case "dropseq", "setseq":
			s.Seqs.Drop(op.OldFile)
			changed = true
		case "createseq":
			changed = true
		}
	}
	if changed {
		if err := s.Seqs.Write(s.Catalog.State()); err != nil {
			s.Notice(pgerr.SeverityWarning, pgerr.InternalError, "could not write the sequences: "+err.Error())
		}
	}
}

// abortSequences forgets the storage that rolled-back operations made.
func (s *Backend) abortSequences(ops []*catalog.CatOp) {
	for _, op := range ops {
		switch op.Kind {
		case "createseq", "setseq":
			s.Seqs.Drop(op.Relfile)
		}
	}
}
