package commands

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/auth"
	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// CREATE / ALTER / DROP ROLE (and USER, GROUP) and ALTER ROLE RENAME, as
// PostgreSQL 15's commands/user.c runs them: the same attributes,
// privilege rules, SQLSTATEs and messages. Passwords are stored
// encrypted as password_encryption says (auth.Encrypt); one given
// already encrypted is stored as it is.
//
// Role DDL takes ShareRowExclusiveLock on pg_authid (which conflicts
// with itself), so two transactions cannot both create one name; each
// checks names again against the newest published catalog once it holds
// the lock. lockd has no role membership (IN ROLE, ROLE, ADMIN, GRANT
// role) nor per-role settings (ALTER ROLE SET): those get 0A000.

// oidPgAuthid is pg_authid's OID, the object role DDL locks.
const oidPgAuthid = 1260

// roleOptions are the attributes a CREATE or ALTER ROLE statement gives.
type roleOptions struct {
	password                                        *pg.DefElem // arg nil: PASSWORD NULL
	super, inherit, createRole, createDB, canLogin  *bool
	replication, bypassRLS                          *bool
	connLimit                                       *int
	validUntil                                      *string
	dpassword, dsuper, dreplication, dbypass, dconn *pg.DefElem
}

func collectRoleOptions(options []*pg.Node) (*roleOptions, error) {
	o := &roleOptions{}
	seen := map[string]bool{}
	for _, n := range options {
		de := n.GetDefElem()
		if de == nil {
			continue
		}
		if seen[de.Defname] {
			return nil, expr.PosErr(pgerr.New(pgerr.SyntaxError, "conflicting or redundant options"), de.Location)
		}
		seen[de.Defname] = true
		boolArg := func() *bool {
			b := de.Arg.GetBoolean().GetBoolval()
			if de.Arg.GetInteger() != nil {
				b = de.Arg.GetInteger().Ival != 0
			}
			return &b
		}
		switch de.Defname {
		case "password":
			o.password, o.dpassword = de, de
		case "superuser":
			o.super, o.dsuper = boolArg(), de
		case "inherit":
			o.inherit = boolArg()
		case "createrole":
			o.createRole = boolArg()
		case "createdb":
			o.createDB = boolArg()
		case "canlogin":
			o.canLogin = boolArg()
		case "isreplication":
			o.replication, o.dreplication = boolArg(), de
		case "bypassrls":
			o.bypassRLS, o.dbypass = boolArg(), de
		case "connectionlimit":
			v := int(de.Arg.GetInteger().GetIval())
			o.connLimit, o.dconn = &v, de
		case "validUntil":
			v := de.Arg.GetString_().GetSval()
			o.validUntil = &v
		case "sysid":
			// PostgreSQL ignores SYSID with a notice.
		case "addroleto", "rolemembers", "adminmembers":
			return nil, pgerr.NotSupported("role membership is not supported by lockd")
		default:
			return nil, pgerr.New(pgerr.SyntaxError, "option \"%s\" not recognized", de.Defname)
		}
	}
	if o.connLimit != nil && *o.connLimit < -1 {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "invalid connection limit: %d", *o.connLimit)
	}
	return o, nil
}

// apply sets r's attributes from o; role is the role's name (the MD5
// salt). A notice may be raised (an empty password).
func (s *Utility) applyRoleOptions(ec *expr.EvalCtx, o *roleOptions, r *catalog.RoleDef) error {
	set := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	set(&r.Super, o.super)
	set(&r.Inherit, o.inherit)
	set(&r.CreateRole, o.createRole)
	set(&r.CreateDB, o.createDB)
	set(&r.CanLogin, o.canLogin)
	set(&r.Replication, o.replication)
	set(&r.BypassRLS, o.bypassRLS)
	if o.connLimit != nil {
		r.ConnLimit = *o.connLimit
	}
	if o.validUntil != nil {
		d, err := types.ParseText(types.TypeTimestamptz, *o.validUntil, &s.Format)
		if err != nil {
			return err
		}
		v := d.I
		r.ValidUntil = &v
	}
	if o.password != nil {
		r.Password = ""
		if o.password.Arg != nil {
			pw := o.password.Arg.GetString_().GetSval()
			if pw == "" {
				s.Notice(pgerr.SeverityNotice, pgerr.SuccessfulCompletion, "empty string is not a valid password, clearing password")
			} else {
				r.Password = auth.Encrypt(s.Settings.String("password_encryption"), r.Name, pw)
			}
		}
	}
	return nil
}

// lockRoles takes the role DDL lock.
func (s *Utility) lockRoles(ec *expr.EvalCtx) error {
	return s.LockNow(ec, oidPgAuthid, locks.ShareRowExclusiveLock)
}

