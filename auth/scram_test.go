package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"lockd/pgerr"
)

// RFC 7677's example exchange: user "user", password "pencil".
const (
	rfcSalt        = "W22ZaJ0SNY7soEsUEjb6gQ=="
	rfcClientFirst = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
	rfcServerNonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	rfcServerFirst = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
	rfcClientFinal = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
	rfcServerFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
)

func rfcVerifier(t testing.TB) string {
	salt, err := base64.StdEncoding.DecodeString(rfcSalt)
	if err != nil {
		t.Fatal(err)
	}
	return NewVerifier("pencil", salt, 4096).String()
}

func TestSCRAMRFC7677(t *testing.T) {
	s := NewSCRAM("user", rfcVerifier(t), []byte("k"), nil)
	s.serverNonce = rfcServerNonce
	first, err := s.Start(MechSCRAM, []byte(rfcClientFirst))
	if err != nil {
		t.Fatal(err)
	}
	if string(first) != rfcServerFirst {
		t.Fatalf("server-first %q, want %q", first, rfcServerFirst)
	}
	final, err := s.Finish([]byte(rfcClientFinal))
	if err != nil {
		t.Fatal(err)
	}
	if string(final) != rfcServerFinal {
		t.Fatalf("server-final %q, want %q", final, rfcServerFinal)
	}
}

