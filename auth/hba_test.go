package auth

import (
	"net"
	"strings"
	"testing"
)

func TestParseHBA(t *testing.T) {
	h := ParseHBA("hba", `# comment
host    all         all             127.0.0.1/32            trust
hostssl "all",db2   +staff,"all"    10.0.0.0 255.0.0.0      scram-sha-256 clientcert=verify-full
hostnossl sameuser  bob             ::1/128                 md5   # trailing comment
local   all         all                                     password
host    db1, db2    alice           samenet \
        reject
`)
	if len(h.Errors) > 0 {
		t.Fatalf("errors: %v", h.Errors[0])
	}
	if len(h.Lines) != 5 {
		t.Fatalf("%d lines", len(h.Lines))
	}
	l := h.Lines[1]
	if l.LineNo != 3 || l.Type != "hostssl" || l.Method != "scram-sha-256" || l.ClientCert != "verify-full" ||
		l.Net.String() != "10.0.0.0/8" || !l.Database[0].Quoted || l.Database[1].Text != "db2" || l.User[0].Text != "+staff" {
		t.Fatalf("line 3: %+v", l)
	}
	if l := h.Lines[4]; l.LineNo != 6 || len(l.Database) != 2 || l.AddrKind != "samenet" || l.Method != "reject" {
		t.Fatalf("continued line: %+v", l)
	}
	ip := net.ParseIP
	for _, c := range []struct {
		conn HBAConn
		line int // 0: none
	}{
		{HBAConn{Addr: ip("127.0.0.1"), Database: "x", User: "y"}, 2},
		{HBAConn{Addr: ip("10.1.2.3"), Database: "all", User: "staff", SSL: true}, 3},  // quoted "all" is a name; +staff matches staff
		{HBAConn{Addr: ip("10.1.2.3"), Database: "db2", User: "all", SSL: true}, 3},    // quoted "all" user is the role named all
		{HBAConn{Addr: ip("10.1.2.3"), Database: "db2", User: "alice", SSL: true}, 0},  // not a member
		{HBAConn{Addr: ip("10.1.2.3"), Database: "db2", User: "staff", SSL: false}, 0}, // hostssl without SSL
		{HBAConn{Addr: ip("::1"), Database: "bob", User: "bob"}, 4},                    // sameuser
		{HBAConn{Addr: ip("::1"), Database: "bob", User: "bob", SSL: true}, 0},         // hostnossl with SSL
		{HBAConn{Addr: ip("::ffff:127.0.0.1"), Database: "x", User: "y"}, 2},           // IPv4-mapped
		{HBAConn{Addr: ip("192.168.1.9"), Database: "db1", User: "alice", LocalAddrs: []net.Addr{&net.IPNet{IP: ip("192.168.1.1"), Mask: net.CIDRMask(24, 32)}}}, 6},
		{HBAConn{Addr: ip("192.168.2.9"), Database: "db1", User: "alice", LocalAddrs: []net.Addr{&net.IPNet{IP: ip("192.168.1.1"), Mask: net.CIDRMask(24, 32)}}}, 0},
	} {
		got := 0
		if l := h.Match(c.conn); l != nil {
			got = l.LineNo
		}
		if got != c.line {
			t.Errorf("%+v: matched line %d, want %d", c.conn, got, c.line)
		}
	}
}

func TestParseHBAErrors(t *testing.T) {
	for _, c := range []struct{ line, msg string }{
		{"hots all all all trust", `invalid connection type "hots"`},
		{"host", "end-of-line before database specification"},
		{"host all", "end-of-line before role specification"},
		{"host all all", "end-of-line before IP address specification"},
		{"host all all 127.0.0.1/32", "end-of-line before authentication method"},
		{"host all all 127.0.0.1/33 trust", `invalid CIDR mask in address "127.0.0.1/33"`},
		{"host all all 300.0.0.1/8 trust", `invalid IP address "300.0.0.1"`},
		{"host all all 127.0.0.1 trust", `invalid IP mask "trust"`},
		{"host all all 127.0.0.1 255.0.255.0 trust", `invalid IP mask "255.0.255.0"`},
		{"host all all 127.0.0.1 ffff:: trust", "IP address and mask do not match"},
		{"host all all example.com trust", `specifying a host name ("example.com") is not supported by lockd; use an IP address`},
		{"host all all all sorcery", `invalid authentication method "sorcery"`},
		{"host all all all ident", `invalid authentication method "ident": not supported by lockd`},
		{"host all all all trust,md5", "multiple values specified for authentication type"},
		{"host all all all trust foo", "authentication option not in name=value format: foo"},
		{"host all all all trust foo=1", `unrecognized authentication option name: "foo"`},
		{"host all all all trust clientcert=verify-ca", `clientcert can only be configured for "hostssl" rows`},
		{`host "all all all trust`, "unterminated quoted string"},
		{"host all, db2 all all trust", ""},
		{"host all ,x all trust", "invalid token (empty) in list"},
		{"host @dbs all all trust", `could not open secondary authentication file "@dbs": inclusion of files is not supported by lockd`},
	} {
		h := ParseHBA("f", "# first\n"+c.line+"\n")
		got := ""
		if len(h.Errors) > 0 {
			got = h.Errors[0].Msg
			if h.Errors[0].LineNo != 2 || !strings.HasSuffix(h.Errors[0].Error(), `line 2 of configuration file "f"`) {
				t.Errorf("%q: error at %s", c.line, h.Errors[0].Error())
			}
		}
		if got != c.msg {
			t.Errorf("%q: got %q, want %q", c.line, got, c.msg)
		}
	}
}

// FuzzParseHBA: any text parses without a panic, every rule parsed has
// what matching needs, and matching never panics.
func FuzzParseHBA(f *testing.F) {
	f.Add("host all all 127.0.0.1/32 trust\n")
	f.Add("hostssl \"a,b\",c +g 10.0.0.0 255.0.0.0 md5 clientcert=verify-ca\n")
	f.Add("host all all ::1/128 scram-sha-256 \\\n  \n# x\nlocal all all reject")
	f.Add("host all all samehost password\nhost all all 1.2.3.4 ::ffff:0:0 trust")
	f.Fuzz(func(t *testing.T, text string) {
		h := ParseHBA("fuzz", text)
		for _, l := range h.Lines {
			if l.Type != "local" && l.AddrKind == "" && l.Net == nil {
				t.Fatalf("line %d: no address", l.LineNo)
			}
			if !hbaMethods[l.Method] || len(l.Database) == 0 || len(l.User) == 0 {
				t.Fatalf("line %d: %+v", l.LineNo, l)
			}
		}
		for _, ip := range []string{"127.0.0.1", "::1", "10.1.2.3"} {
			h.Match(HBAConn{Addr: net.ParseIP(ip), Database: "d", User: "u", LocalAddrs: []net.Addr{}})
		}
	})
}
