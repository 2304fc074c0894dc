package auth

import (
	"bufio"
	"fmt"
	"net"
	"strings"
)

// pg_hba.conf as PostgreSQL 15 reads it (its libpq/hba.c): one rule a
// line, fields separated by white space, '#' to the end of a line a
// comment, a backslash at the end of a line continuing it, a field a
// comma-separated list of tokens, a token in double quotes taken
// literally (so "all" quoted is a name, not the keyword).
//
//	host|hostssl|hostnossl|local  database  user  address [mask]  method [name=value ...]
//
// Rules are tried in order; the first whose connection type, database,
// user and address match decides the method. local rules are parsed and
// shown but never match: lockd listens on TCP only. Host names as
// addresses, @file inclusions, and the GSSAPI, SSPI, ident, peer, LDAP,
// RADIUS, cert and PAM methods are refused with an error, as a method
// PostgreSQL was built without would be.

// HBALine is one rule.
type HBALine struct {
	LineNo   int
	Type     string // "local", "host", "hostssl", "hostnossl"
	Database []HBAToken
	User     []HBAToken
	Address  string // as written ("" for local)
	Mask     string // as written, when given as a separate field
	Net      *net.IPNet
	AddrKind string // "" (an IP network), "all", "samehost" or "samenet"
	Method   string // "trust", "reject", "scram-sha-256", "md5", "password"
	Options  []string
	// ClientCert is the clientcert option ("" none, "verify-ca" or
	// "verify-full").
	ClientCert string
}

// HBAToken is one item of a database or user list.
type HBAToken struct {
	Text   string
	Quoted bool
}

func (t HBAToken) keyword(k string) bool { return !t.Quoted && t.Text == k }

// String is the token as pg_hba_file_rules shows it.
func (t HBAToken) String() string {
	if t.Quoted {
		return "\"" + t.Text + "\""
	}
	return t.Text
}

// HBAError is an error in one line of the file.
type HBAError struct {
	File   string
	LineNo int
	Msg    string
}

func (e *HBAError) Error() string {
	return fmt.Sprintf("%s, line %d of configuration file \"%s\"", e.Msg, e.LineNo, e.File)
}

// HBA is a parsed file: its rules and the errors of the lines that could
// not be parsed. A file with errors is not used (PostgreSQL keeps the
// rules it had); pg_hba_file_rules shows both.
type HBA struct {
	File   string
	Lines  []*HBALine
	Errors []*HBAError
}

// Methods lockd supports, and those PostgreSQL has that lockd does not.
var (
	hbaMethods        = map[string]bool{"trust": true, "reject": true, "scram-sha-256": true, "md5": true, "password": true}
	hbaMethodsMissing = map[string]bool{"gss": true, "sspi": true, "ident": true, "peer": true, "ldap": true, "radius": true, "cert": true, "pam": true, "bsd": true, "krb5": true, "crypt": true}
)

// MaxHBALine bounds a line (PostgreSQL's MAX_LINE).
const MaxHBALine = 8192

// ParseHBA parses the text of a pg_hba.conf named file.
func ParseHBA(file, text string) *HBA {
	h := &HBA{File: file}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	lineNo, start := 0, 0
	var cont strings.Builder
	for sc.Scan() {
		lineNo++
		raw := sc.Text()
		if cont.Len() == 0 {
			start = lineNo
		}
		if strings.HasSuffix(raw, "\\") {
			cont.WriteString(strings.TrimSuffix(raw, "\\"))
			cont.WriteByte(' ')
			continue
		}
		cont.WriteString(raw)
		line := cont.String()
		cont.Reset()
		fields, err := hbaFields(line)
		if err == nil && len(fields) > 0 {
			var l *HBALine
			l, err = parseHBALine(fields)
			if l != nil {
				l.LineNo = start
				h.Lines = append(h.Lines, l)
			}
		}
		if err != nil {
			h.Errors = append(h.Errors, &HBAError{File: file, LineNo: start, Msg: err.Error()})
		}
	}
	if err := sc.Err(); err != nil {
		h.Errors = append(h.Errors, &HBAError{File: file, LineNo: lineNo + 1, Msg: "could not read file: " + err.Error()})
	}
	return h
}

