package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"lockd/sql/stats"
)

// The catalog: tables, their columns and indexes. It is copy-on-write: a
// published catalogState is immutable and read without locks; DDL builds
// a list of operations in its transaction, which sees them applied to a
// private copy, and at commit the operations are replayed onto the newest
// published state and written to disk. The relation locks that DDL takes
// (AccessExclusiveLock) keep two transactions from changing one table.

// firstUserOID is where PostgreSQL starts assigning OIDs to user objects.
const firstUserOID = 16384

// catalog is the engine's published catalog plus its file.
type Catalog struct {
	mu      sync.Mutex // serialises commits and OID allocation
	cur     atomic.Pointer[CatalogState]
	path    string
	private atomic.Uint64 // versions of transactions' private catalog states
}

// privateVersionBase separates the versions of private (uncommitted)
// catalog states from published ones, which count up from 0.
const privateVersionBase = 1 << 62

func (c *Catalog) PrivateVersion() uint64 { return privateVersionBase + c.private.Add(1) }

func OpenCatalog(dataDir string) (*Catalog, error) {
	c := &Catalog{path: filepath.Join(dataDir, "global", "lockd_catalog.json")}
	st := newCatalogState()
	data, err := os.ReadFile(c.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(data, st); err != nil {
			return nil, fmt.Errorf("catalog file %s is corrupt: %w", c.path, err)
		}
		if st.Tables == nil {
			st.Tables = map[uint32]*TableDef{}
		}
		if st.Indexes == nil {
			st.Indexes = map[uint32]*IndexDef{}
		}
		st.reindexNames()
	}
	if st.stats, err = stats.Open(dataDir); err != nil {
		return nil, err
	}
	st.stats.Prune(func(oid uint32) bool { return st.Tables[oid] != nil || st.Indexes[oid] != nil })
	c.cur.Store(st)
	return c, nil
}

// Stats returns the instance's planner statistics and activity counters.
func (c *Catalog) Stats() *stats.Store { return c.cur.Load().stats }

func (c *Catalog) State() *CatalogState { return c.cur.Load() }

// allocOID hands out a new OID (also used as a relfile number).
func (c *Catalog) AllocOID() uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.cur.Load().Clone()
	oid := st.NextOID
	st.NextOID++
	c.cur.Store(st)
	return oid
}

// commit replays ops onto the published state and persists it.
func (c *Catalog) Commit(ops []*CatOp) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.cur.Load().Clone()
	var forget, truncated []uint32
	for _, op := range ops {
		switch op.Kind {
		case "drop":
			if t := st.Tables[op.Oid]; t != nil {
				forget = append(append(forget, t.OID), t.Indexes...)
			}
		case "dropindex":
			forget = append(forget, op.Oid)
		case "truncate":
			truncated = append(truncated, op.Oid)
		}
		st.Apply(op)
	}
	st.Version++
	if err := c.Write(st); err != nil {
		return err
	}
	c.cur.Store(st)
	for _, oid := range truncated {
		if t := st.Tables[oid]; t != nil {
			st.stats.Truncated(oid, t.Indexes)
		}
	}
	if len(forget) > 0 {
		st.stats.Forget(forget...)
	}
	return nil
}

func (c *Catalog) Write(st *CatalogState) error {
	data, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		return err
	}
	return replaceFile(c.path, data)
}

// replaceFile makes path hold data: written and fsynced under a temporary
// name beside it (its directory created if missing), then renamed over
// it, so a reader finds the old contents or the new, never a mix.
func replaceFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// flush persists the current state (after OID allocation, at checkpoint).
func (c *Catalog) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Write(c.cur.Load())
}

// DatabaseOID is the OID lockd gives its one database, as the "postgres"
// database has in a fresh PostgreSQL cluster. Lock tags carry it.
const DatabaseOID = 5

// The system catalogs as psql and pgbench read them: lockd's catalog
// (tables, indexes, constraints) and its system views, presented with
// PostgreSQL 15's OIDs, names and column layouts. Everything here is
// computed from the session's view of the catalog at scan time.

// Namespace OIDs as in PostgreSQL 15.
const (
	NspPgCatalog  = 11
	nspToast      = 99
	NspPublic     = 2200
	nspInfoSchema = 13000
)

type namespace struct {
	Oid   uint32
	Name  string
	Owner uint32
}

var Namespaces = []namespace{
	{NspPgCatalog, "pg_catalog", BootstrapRoleOID},
	{nspToast, "pg_toast", BootstrapRoleOID},
	{NspPublic, "public", DbOwnerRoleOID},
	{nspInfoSchema, "information_schema", BootstrapRoleOID},
}

// Roles: lockd accepts any user name at connect and runs every session
// as the bootstrap superuser, which owns every object.
const (
	BootstrapRoleOID = 10
	BootstrapRole    = "postgres"
	DbOwnerRoleOID   = 6171
	DbOwnerRole      = "pg_database_owner"
)
