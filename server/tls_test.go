package server_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/internal/lockdtest"
)

// SSL with a CA made by the test: pgx connects with sslmode=verify-full,
// hostssl and hostnossl rules tell encrypted connections apart, client
// certificates (clientcert=verify-full), pg_stat_ssl, and bad input.

func startTLS(t *testing.T, ca *lockdtest.TestCA, hba string, settings ...string) *lockdtest.Instance {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pg_hba.conf")
	if err := os.WriteFile(path, []byte(hba), 0o600); err != nil {
		t.Fatal(err)
	}
	return lockdtest.Start(t, lockdtest.Options{Settings: append([]string{"ssl=on", "ssl_cert_file=" + ca.CertFile,
		"ssl_key_file=" + ca.KeyFile, "ssl_ca_file=" + ca.CAFile, "hba_file=" + path}, settings...)})
}

func connectDSN(t *testing.T, dsn string) (*pgx.Conn, error) {
	return connectTLS12(t, dsn, false)
}

// connectTLS12 is connectDSN, offering at most TLS 1.2 if tls12.
func connectTLS12(t *testing.T, dsn string, tls12 bool) (*pgx.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if tls12 {
		cfg.TLSConfig.MaxVersion = tls.VersionTLS12
		for _, f := range cfg.Fallbacks {
			if f.TLSConfig != nil {
				f.TLSConfig.MaxVersion = tls.VersionTLS12
			}
		}
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err == nil {
		t.Cleanup(func() { c.Close(context.Background()) })
	}
	return c, err
}

const tlsHBA = `hostnossl all postgres 127.0.0.1/32 trust
hostssl   all certuser 127.0.0.1/32 trust clientcert=verify-full
hostssl   all causer   127.0.0.1/32 trust clientcert=verify-ca
hostssl   all alice    127.0.0.1/32 scram-sha-256
`

func TestTLS(t *testing.T) {
	ca := lockdtest.NewTestCA(t)
	inst := startTLS(t, ca, tlsHBA)
	admin := inst.Connect(t) // sslmode=disable: hostnossl
	mustExec(t, admin, "create role alice login password 'wonderland'")
	mustExec(t, admin, "create role certuser login")
	base := fmt.Sprintf("host=127.0.0.1 port=%d dbname=postgres sslrootcert=%s", inst.Port, ca.CAFile)

	alice, err := connectDSN(t, base+" user=alice password=wonderland sslmode=verify-full")
	if err != nil {
		t.Fatalf("verify-full: %v", err)
	}
	got := queryText(t, alice, "select ssl, version, bits > 0, client_dn from pg_stat_ssl where pid = pg_backend_pid()")
	if got != "t,TLSv1.3,t,NULL" {
		t.Fatalf("pg_stat_ssl: %s", got)
	}
	if got := queryText(t, admin, "select ssl from pg_stat_ssl where pid = pg_backend_pid()"); got != "f" {
		t.Fatalf("pg_stat_ssl of a plain connection: %s", got)
	}
	// Plain text: hostssl does not match; postgres over SSL: hostnossl
	// does not match.
	_, err = connectDSN(t, base+" user=alice password=wonderland sslmode=disable")
	wantPgError(t, "alice without SSL", err, "28000", `no pg_hba.conf entry for host "127.0.0.1", user "alice", database "postgres", no encryption`)
	_, err = connectDSN(t, base+" user=postgres sslmode=require")
	wantPgError(t, "postgres with SSL", err, "28000", `no pg_hba.conf entry for host "127.0.0.1", user "postgres", database "postgres", SSL encryption`)
	_, err = connectDSN(t, base+" user=alice password=wrong sslmode=verify-full")
	wantPgError(t, "wrong password over SSL", err, "28P01", `password authentication failed for user "alice"`)

	// A client certificate whose CN is the user.
	_, err = connectDSN(t, base+" user=certuser sslmode=verify-full")
	wantPgError(t, "no client certificate", err, "28000", "connection requires a valid client certificate")
	cert, key := ca.Issue(t, "certuser", "certuser", false)
	c, err := connectDSN(t, base+" user=certuser sslmode=verify-full sslcert="+cert+" sslkey="+key)
	if err != nil {
		t.Fatalf("client certificate: %v", err)
	}
	if got := queryText(t, c, "select client_dn, issuer_dn, client_serial > 0 from pg_stat_ssl where pid = pg_backend_pid()"); got != "/CN=certuser,/CN=lockd test CA,t" {
		t.Fatalf("pg_stat_ssl with a client certificate: %s", got)
	}
	cert, key = ca.Issue(t, "other", "mallory", false)
	_, err = connectDSN(t, base+" user=certuser sslmode=verify-full sslcert="+cert+" sslkey="+key)
	wantPgError(t, "CN mismatch", err, "28000", `certificate validation (clientcert=verify-full) failed for user "certuser": CN mismatch`)
	// verify-ca: any certificate the CA signed, whatever its name.
	mustExec(t, admin, "create role causer login")
	if _, err := connectDSN(t, base+" user=causer sslmode=verify-full sslcert="+cert+" sslkey="+key); err != nil {
		t.Fatalf("verify-ca with another name: %v", err)
	}
	_, err = connectDSN(t, base+" user=causer sslmode=verify-full")
	wantPgError(t, "verify-ca without a certificate", err, "28000", "connection requires a valid client certificate")
	// pg_hba_file_rules shows the options.
	if got := queryText(t, admin, "select line_number, type, options from pg_hba_file_rules where options is not null order by 1"); got != `2,hostssl,{clientcert=verify-full}|3,hostssl,{clientcert=verify-ca}` {
		t.Fatalf("pg_hba_file_rules options: %s", got)
	}

	// A server certificate from another CA fails verification in the
	// client.
	other := lockdtest.NewTestCA(t)
	_, err = connectDSN(t, fmt.Sprintf("host=127.0.0.1 port=%d dbname=postgres user=alice password=wonderland sslmode=verify-full sslrootcert=%s", inst.Port, other.CAFile))
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a foreign CA: %v", err)
	}
}