// hbaFields splits a line into fields, each a list of tokens.
func hbaFields(line string) ([][]HBAToken, error) {
	if len(line) > MaxHBALine {
		return nil, fmt.Errorf("authentication file line too long")
	}
	var fields [][]HBAToken
	var cur []HBAToken
	i := 0
	for {
		// skip white space
		for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
			i++
		}
		if i >= len(line) || line[i] == '#' {
			break
		}
		var tok strings.Builder
		quoted, inQuote, sawQuote := false, false, false
		for i < len(line) {
			c := line[i]
			if !inQuote && (c == ' ' || c == '\t' || c == '\r' || c == ',' || c == '#') {
				break
			}
			if c == '"' {
				inQuote = !inQuote
				sawQuote = true
				quoted = true
				i++
				continue
			}
			tok.WriteByte(c)
			i++
		}
		if inQuote {
			return nil, fmt.Errorf("unterminated quoted string")
		}
		if tok.Len() == 0 && !sawQuote {
			return nil, fmt.Errorf("invalid token (empty) in list")
		}
		t := tok.String()
		if !quoted && strings.HasPrefix(t, "@") {
			return nil, fmt.Errorf("could not open secondary authentication file \"%s\": inclusion of files is not supported by lockd", t)
		}
		cur = append(cur, HBAToken{Text: t, Quoted: quoted})
		if i < len(line) && line[i] == ',' {
			i++ // the list goes on, possibly after white space
			continue
		}
		fields = append(fields, cur)
		cur = nil
	}
	if cur != nil {
		fields = append(fields, cur)
	}
	return fields, nil
}

// parseHBALine is parse_hba_line: one rule from its fields.
func parseHBALine(fields [][]HBAToken) (*HBALine, error) {
	l := &HBALine{}
	next := 0
	field := func() []HBAToken {
		if next >= len(fields) {
			return nil
		}
		f := fields[next]
		next++
		return f
	}
	single := func(f []HBAToken, what string) (string, error) {
		if len(f) > 1 {
			return "", fmt.Errorf("multiple values specified for %s", what)
		}
		return f[0].Text, nil
	}
	typ, err := single(field(), "connection type")
	if err != nil {
		return nil, err
	}
	switch typ {
	case "local", "host", "hostssl", "hostnossl":
	case "hostgssenc", "hostnogssenc":
		return nil, fmt.Errorf("hostgssenc record cannot match because GSSAPI is not supported by lockd")
	default:
		return nil, fmt.Errorf("invalid connection type \"%s\"", typ)
	}
	l.Type = typ
	if l.Database = field(); l.Database == nil {
		return nil, fmt.Errorf("end-of-line before database specification")
	}
	if l.User = field(); l.User == nil {
		return nil, fmt.Errorf("end-of-line before role specification")
	}
	if typ != "local" {
		af := field()
		if af == nil {
			return nil, fmt.Errorf("end-of-line before IP address specification")
		}
		addr, err := single(af, "IP address")
		if err != nil {
			return nil, err
		}
		l.Address = addr
		switch {
		case addr == "all" || addr == "samehost" || addr == "samenet":
			l.AddrKind = addr
		default:
			host, _, hasBits := strings.Cut(addr, "/")
			ip := net.ParseIP(host)
			if ip == nil {
				if hasBits {
					return nil, fmt.Errorf("invalid IP address \"%s\"", host)
				}
				return nil, fmt.Errorf("specifying a host name (\"%s\") is not supported by lockd; use an IP address", addr)
			}
			if hasBits {
				_, n, err := net.ParseCIDR(addr)
				if err != nil {
					return nil, fmt.Errorf("invalid CIDR mask in address \"%s\"", addr)
				}
				l.Net = n
			} else {
				mf := field()
				if mf == nil {
					return nil, fmt.Errorf("end-of-line before netmask specification")
				}
				mask, err := single(mf, "netmask")
				if err != nil {
					return nil, err
				}
				mip := net.ParseIP(mask)
				if mip == nil {
					return nil, fmt.Errorf("invalid IP mask \"%s\"", mask)
				}
				if (ip.To4() == nil) != (mip.To4() == nil) {
					return nil, fmt.Errorf("IP address and mask do not match")
				}
				m := net.IPMask(mip)
				if ip.To4() != nil {
					m = net.IPMask(mip.To4())
					ip = ip.To4()
				}
				if ones, bits := m.Size(); ones == 0 && bits == 0 {
					return nil, fmt.Errorf("invalid IP mask \"%s\"", mask)
				}
				l.Mask = mask
				l.Net = &net.IPNet{IP: ip.Mask(m), Mask: m}
			}
		}
	}
	mf := field()
	if mf == nil {
		return nil, fmt.Errorf("end-of-line before authentication method")
	}
	method, err := single(mf, "authentication type")
	if err != nil {
		return nil, err
	}
	switch {
	case hbaMethods[method]:
	case hbaMethodsMissing[method]:
		return nil, fmt.Errorf("invalid authentication method \"%s\": not supported by lockd", method)
	default:
		return nil, fmt.Errorf("invalid authentication method \"%s\"", method)
	}
	l.Method = method
	for f := field(); f != nil; f = field() {
		for _, t := range f {
			name, val, ok := strings.Cut(t.Text, "=")
			if !ok {
				return nil, fmt.Errorf("authentication option not in name=value format: %s", t.Text)
			}
			switch name {
			case "clientcert":
				if typ != "hostssl" {
					return nil, fmt.Errorf("clientcert can only be configured for \"hostssl\" rows")
				}
				if val != "verify-ca" && val != "verify-full" {
					return nil, fmt.Errorf("invalid value for clientcert: \"%s\"", val)
				}
				l.ClientCert = val
			default:
				return nil, fmt.Errorf("unrecognized authentication option name: \"%s\"", name)
			}
			l.Options = append(l.Options, t.Text)
		}
	}
	return l, nil
}