// roleExists looks a name up in this transaction's catalog and, for
// roles another transaction has made since it began, in the newest
// published one (less the roles this transaction dropped or renamed).
func (s *Utility) roleExists(name string) bool {
	if s.Cat().Role(name) != nil {
		return true
	}
	r := s.Catalog.State().Role(name)
	if r == nil {
		return false
	}
	for _, op := range s.CatOps {
		if op.Kind == "droprole" && op.Oid == r.OID || op.Kind == "setrole" && op.Role.OID == r.OID && op.Role.Name != name {
			return false
		}
	}
	return true
}

// reservedRoleName is check for names CREATE ROLE and RENAME refuse.
func reservedRoleName(name string) error {
	if strings.HasPrefix(name, "pg_") {
		return pgerr.New(pgerr.ReservedName, "role name \"%s\" is reserved", name).
			WithDetail("Role names starting with \"pg_\" are reserved.")
	}
	return nil
}

// canCreateRole is have_createrole_privilege.
func (s *Utility) canCreateRole() bool {
	r := s.CurrentRole()
	return r != nil && (r.Super || r.CreateRole)
}

// CompileCreateRole is CreateRole.
func (s *Utility) CompileCreateRole(cs *pg.CreateRoleStmt, st *plan.Stmt) error {
	st.Tag = "CREATE ROLE"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		o, err := collectRoleOptions(cs.Options)
		if err != nil {
			return "", err
		}
		// CREATE USER logs in by default; ROLE and GROUP do not. Every
		// role inherits by default.
		r := &catalog.RoleDef{Name: cs.Role, Inherit: true, CanLogin: cs.StmtType == pg.RoleStmtType_ROLESTMT_USER, ConnLimit: -1}
		switch {
		case o.super != nil && *o.super && !s.Superuser():
			return "", pgerr.New(pgerr.InsufficientPrivilege, "must be superuser to create superusers")
		case o.replication != nil && *o.replication && !s.Superuser():
			return "", pgerr.New(pgerr.InsufficientPrivilege, "must be superuser to create replication users")
		case o.bypassRLS != nil && *o.bypassRLS && !s.Superuser():
			return "", pgerr.New(pgerr.InsufficientPrivilege, "must be superuser to create bypassrls users")
		case !s.canCreateRole():
			return "", pgerr.New(pgerr.InsufficientPrivilege, "permission denied to create role")
		}
		if err := reservedRoleName(r.Name); err != nil {
			return "", err
		}
		if err := s.lockRoles(ec); err != nil {
			return "", err
		}
		if s.roleExists(r.Name) {
			return "", pgerr.New(pgerr.DuplicateObject, "role \"%s\" already exists", r.Name)
		}
		if err := s.applyRoleOptions(ec, o, r); err != nil {
			return "", err
		}
		r.OID = s.Catalog.AllocOID()
		s.AddCatOp(&catalog.CatOp{Kind: "createrole", Role: r})
		return "CREATE ROLE", nil
	}
	return nil
}

// roleSpec resolves a RoleSpec to a role (CURRENT_USER, SESSION_USER,
// CURRENT_ROLE or a name).
func (s *Utility) roleSpec(rs *pg.RoleSpec) (*catalog.RoleDef, string, error) {
	name := rs.Rolename
	switch rs.Roletype {
	case pg.RoleSpecType_ROLESPEC_CURRENT_USER, pg.RoleSpecType_ROLESPEC_SESSION_USER, pg.RoleSpecType_ROLESPEC_CURRENT_ROLE:
		name = s.User
	case pg.RoleSpecType_ROLESPEC_PUBLIC:
		return nil, "public", pgerr.New(pgerr.UndefinedObject, "role \"%s\" does not exist", "public")
	}
	r := s.Cat().Role(name)
	if r == nil {
		r = s.Catalog.State().Role(name)
	}
	return r, name, nil
}

// CompileAlterRole is AlterRole.
func (s *Utility) CompileAlterRole(as *pg.AlterRoleStmt, st *plan.Stmt) error {
	st.Tag = "ALTER ROLE"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		if as.Action != 1 {
			return "", pgerr.NotSupported("role membership is not supported by lockd")
		}
		o, err := collectRoleOptions(as.Options)
		if err != nil {
			return "", err
		}
		if err := s.lockRoles(ec); err != nil {
			return "", err
		}
		old, name, err := s.roleSpec(as.Role)
		if err != nil {
			return "", err
		}
		if old == nil || old.OID == catalog.DbOwnerRoleOID && name != catalog.DbOwnerRole {
			return "", pgerr.New(pgerr.UndefinedObject, "role \"%s\" does not exist", name)
		}
		if old.OID == catalog.DbOwnerRoleOID {
			return "", pgerr.New(pgerr.InsufficientPrivilege, "permission denied")
		}
		super := s.Superuser()
		onlyOwnPassword := o.password != nil && o.super == nil && o.inherit == nil && o.createRole == nil && o.createDB == nil &&
			o.canLogin == nil && o.replication == nil && o.bypassRLS == nil && o.connLimit == nil && o.validUntil == nil &&
			old.Name == s.User
		switch {
		case (old.Super || o.super != nil) && !super:
			return "", pgerr.New(pgerr.InsufficientPrivilege, "must be superuser to alter superuser roles or change superuser attribute")
		case (old.Replication || o.replication != nil) && !super:
			return "", pgerr.New(pgerr.InsufficientPrivilege, "must be superuser to alter replication roles or change replication attribute")
		case o.bypassRLS != nil && !super:
			return "", pgerr.New(pgerr.InsufficientPrivilege, "must be superuser to change bypassrls attribute")
		case !super && !s.canCreateRole() && !onlyOwnPassword:
			return "", pgerr.New(pgerr.InsufficientPrivilege, "permission denied")
		}
		r := *old
		if err := s.applyRoleOptions(ec, o, &r); err != nil {
			return "", err
		}
		s.AddCatOp(&catalog.CatOp{Kind: "setrole", Role: &r})
		return "ALTER ROLE", nil
	}
	return nil
}