func TestTLSSettings(t *testing.T) {
	ca := lockdtest.NewTestCA(t)
	// The minimum protocol version is enforced.
	inst := startTLS(t, ca, "host all all 127.0.0.1/32 trust\n", "ssl_min_protocol_version=TLSv1.3")
	base := fmt.Sprintf("host=127.0.0.1 port=%d dbname=postgres user=postgres sslmode=verify-full sslrootcert=%s", inst.Port, ca.CAFile)
	if _, err := connectTLS12(t, base, true); err == nil {
		t.Fatal("a TLS 1.2 client got past ssl_min_protocol_version=TLSv1.3")
	}
	c, err := connectDSN(t, base)
	if err != nil {
		t.Fatal(err)
	}
	// A maximum below the minimum is refused.
	_, err = lockdtest.TryStart(t, lockdtest.Options{Settings: []string{"ssl=on", "ssl_cert_file=" + ca.CertFile, "ssl_key_file=" + ca.KeyFile,
		"ssl_min_protocol_version=TLSv1.3", "ssl_max_protocol_version=TLSv1.2"}})
	if err == nil || !strings.Contains(err.Error(), "could not set SSL protocol version range") {
		t.Fatalf("max below min: %v", err)
	}
	// A reload with a missing certificate keeps the SSL configuration in
	// force.
	mustExec(t, c, "alter system set ssl_cert_file = '/nonexistent/server.crt'")
	queryText(t, c, "select pg_reload_conf()")
	if _, err := connectDSN(t, base); err != nil {
		t.Fatalf("after a broken reload: %v", err)
	}
	// A start with a missing certificate fails, as PostgreSQL's does.
	_, err = lockdtest.TryStart(t, lockdtest.Options{Settings: []string{"ssl=on", "ssl_cert_file=/nonexistent/server.crt"}})
	if err == nil || !strings.Contains(err.Error(), "could not load server certificate file") {
		t.Fatalf("start without a certificate: %v", err)
	}
}

func TestCipherList(t *testing.T) {
	ca := lockdtest.NewTestCA(t)
	// TLS 1.2 with one suite allowed: a client offering others only fails.
	inst := startTLS(t, ca, "host all all 127.0.0.1/32 trust\n", "ssl_ciphers=ECDHE-ECDSA-AES256-GCM-SHA384")
	base := fmt.Sprintf("host=127.0.0.1 port=%d dbname=postgres user=postgres sslmode=verify-full sslrootcert=%s", inst.Port, ca.CAFile)
	c, err := connectTLS12(t, base, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := queryText(t, c, "select version, cipher, bits from pg_stat_ssl where pid = pg_backend_pid()"); got != "TLSv1.2,ECDHE-ECDSA-AES256-GCM-SHA384,256" {
		t.Fatalf("pg_stat_ssl: %s", got)
	}
	_, err = lockdtest.TryStart(t, lockdtest.Options{Settings: []string{"ssl=on", "ssl_cert_file=" + ca.CertFile, "ssl_key_file=" + ca.KeyFile, "ssl_ciphers=aNULL:RC4"}})
	if err == nil || !strings.Contains(err.Error(), "no valid ciphers available") {
		t.Fatalf("a cipher list with no suite: %v", err)
	}
}

// An SSLRequest answered 'S' and followed by plaintext or garbage instead
// of a TLS handshake: the server closes without a word and serves the
// others.
func TestTLSBadHandshake(t *testing.T) {
	ca := lockdtest.NewTestCA(t)
	inst := startTLS(t, ca, "host all all 127.0.0.1/32 trust\n")
	for name, data := range map[string][]byte{
		"plaintext startup": startupPacket(pgproto3.ProtocolVersion30, "user", "postgres"),
		"garbage":           []byte("\x16\x03\x01\x00\x05hello, this is not TLS"),
	} {
		t.Run(name, func(t *testing.T) {
			conn := dial(t, inst)
			write(t, conn, request(codeSSLRequest))
			buf := make([]byte, 1)
			_ = conn.SetReadDeadline(time.Now().Add(ioTimeout))
			if _, err := conn.Read(buf); err != nil || buf[0] != 'S' {
				t.Fatalf("SSLRequest answered %q, %v", buf, err)
			}
			write(t, conn, data)
			got := readToClose(t, conn, ioTimeout)
			if len(got) > 0 && got[0] != 0x15 { // at most a TLS alert
				t.Fatalf("server sent %q", got)
			}
			c, err := connectDSN(t, fmt.Sprintf("host=127.0.0.1 port=%d dbname=postgres user=postgres sslmode=verify-full sslrootcert=%s", inst.Port, ca.CAFile))
			if err != nil {
				t.Fatal(err)
			}
			c.Close(context.Background())
		})
	}
}
