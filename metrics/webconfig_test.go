package metrics

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// The endpoint behind a web configuration file: HTTPS with the file's
// certificate, basic authentication with bcrypt hashes, and a file that
// does not validate refused before anything is served.
func TestWebConfig(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("scrape-secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "web.yml")
	write := func(text string) {
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("tls_server_config:\n  cert_file: " + certFile + "\n  key_file: " + keyFile + "\nbasic_auth_users:\n  prometheus: " + string(hash) + "\n")
	reg := NewRegistry()
	ep, err := Serve("127.0.0.1:0", reg, nil, false, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close(context.Background())
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}}}
	get := func(scheme, user, password string) int {
		req, _ := http.NewRequest("GET", scheme+"://"+ep.Addr().String()+"/metrics", nil)
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := client.Do(req)
		if err != nil {
			return -1
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("https", "prometheus", "scrape-secret"); code != http.StatusOK {
		t.Fatalf("https with the password: %d", code)
	}
	if code := get("https", "prometheus", "wrong"); code != http.StatusUnauthorized {
		t.Fatalf("https with a wrong password: %d", code)
	}
	if code := get("https", "", ""); code != http.StatusUnauthorized {
		t.Fatalf("https without a password: %d", code)
	}
	if code := get("http", "prometheus", "scrape-secret"); code == http.StatusOK {
		t.Fatal("plain http was served")
	}

	write("tls_server_config:\n  cert_file: /nonexistent.crt\n  key_file: " + keyFile + "\n")
	if _, err := Serve("127.0.0.1:0", reg, nil, false, cfg); err == nil || !strings.Contains(err.Error(), "web configuration file") {
		t.Fatalf("a broken web configuration file: %v", err)
	}
}

func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "metrics"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "m.crt"), filepath.Join(dir, "m.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return certFile, keyFile, pool
}
