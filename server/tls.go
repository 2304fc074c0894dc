package server

import (
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"hash"
	"net"
	"os"
	"path/filepath"
	"strings"

	"lockd/sql"
)

// SSL, on Go's crypto/tls. With ssl on, an SSLRequest is answered 'S' and
// the TLS handshake follows; the startup packet then travels encrypted.
// The certificate, key and CA files, the minimum protocol version and the
// cipher list are read at start-up (a failure stops the server, as in
// PostgreSQL) and on every reload (a failure is logged and the
// configuration in force stays). ssl_ciphers is an OpenSSL cipher list
// mapped onto the TLS 1.2 suites Go implements; Go does not let TLS 1.3's
// suites be chosen, so the list does not restrict them.

// tlsState is a loaded SSL configuration.
type tlsState struct {
	cfg    *tls.Config
	cbHash []byte // tls-server-end-point: the hash of the server's certificate
}

// loadTLS builds the SSL configuration from the settings (nil when ssl is
// off). Relative file names are relative to the data directory.
func (s *Server) loadTLS() (*tlsState, error) {
	if !s.settings.Value("ssl").Bool {
		return nil, nil
	}
	path := func(name string) string {
		p := s.settings.Value(name).Str
		if p != "" && !filepath.IsAbs(p) {
			p = filepath.Join(s.dataDir, p)
		}
		return p
	}
	certFile, keyFile, caFile := path("ssl_cert_file"), path("ssl_key_file"), path("ssl_ca_file")
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("could not load server certificate file \"%s\" or private key file \"%s\": %w", certFile, keyFile, err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("could not load server certificate file \"%s\": %w", certFile, err)
	}
	cert.Leaf = leaf
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	versions := map[string]uint16{"TLSv1": tls.VersionTLS10, "TLSv1.1": tls.VersionTLS11, "TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}
	cfg.MinVersion = versions[s.settings.Value("ssl_min_protocol_version").Str]
	cfg.MaxVersion = versions[s.settings.Value("ssl_max_protocol_version").Str] // "": 0, the newest
	if cfg.MaxVersion != 0 && cfg.MaxVersion < cfg.MinVersion {
		return nil, fmt.Errorf("could not set SSL protocol version range: \"%s\" cannot be higher than \"%s\"",
			"ssl_min_protocol_version", "ssl_max_protocol_version")
	}
	if cfg.CipherSuites, err = cipherSuites(s.settings.Value("ssl_ciphers").Str); err != nil {
		return nil, err
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("could not load root certificate file \"%s\": %w", caFile, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("could not load root certificate file \"%s\": no certificates found", caFile)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return &tlsState{cfg: cfg, cbHash: endPointHash(leaf)}, nil
}

// reloadTLS is the reload's part for SSL.
func (s *Server) reloadTLS() {
	st, err := s.loadTLS()
	if err != nil {
		s.log.Warn(err.Error())
		s.log.Warn("SSL configuration was not reloaded")
		return
	}
	s.tls.Store(st)
}

// endPointHash is RFC 5929's tls-server-end-point: the certificate hashed
// with its signature's hash function, SHA-256 for MD5 and SHA-1.
func endPointHash(c *x509.Certificate) []byte {
	var h hash.Hash
	switch c.SignatureAlgorithm {
	case x509.SHA384WithRSA, x509.ECDSAWithSHA384, x509.SHA384WithRSAPSS:
		h = sha512.New384()
	case x509.SHA512WithRSA, x509.ECDSAWithSHA512, x509.SHA512WithRSAPSS:
		h = sha512.New()
	default:
		h = sha256.New()
	}
	h.Write(c.Raw)
	return h.Sum(nil)
}

// isTLS reports whether the connection is encrypted.
func isTLS(conn net.Conn) bool {
	_, ok := conn.(*tls.Conn)
	return ok
}

// channelBinding is the tls-server-end-point data of an encrypted
// connection (nil: none, and SCRAM-SHA-256-PLUS is not offered).
func (s *Server) channelBinding(conn net.Conn) []byte {
	tc, ok := conn.(*tls.Conn)
	if !ok {
		return nil
	}
	if ts := s.tls.Load(); ts != nil && tc.ConnectionState().HandshakeComplete {
		return ts.cbHash
	}
	return nil
}

// OpenSSL's names of the TLS 1.2 suites Go implements, and the groups
// an OpenSSL cipher list may name them by.
var opensslSuites = map[string]uint16{
	"ECDHE-ECDSA-AES128-GCM-SHA256": tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-RSA-AES128-GCM-SHA256":   tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-ECDSA-AES256-GCM-SHA384": tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-RSA-AES256-GCM-SHA384":   tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-ECDSA-CHACHA20-POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-RSA-CHACHA20-POLY1305":   tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-ECDSA-AES128-SHA256":     tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
	"ECDHE-RSA-AES128-SHA256":       tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256,
	"ECDHE-ECDSA-AES128-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
	"ECDHE-RSA-AES128-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
	"ECDHE-ECDSA-AES256-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
	"ECDHE-RSA-AES256-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
	"AES128-GCM-SHA256":             tls.TLS_RSA_WITH_AES_128_GCM_SHA256,
	"AES256-GCM-SHA384":             tls.TLS_RSA_WITH_AES_256_GCM_SHA384,
	"AES128-SHA256":                 tls.TLS_RSA_WITH_AES_128_CBC_SHA256,
	"AES128-SHA":                    tls.TLS_RSA_WITH_AES_128_CBC_SHA,
	"AES256-SHA":                    tls.TLS_RSA_WITH_AES_256_CBC_SHA,
	"ECDHE-RSA-DES-CBC3-SHA":        tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA,
	"DES-CBC3-SHA":                  tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA,
}

// cipherGroup is the suites an OpenSSL alias names (nil: an alias of
// suites Go does not implement, such as aNULL or RC4, which match
// nothing).
func cipherGroup(alias string) ([]string, bool) {
	var out []string
	match := func(f func(name string) bool) []string {
		for name := range opensslSuites {
			if f(name) {
				out = append(out, name)
			}
		}
		return out
	}
	switch strings.ToUpper(alias) {
	case "ALL", "DEFAULT", "COMPLEMENTOFDEFAULT":
		return match(func(string) bool { return true }), true
	case "HIGH":
		return match(func(n string) bool { return !strings.Contains(n, "DES-CBC3") }), true
	case "MEDIUM", "3DES":
		return match(func(n string) bool { return strings.Contains(n, "DES-CBC3") }), true
	case "AESGCM":
		return match(func(n string) bool { return strings.Contains(n, "GCM") }), true
	case "AES":
		return match(func(n string) bool { return strings.Contains(n, "AES") }), true
	case "CHACHA20":
		return match(func(n string) bool { return strings.Contains(n, "CHACHA20") }), true
	case "ECDHE", "EECDH", "KECDHE":
		return match(func(n string) bool { return strings.HasPrefix(n, "ECDHE-") }), true
	case "AECDSA", "ECDSA":
		return match(func(n string) bool { return strings.Contains(n, "ECDSA") }), true
	case "ARSA":
		return match(func(n string) bool { return !strings.Contains(n, "ECDSA") }), true
	case "KRSA", "RSA":
		return match(func(n string) bool { return !strings.HasPrefix(n, "ECDHE-") }), true
	case "ANULL", "ENULL", "NULL", "EXPORT", "EXP", "RC4", "MD5", "DES", "LOW", "PSK", "SRP", "CAMELLIA", "IDEA", "SEED", "ADH", "AECDH", "DSS", "ADSS", "KDHE", "EDH", "DHE":
		return nil, true
	}
	return nil, false
}

// cipherSuites turns an OpenSSL cipher list into Go's TLS 1.2 suites:
// NAME and aliases add, !NAME removes for good, -NAME removes, +NAME
// moves to the end (Go orders suites itself, so only membership counts).
// Unknown names match nothing, as in OpenSSL; a list that leaves no suite
// is an error.
func cipherSuites(list string) ([]uint16, error) {
	on := map[string]bool{}
	banned := map[string]bool{}
	for _, tok := range strings.FieldsFunc(list, func(r rune) bool { return r == ':' || r == ' ' || r == ',' }) {
		op := byte(0)
		if tok[0] == '!' || tok[0] == '-' || tok[0] == '+' {
			op, tok = tok[0], tok[1:]
		}
		var names []string
		for _, part := range strings.Split(tok, "+") { // AES+ECDHE: both
			var ns []string
			if _, ok := opensslSuites[strings.ToUpper(part)]; ok {
				ns = []string{strings.ToUpper(part)}
			} else {
				ns, _ = cipherGroup(part)
			}
			if names == nil {
				names = ns
				continue
			}
			keep := names[:0]
			for _, n := range names {
				for _, m := range ns {
					if n == m {
						keep = append(keep, n)
						break
					}
				}
			}
			names = keep
		}
		for _, n := range names {
			switch op {
			case '!':
				banned[n] = true
				delete(on, n)
			case '-':
				delete(on, n)
			case '+':
			default:
				if !banned[n] {
					on[n] = true
				}
			}
		}
	}
	var out []uint16
	for _, cs := range tls.CipherSuites() { // Go's order, secure suites first
		for n := range on {
			if opensslSuites[n] == cs.ID {
				out = append(out, cs.ID)
			}
		}
	}
	for _, cs := range tls.InsecureCipherSuites() {
		for n := range on {
			if opensslSuites[n] == cs.ID {
				out = append(out, cs.ID)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("could not set the cipher list (no valid ciphers available)")
	}
	return out, nil
}

// sslInfo describes an encrypted connection for pg_stat_ssl, in
// OpenSSL's words as PostgreSQL shows them (nil: not encrypted).
func sslInfo(conn net.Conn) *sql.SSLInfo {
	tc, ok := conn.(*tls.Conn)
	if !ok {
		return nil
	}
	st := tc.ConnectionState()
	info := &sql.SSLInfo{Version: strings.Replace(tls.VersionName(st.Version), "TLS 1.", "TLSv1.", 1), Cipher: tls.CipherSuiteName(st.CipherSuite), Bits: 128}
	for name, id := range opensslSuites {
		if id == st.CipherSuite {
			info.Cipher = name
		}
	}
	switch {
	case strings.Contains(info.Cipher, "256"), strings.Contains(info.Cipher, "CHACHA20"):
		info.Bits = 256
	case strings.Contains(info.Cipher, "DES-CBC3"):
		info.Bits = 112
	}
	if c := clientCert(conn); c != nil {
		info.ClientDN, info.ClientSerial, info.IssuerDN = onelineName(c.Subject.Names), c.SerialNumber.String(), onelineName(c.Issuer.Names)
	}
	return info
}

// clientCert is the client's verified certificate (nil: none).
func clientCert(conn net.Conn) *x509.Certificate {
	tc, ok := conn.(*tls.Conn)
	if !ok {
		return nil
	}
	st := tc.ConnectionState()
	if len(st.VerifiedChains) == 0 || len(st.PeerCertificates) == 0 {
		return nil
	}
	return st.PeerCertificates[0]
}

// onelineName is OpenSSL's one-line form of a name: /CN=alice/O=lab.
func onelineName(names []pkix.AttributeTypeAndValue) string {
	short := map[string]string{"2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.10": "O", "2.5.4.11": "OU",
		"1.2.840.113549.1.9.1": "emailAddress"}
	var b strings.Builder
	for _, n := range names {
		k := short[n.Type.String()]
		if k == "" {
			k = n.Type.String()
		}
		fmt.Fprintf(&b, "/%s=%v", k, n.Value)
	}
	return b.String()
}
