package catalog

import (
	"math"
	"sort"
	"strconv"
	"time"
)

// Roles: pg_authid's rows. Like PostgreSQL's shared catalog they are part
// of the catalog state, changed by CREATE / ALTER / DROP ROLE through
// CatOps ("createrole", "setrole", "droprole") and so transactional,
// logged in commit records and crash-safe as every other catalog change.
//
// The bootstrap superuser (OID 10) is made when the data directory is
// (Catalog.Bootstrap), named postgres unless lockd -U says otherwise, as
// initdb -U does. It owns every object: lockd has no GRANT, REVOKE or
// ownership of its own (docs/security.md). pg_database_owner (OID 6171)
// is PostgreSQL's predefined role and is not stored.

// RoleDef is one role, pg_authid's columns. A RoleDef in a published
// catalog is never changed; ALTER ROLE replaces it.
type RoleDef struct {
	OID         uint32 `json:"oid"`
	Name        string `json:"name"`
	Super       bool   `json:"super,omitempty"`
	Inherit     bool   `json:"inherit,omitempty"`
	CreateRole  bool   `json:"createrole,omitempty"`
	CreateDB    bool   `json:"createdb,omitempty"`
	CanLogin    bool   `json:"canlogin,omitempty"`
	Replication bool   `json:"replication,omitempty"`
	BypassRLS   bool   `json:"bypassrls,omitempty"`
	ConnLimit   int    `json:"connlimit"` // -1: no limit
	// Password is rolpassword: a SCRAM-SHA-256 verifier, an MD5 hash, or
	// "" for none (PostgreSQL stores no plaintext since version 10).
	Password string `json:"password,omitempty"`
	// ValidUntil is rolvaliduntil in microseconds since the Unix epoch
	// (math.MaxInt64 is infinity); nil is NULL.
	ValidUntil *int64 `json:"valid_until,omitempty"`
}

// Expired reports whether the role's password has expired at now
// (rolvaliduntil in the past).
func (r *RoleDef) Expired(now time.Time) bool {
	return r.ValidUntil != nil && *r.ValidUntil != math.MaxInt64 && *r.ValidUntil < now.UnixMicro()
}

// DbOwnerRoleDef is the predefined role pg_database_owner as the role
// views show it.
var DbOwnerRoleDef = &RoleDef{OID: DbOwnerRoleOID, Name: DbOwnerRole, Inherit: true, ConnLimit: -1}

// Role finds a role by name (nil: none). The predefined
// pg_database_owner is found too.
func (c *CatalogState) Role(name string) *RoleDef {
	for _, r := range c.Roles {
		if r.Name == name {
			return r
		}
	}
	if name == DbOwnerRole {
		return DbOwnerRoleDef
	}
	return nil
}

// RoleByOID finds a role by OID (nil: none).
func (c *CatalogState) RoleByOID(oid uint32) *RoleDef {
	if r := c.Roles[oid]; r != nil {
		return r
	}
	if oid == DbOwnerRoleOID {
		return DbOwnerRoleDef
	}
	return nil
}

// RoleName is the name of the role oid, or PostgreSQL's placeholder for
// a role that does not exist.
func (c *CatalogState) RoleName(oid uint32) string {
	if r := c.RoleByOID(oid); r != nil {
		return r.Name
	}
	return "unknown (OID=" + strconv.FormatUint(uint64(oid), 10) + ")"
}

// OwnerName is the name of the bootstrap superuser, which owns every
// object.
func (c *CatalogState) OwnerName() string { return c.RoleName(BootstrapRoleOID) }

// RolesByOID lists the stored roles and pg_database_owner in OID order.
func (c *CatalogState) RolesByOID() []*RoleDef {
	out := make([]*RoleDef, 0, len(c.Roles)+1)
	for _, r := range c.Roles {
		out = append(out, r)
	}
	out = append(out, DbOwnerRoleDef)
	sort.Slice(out, func(i, j int) bool { return out[i].OID < out[j].OID })
	return out
}

// applyRole applies a createrole, setrole or droprole operation.
func (c *CatalogState) applyRole(op *CatOp) {
	switch op.Kind {
	case "createrole", "setrole":
		if c.Roles == nil {
			c.Roles = map[uint32]*RoleDef{}
		}
		r := *op.Role
		c.Roles[r.OID] = &r
	case "droprole":
		delete(c.Roles, op.Oid)
	}
}

// Bootstrap makes the bootstrap superuser, named name ("" is postgres),
// in a catalog that has no roles: a new data directory, or one made
// before lockd had roles. The catalog file is written at once, so the
// name given when the directory was made is the one it keeps.
//
// password is its stored password (a verifier; "" for none).
func (c *Catalog) Bootstrap(name, password string) error {
	if name == "" {
		name = BootstrapRole
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.cur.Load()
	if len(cur.Roles) > 0 {
		return nil
	}
	st := cur.Clone()
	st.Roles = map[uint32]*RoleDef{BootstrapRoleOID: {OID: BootstrapRoleOID, Name: name, Super: true, Inherit: true,
		CreateRole: true, CreateDB: true, CanLogin: true, Replication: true, BypassRLS: true, ConnLimit: -1, Password: password}}
	st.Version++
	if err := c.Write(st); err != nil {
		return err
	}
	c.cur.Store(st)
	return nil
}