// CompileDropRole is DropRole. The bootstrap superuser owns every object
// in lockd, so it cannot be dropped; no other role owns anything.
func (s *Utility) CompileDropRole(ds *pg.DropRoleStmt, st *plan.Stmt) error {
	st.Tag = "DROP ROLE"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		if !s.canCreateRole() {
			return "", pgerr.New(pgerr.InsufficientPrivilege, "permission denied to drop role")
		}
		if err := s.lockRoles(ec); err != nil {
			return "", err
		}
		dropped := map[uint32]bool{}
		for _, n := range ds.Roles {
			rs := n.GetRoleSpec()
			if rs.Roletype != pg.RoleSpecType_ROLESPEC_CSTRING {
				return "", pgerr.New(pgerr.SyntaxError, "cannot use special role specifier in DROP ROLE")
			}
			r, name, _ := s.roleSpec(rs)
			if r == nil || dropped[r.OID] {
				if !ds.MissingOk {
					return "", pgerr.New(pgerr.UndefinedObject, "role \"%s\" does not exist", name)
				}
				s.Notice(pgerr.SeverityNotice, pgerr.SuccessfulCompletion, fmt.Sprintf("role \"%s\" does not exist, skipping", name))
				continue
			}
			// PostgreSQL's order: the current user, superusers, then the
			// roles the system needs (pinned).
			switch {
			case r.Name == s.User:
				return "", pgerr.New(pgerr.ObjectInUse, "current user cannot be dropped")
			case r.Super && !s.Superuser():
				return "", pgerr.New(pgerr.InsufficientPrivilege, "must be superuser to drop superusers")
			case r.OID == catalog.DbOwnerRoleOID, r.OID == catalog.BootstrapRoleOID:
				return "", pgerr.New(pgerr.DependentObjectsStillExist, "cannot drop role %s because it is required by the database system", r.Name)
			}
			dropped[r.OID] = true
			s.AddCatOp(&catalog.CatOp{Kind: "droprole", Oid: r.OID})
		}
		return "DROP ROLE", nil
	}
	return nil
}

// CompileRenameRole is RenameRole. An MD5 password is salted with the
// role's name, so renaming clears it, with PostgreSQL's notice.
func (s *Utility) CompileRenameRole(rs *pg.RenameStmt, st *plan.Stmt) error {
	st.Tag = "ALTER ROLE"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		if err := s.lockRoles(ec); err != nil {
			return "", err
		}
		old, _, _ := s.roleSpec(&pg.RoleSpec{Roletype: pg.RoleSpecType_ROLESPEC_CSTRING, Rolename: rs.Subname})
		if old == nil || old.OID == catalog.DbOwnerRoleOID {
			if old != nil {
				return "", pgerr.New(pgerr.ReservedName, "role name \"%s\" is reserved", old.Name).
					WithDetail("Role names starting with \"pg_\" are reserved.")
			}
			return "", pgerr.New(pgerr.UndefinedObject, "role \"%s\" does not exist", rs.Subname)
		}
		if old.Name == s.User {
			return "", pgerr.NotSupported("session user cannot be renamed")
		}
		if s.roleExists(rs.Newname) {
			return "", pgerr.New(pgerr.DuplicateObject, "role \"%s\" already exists", rs.Newname)
		}
		if err := reservedRoleName(rs.Newname); err != nil {
			return "", err
		}
		switch {
		case old.Super && !s.Superuser():
			return "", pgerr.New(pgerr.InsufficientPrivilege, "must be superuser to rename superusers")
		case !s.canCreateRole():
			return "", pgerr.New(pgerr.InsufficientPrivilege, "permission denied to rename role")
		}
		r := *old
		r.Name = rs.Newname
		if auth.TypeOf(r.Password) == auth.PasswordMD5 {
			r.Password = ""
			s.Notice(pgerr.SeverityNotice, pgerr.SuccessfulCompletion, "MD5 password cleared because of role rename")
		}
		s.AddCatOp(&catalog.CatOp{Kind: "setrole", Role: &r})
		return "ALTER ROLE", nil
	}
	return nil
}