// clientFinal computes a client's final message for password, as a
// client does (RFC 5802 section 3).
func clientFinal(t testing.TB, password, clientFirstBare, serverFirst string) string {
	attrs := map[string]string{}
	for _, a := range strings.Split(serverFirst, ",") {
		attrs[a[:1]] = a[2:]
	}
	salt, _ := base64.StdEncoding.DecodeString(attrs["s"])
	salted := saltedPassword(password, salt, SCRAMIterations)
	mac := func(k []byte, m string) []byte { h := hmac.New(sha256.New, k); h.Write([]byte(m)); return h.Sum(nil) }
	clientKey := mac(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	withoutProof := "c=biws,r=" + attrs["r"]
	sig := mac(stored[:], clientFirstBare+","+serverFirst+","+withoutProof)
	for i := range clientKey {
		clientKey[i] ^= sig[i]
	}
	return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(clientKey)
}

func TestSCRAMExchange(t *testing.T) {
	stored := EncryptSCRAM("secret")
	run := func(user, stored, password string) error {
		s := NewSCRAM(user, stored, []byte("mock"), nil)
		first, err := s.Start(MechSCRAM, []byte("n,,n=,r=abcdefgh"))
		if err != nil {
			return err
		}
		_, err = s.Finish([]byte(clientFinal(t, password, "n=,r=abcdefgh", string(first))))
		return err
	}
	if err := run("u", stored, "secret"); err != nil {
		t.Fatalf("right password: %v", err)
	}
	if err := run("u", stored, "wrong"); !errors.Is(err, ErrAuthFailed) {
		t.Fatalf("wrong password: %v", err)
	}
	if err := run("nobody", "", "secret"); !errors.Is(err, ErrAuthFailed) {
		t.Fatalf("mock: %v", err)
	}
	if err := run("u", EncryptMD5("secret", "u"), "secret"); !errors.Is(err, ErrAuthFailed) {
		t.Fatalf("an md5 password with SCRAM: %v", err)
	}
	// The mock salt is the same for a name every time, so that a client
	// cannot tell an unknown user by a changing salt.
	a, _ := NewSCRAM("ghost", "", []byte("mock"), nil).Start(MechSCRAM, []byte("n,,n=,r=x"))
	b, _ := NewSCRAM("ghost", "", []byte("mock"), nil).Start(MechSCRAM, []byte("n,,n=,r=x"))
	salt := func(m []byte) string { return strings.Split(string(m), ",")[1] }
	if salt(a) != salt(b) {
		t.Fatalf("mock salts differ: %s %s", a, b)
	}
}

func TestSCRAMMalformed(t *testing.T) {
	for _, c := range []struct {
		name, mech, first, final string
		msg                      string
	}{
		{"mechanism", "SCRAM-SHA-1", "n,,n=,r=x", "", "client selected an invalid SASL authentication mechanism"},
		{"plus without TLS", MechSCRAMPlus, "p=tls-server-end-point,,n=,r=x", "", "client selected an invalid SASL authentication mechanism"},
		{"empty", MechSCRAM, "", "", "malformed SCRAM message"},
		{"flag", MechSCRAM, "x,,n=,r=x", "", "malformed SCRAM message"},
		{"authzid", MechSCRAM, "n,a=bob,n=,r=x", "", "client uses authorization identity, but it is not supported"},
		{"no nonce", MechSCRAM, "n,,n=", "", "malformed SCRAM message"},
		{"bad nonce", MechSCRAM, "n,,n=,r=a b", "", "malformed SCRAM message"},
		{"extension", MechSCRAM, "n,,m=ext,n=,r=x", "", "client requires an unsupported SCRAM extension"},
		{"wrong nonce", MechSCRAM, "n,,n=,r=x", "c=biws,r=y,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=", "malformed SCRAM message"},
		{"wrong binding", MechSCRAM, "n,,n=,r=x", "c=eSws,r=xS,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=", "unexpected SCRAM channel-binding attribute in client-final-message"},
		{"no proof", MechSCRAM, "n,,n=,r=x", "c=biws,r=xS", "malformed SCRAM message"},
		{"short proof", MechSCRAM, "n,,n=,r=x", "c=biws,r=xS,p=AAAA", "malformed SCRAM message"},
		{"garbage", MechSCRAM, "n,,n=,r=x", "c=biws,r=xS,z=1,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=", "malformed SCRAM message"},
	} {
		s := NewSCRAM("u", rfcVerifier(t), nil, nil)
		s.serverNonce = "S"
		_, err := s.Start(c.mech, []byte(c.first))
		if err == nil {
			_, err = s.Finish([]byte(c.final))
		}
		var pe *pgerr.Error
		if !errors.As(err, &pe) || pe.Message != c.msg || pe.Severity != pgerr.SeverityFatal {
			t.Errorf("%s: got %v, want %q", c.name, err, c.msg)
		}
	}
	// A replayed final message: the exchange is over.
	s := NewSCRAM("user", rfcVerifier(t), nil, nil)
	s.serverNonce = rfcServerNonce
	if _, err := s.Start(MechSCRAM, []byte(rfcClientFirst)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish([]byte(rfcClientFinal)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish([]byte(rfcClientFinal)); err == nil {
		t.Fatal("a replayed client-final-message was accepted")
	}
	// The same proof against a new server nonce fails.
	s = NewSCRAM("user", rfcVerifier(t), nil, nil)
	if _, err := s.Start(MechSCRAM, []byte(rfcClientFirst)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish([]byte(rfcClientFinal)); err == nil {
		t.Fatal("a proof for another nonce was accepted")
	}
}

func TestPasswordFormats(t *testing.T) {
	if got := EncryptMD5("secret", "alice"); got != "md54a0a68b43b6cd5cf266fa02f196e2371" {
		t.Fatalf("md5: %s", got)
	}
	v := EncryptSCRAM("secret")
	if TypeOf(v) != PasswordSCRAM || !CheckPlain("x", v, "secret") || CheckPlain("x", v, "Secret") {
		t.Fatalf("SCRAM verifier %s", v)
	}
	if TypeOf("md54a0a68b43b6cd5cf266fa02f196e2371") != PasswordMD5 || TypeOf("md5xyz") != PasswordPlaintext {
		t.Fatal("md5 detection")
	}
	for _, pre := range []string{v, "md54a0a68b43b6cd5cf266fa02f196e2371"} {
		if Encrypt("scram-sha-256", "alice", pre) != pre || Encrypt("md5", "alice", pre) != pre {
			t.Fatalf("a hashed password was not kept: %s", pre)
		}
	}
	if !strings.HasPrefix(Encrypt("scram-sha-256", "a", "p"), "SCRAM-SHA-256$4096:") || Encrypt("md5", "alice", "secret") != EncryptMD5("secret", "alice") {
		t.Fatal("Encrypt")
	}
}

// FuzzSCRAM runs arbitrary client messages through an exchange: it must
// never panic, never succeed without the right proof, and fail only with
// ErrAuthFailed or a FATAL *pgerr.Error.
func FuzzSCRAM(f *testing.F) {
	f.Add(rfcClientFirst, rfcClientFinal)
	f.Add("n,,n=,r=abc", "c=biws,r=abcS,p=AAAA")
	f.Add("y,,n=user,r=\x00", "c=eSws,r=,p=")
	f.Add("p=tls-server-end-point,,n=,r=x", "c=cD10bHMtc2VydmVyLWVuZC1wb2ludCwsAAAA,r=xS,p=")
	verifier := rfcVerifier(f)
	f.Fuzz(func(t *testing.T, first, final string) {
		for _, cb := range [][]byte{nil, []byte("certhash")} {
			for _, mech := range []string{MechSCRAM, MechSCRAMPlus} {
				s := NewSCRAM("user", verifier, []byte("k"), cb)
				s.serverNonce = rfcServerNonce
				_, err := s.Start(mech, []byte(first))
				if err == nil {
					var out []byte
					out, err = s.Finish([]byte(final))
					if err == nil && (first != rfcClientFirst || final != rfcClientFinal || string(out) != rfcServerFinal) {
						t.Fatalf("accepted %q %q", first, final)
					}
				}
				var pe *pgerr.Error
				if err != nil && !errors.Is(err, ErrAuthFailed) && (!errors.As(err, &pe) || pe.Severity != pgerr.SeverityFatal) {
					t.Fatalf("error %v", err)
				}
			}
		}
	})
}

func TestSCRAMChannelBinding(t *testing.T) {
	stored := EncryptSCRAM("secret")
	const gs2 = "p=tls-server-end-point,,"
	run := func(cb []byte, sentHash string) error {
		s := NewSCRAM("u", stored, nil, cb)
		if m := s.Mechanisms(); len(m) != 2 || m[0] != MechSCRAMPlus {
			t.Fatalf("mechanisms %v", m)
		}
		first, err := s.Start(MechSCRAMPlus, []byte(gs2+"n=,r=nonce"))
		if err != nil {
			return err
		}
		// The client's final message, binding the certificate hash.
		attrs := map[string]string{}
		for _, a := range strings.Split(string(first), ",") {
			attrs[a[:1]] = a[2:]
		}
		c := "c=" + base64.StdEncoding.EncodeToString([]byte(gs2+sentHash)) + ",r=" + attrs["r"]
		salt, _ := base64.StdEncoding.DecodeString(attrs["s"])
		salted := saltedPassword("secret", salt, SCRAMIterations)
		ck := hmacSHA256(salted, "Client Key")
		sk := sha256.Sum256(ck)
		sig := hmacSHA256(sk[:], "n=,r=nonce,"+string(first)+","+c)
		for i := range ck {
			ck[i] ^= sig[i]
		}
		_, err = s.Finish([]byte(c + ",p=" + base64.StdEncoding.EncodeToString(ck)))
		return err
	}
	if err := run([]byte("certhash"), "certhash"); err != nil {
		t.Fatalf("channel binding: %v", err)
	}
	var pe *pgerr.Error
	if err := run([]byte("certhash"), "otherhash"); !errors.As(err, &pe) || pe.Message != "SCRAM channel binding check failed" {
		t.Fatalf("a wrong binding: %v", err)
	}
	// A client that could bind but thinks the server cannot: a downgrade.
	s := NewSCRAM("u", stored, nil, []byte("certhash"))
	if _, err := s.Start(MechSCRAM, []byte("y,,n=,r=x")); !errors.As(err, &pe) || pe.Message != "SCRAM channel binding negotiation error" {
		t.Fatalf("downgrade: %v", err)
	}
}

func TestSASLprep(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"user", "user"},
		{"I\u00adX", "IX"}, // RFC 4013: soft hyphen mapped to nothing
		{"\u00aa", "a"},    // NFKC
		{"\u2168", "IX"},   // NFKC
		{"p\u00e4ss\u00a0word", "p\u00e4ss word"}, // a non-ASCII space becomes a space
		{"pa\u0308ss", "p\u00e4ss"},               // composed
		{"a\u0007b\u00e9", "a\u0007b\u00e9"},      // prohibited: used raw
		{"\xff\xfe", "\xff\xfe"},                  // not UTF-8: used raw
		{"\uff30\uff41\uff53\uff53", "Pass"},      // fullwidth
	} {
		if got := saslprep(c.in); got != c.want {
			t.Errorf("saslprep(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Verifiers of two spellings of one password are interchangeable.
	v := EncryptSCRAM("\uff30\uff41\uff53\uff53")
	if !CheckPlain("u", v, "Pass") {
		t.Fatal("a fullwidth password and its NFKC form differ")
	}
}
