package catalog

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"lockd/sql/stats"
	"lockd/vfs"
	"lockd/wal"
)

// The catalog: tables, their columns and indexes. It is copy-on-write: a
// published catalogState is immutable and read without locks; DDL builds
// a list of operations in its transaction, which sees them applied to a
// private copy, and at commit the operations are replayed onto the newest
// published state. The relation locks that DDL takes (AccessExclusiveLock)
// keep two transactions from changing one table.
//
// Durability: the operations travel in the committing transaction's commit
// record (txn's CommitRecord, flushed), inserted under the catalog's mutex
// so that the log holds catalog commits in the order they were applied,
// and the new state is published. global/lockd_catalog.json is written
// with the LSN of the last commit it holds at each checkpoint (after the
// redo point is fixed, so it holds every commit before it), at the end of
// recovery and at a clean shutdown — as PostgreSQL's catalog pages reach
// disk at checkpoints, not at commit. Recovery replays the operations of
// every commit record past the LSN the file holds (RedoCommit): nothing
// is lost, and no commit is applied twice. Without a log (record nil) the
// file is written at every commit.
// OIDs are logged ahead (XLOG NEXTOID, 8192 at a time, as PostgreSQL's
// VAR_OID_PREFETCH) so that none is handed out twice after a crash.

// firstUserOID is where PostgreSQL starts assigning OIDs to user objects.
const firstUserOID = 16384

// oidPrefetch is how many OIDs one NEXTOID record covers.
const oidPrefetch = 8192

// catalog is the engine's published catalog plus its file.
type Catalog struct {
	mu        sync.Mutex // serialises commits and OID allocation
	cur       atomic.Pointer[CatalogState]
	path      string
	fs        vfs.FS
	wal       *wal.WAL
	oidLogged uint32        // OIDs below it are covered by a NEXTOID record; guarded by mu
	private   atomic.Uint64 // versions of transactions' private catalog states
}

// privateVersionBase separates the versions of private (uncommitted)
// catalog states from published ones, which count up from 0.
const privateVersionBase = 1 << 62

func (c *Catalog) PrivateVersion() uint64 { return privateVersionBase + c.private.Add(1) }

// OpenCatalog reads the catalog file of dataDir through fsys; changes are
// logged in w (nil: not logged).
func OpenCatalog(fsys vfs.FS, w *wal.WAL, dataDir string) (*Catalog, error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	c := &Catalog{path: filepath.Join(dataDir, "global", "lockd_catalog.json"), fs: fsys, wal: w}
	st := newCatalogState()
	data, err := vfs.ReadFile(fsys, c.path)
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
	if st.stats, err = stats.Open(fsys, dataDir); err != nil {
		return nil, err
	}
	st.stats.Prune(func(oid uint32) bool { return st.Tables[oid] != nil || st.Indexes[oid] != nil })
	c.cur.Store(st)
	c.oidLogged = st.NextOID
	return c, nil
}

// Stats returns the instance's planner statistics and activity counters.
func (c *Catalog) Stats() *stats.Store { return c.cur.Load().stats }

func (c *Catalog) State() *CatalogState { return c.cur.Load() }

// AllocOID hands out a new OID (also used as a relfile number). When it
// passes the logged bound, it logs the next 8192 first.
func (c *Catalog) AllocOID() uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.cur.Load().Clone()
	oid := st.NextOID
	if c.wal != nil && oid >= c.oidLogged {
		c.oidLogged = oid + oidPrefetch
		b := c.wal.Begin(nil, wal.RmgrXLOG, wal.InfoNextOID)
		b.SetMain(binary.LittleEndian.AppendUint32(b.Main(), c.oidLogged))
		b.Insert()
	}
	st.NextOID++
	c.cur.Store(st)
	return oid
}

// Commit replays ops onto the published state, has record log them (the
// commit record, flushed; nil: nothing is logged, and the state is written
// to the file instead) and publishes it with the record's LSN. If record
// fails nothing changes.
func (c *Catalog) Commit(ops []*CatOp, record func(payload []byte) (wal.LSN, error)) error {
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
	if record != nil {
		payload, err := json.Marshal(ops)
		if err != nil {
			return err
		}
		lsn, err := record(payload)
		if err != nil {
			return err
		}
		st.LSN = uint64(lsn)
	}
	st.Version++
	if record == nil {
		if err := c.Write(st); err != nil {
			return err
		}
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

// RedoCommit replays a commit record's catalog changes (the payload
// Commit logged) unless the catalog file already holds them: its LSN is
// the record's end or later.
func (c *Catalog) RedoCommit(lsn wal.LSN, payload []byte) error {
	var ops []*CatOp
	if err := json.Unmarshal(payload, &ops); err != nil {
		return fmt.Errorf("catalog changes at %s are corrupt: %w", lsn, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if uint64(lsn) <= c.cur.Load().LSN {
		return nil
	}
	st := c.cur.Load().Clone()
	for _, op := range ops {
		st.Apply(op)
	}
	st.LSN = uint64(lsn)
	st.Version++
	c.cur.Store(st)
	return nil
}

// RedoNextOID replays a NEXTOID record (or a checkpoint's next OID).
func (c *Catalog) RedoNextOID(next uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.cur.Load(); next > st.NextOID {
		n := st.Clone()
		n.NextOID = next
		c.cur.Store(n)
	}
}

// NextOID returns the next OID to hand out (for checkpoint records).
func (c *Catalog) NextOID() uint32 { return c.cur.Load().NextOID }

// EndRecovery writes the catalog as recovery left it, and makes the next
// OID allocation log a new bound.
func (c *Catalog) EndRecovery() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.oidLogged = c.cur.Load().NextOID
	return c.Write(c.cur.Load())
}

// RelFiles returns every relation file the published catalog uses (tables
// and indexes).
func (c *Catalog) RelFiles() map[uint32]bool {
	st := c.cur.Load()
	files := map[uint32]bool{}
	for _, t := range st.Tables {
		if t.RelFile != 0 {
			files[t.RelFile] = true
		}
	}
	for _, ix := range st.Indexes {
		if ix.RelFile != 0 {
			files[ix.RelFile] = true
		}
	}
	return files
}

// BumpNextOID makes the next OID at least next (past files found on disk).
func (c *Catalog) BumpNextOID(next uint32) { c.RedoNextOID(next) }

func (c *Catalog) Write(st *CatalogState) error {
	data, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		return err
	}
	if err := c.fs.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return err
	}
	return vfs.WriteFileAtomic(c.fs, c.path, data)
}

// flush persists the current state (at checkpoint).
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
