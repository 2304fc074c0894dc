package server

import (
	"fmt"
	"os"
	"path/filepath"

	"lockd/auth"
)

// The pg_hba.conf rules in force. hba_file names the file; empty means
// no file and every connection is trusted (initdb --auth=trust). The file
// is read at start-up, where an error stops the server, and again on
// every reload (SIGHUP, pg_reload_conf()), where, as in PostgreSQL, a
// file with any error is not used: the errors are logged and the rules
// in force stay.

// loadHBA reads and parses the hba file named by hba_file (nil, nil when
// it is empty), a relative name being relative to the data directory as
// in PostgreSQL. A file with errors gives them all.
func loadHBA(dataDir, path string) (*auth.HBA, []error) {
	if path == "" {
		return nil, nil
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dataDir, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, []error{fmt.Errorf("could not open configuration file \"%s\": %w", path, err)}
	}
	h := auth.ParseHBA(path, string(data))
	if len(h.Errors) > 0 {
		errs := make([]error, len(h.Errors))
		for i, e := range h.Errors {
			errs[i] = e
		}
		return nil, errs
	}
	return h, nil
}

// reloadHBA is the reload's part for the hba file.
func (s *Server) reloadHBA() {
	path := s.settings.Value("hba_file").Str
	h, errs := loadHBA(s.dataDir, path)
	if len(errs) > 0 {
		for _, e := range errs {
			s.log.Warn("invalid pg_hba.conf entry", "err", e.Error())
		}
		s.log.Warn("pg_hba.conf was not reloaded", "file", path)
		return
	}
	s.hba.Store(h)
	s.warnHostSSL(h)
}

// warnHostSSL warns of hostssl rules that cannot match because ssl is
// off, as PostgreSQL does when it loads the file.
func (s *Server) warnHostSSL(h *auth.HBA) {
	if h == nil || s.settings.Value("ssl").Bool {
		return
	}
	for _, l := range h.Lines {
		if l.Type == "hostssl" {
			s.log.Warn("hostssl record cannot match because SSL is disabled", "hint", "Set ssl = on in the configuration file.",
				"line", l.LineNo, "file", h.File)
		}
	}
}