// HBAConn is what a rule is matched against.
type HBAConn struct {
	Addr     net.IP
	SSL      bool
	Database string
	User     string
	// LocalAddrs are the server's addresses with their networks (for
	// samehost and samenet); nil: the interfaces are looked up.
	LocalAddrs []net.Addr
}

// Match returns the first rule that applies to c, or nil (no pg_hba.conf
// entry: the connection is refused).
func (h *HBA) Match(c HBAConn) *HBALine {
	for _, l := range h.Lines {
		if l.matches(&c) {
			return l
		}
	}
	return nil
}

func (l *HBALine) matches(c *HBAConn) bool {
	switch l.Type {
	case "local":
		return false
	case "hostssl":
		if !c.SSL {
			return false
		}
	case "hostnossl":
		if c.SSL {
			return false
		}
	}
	if !l.matchAddr(c) {
		return false
	}
	return matchDB(l.Database, c.Database, c.User) && matchRole(l.User, c.User)
}

func (l *HBALine) matchAddr(c *HBAConn) bool {
	ip := c.Addr
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	switch l.AddrKind {
	case "all":
		return true
	case "samehost", "samenet":
		addrs := c.LocalAddrs
		if addrs == nil {
			addrs, _ = net.InterfaceAddrs()
		}
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			if l.AddrKind == "samehost" && n.IP.Equal(c.Addr) || l.AddrKind == "samenet" && n.Contains(c.Addr) {
				return true
			}
		}
		return false
	}
	if (l.Net.IP.To4() != nil) != (ip.To4() != nil) {
		return false // PostgreSQL does not match IPv4 rules to IPv6 clients or back
	}
	return l.Net.Contains(ip)
}

// matchDB is check_db: all, sameuser, samerole (lockd has no role
// membership: a role is a member of itself only), replication (never:
// lockd refuses replication connections), or a name.
func matchDB(list []HBAToken, db, user string) bool {
	for _, t := range list {
		switch {
		case t.keyword("all"):
			return true
		case t.keyword("sameuser"), t.keyword("samerole"), t.keyword("samegroup"):
			if db == user {
				return true
			}
		case t.keyword("replication"):
		case t.Text == db:
			return true
		}
	}
	return false
}

// matchRole is check_role: all, +group (membership: the role itself),
// or a name.
func matchRole(list []HBAToken, user string) bool {
	for _, t := range list {
		switch {
		case t.keyword("all"):
			return true
		case !t.Quoted && strings.HasPrefix(t.Text, "+"):
			if t.Text[1:] == user {
				return true
			}
		case t.Text == user:
			return true
		}
	}
	return false
}
