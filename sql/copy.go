package sql

import (
	"lockd/sql/exec"
)

// SetCopySource installs the data source for the next COPY FROM STDIN.
func (s *Session) SetCopySource(src exec.CopySource) { s.CopySrc = src }

// SetCopySink installs the destination of the next COPY TO STDOUT.
func (s *Session) SetCopySink(sink exec.CopySink) { s.CopySink = sink }
