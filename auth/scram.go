package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"

	"lockd/pgerr"
)

// The server side of SASL SCRAM-SHA-256 (RFC 5802, RFC 7677) as
// PostgreSQL 15's auth-scram.c runs it:
//
//	client-first   n,,n=,r=<client nonce>          (SASLInitialResponse)
//	server-first   r=<client+server nonce>,s=<salt>,i=<iterations>
//	client-final   c=biws,r=<nonce>,p=<proof>      (SASLResponse)
//	server-final   v=<server signature>            (AuthenticationSASLFinal)
//
// The user name in client-first is ignored (the startup packet's is
// used). A role that does not exist or has no SCRAM verifier gets a mock
// exchange: a salt derived from the name and a server secret, the same
// messages, and a failure only at the proof, so that a client cannot
// tell an unknown user from a wrong password by message or timing.
// Channel binding (SCRAM-SHA-256-PLUS, tls-server-end-point) is offered
// when the server knows the connection's certificate hash.

// Mechanism names.
const (
	MechSCRAM     = "SCRAM-SHA-256"
	MechSCRAMPlus = "SCRAM-SHA-256-PLUS"
)

// MaxSASLMessage bounds a SASL message (PostgreSQL's
// PG_MAX_AUTH_TOKEN_LENGTH).
const MaxSASLMessage = 65535

// ErrAuthFailed is the proof check's failure; the server reports it as
// PostgreSQL's 28P01 for the user.
var ErrAuthFailed = fmt.Errorf("auth: SCRAM authentication failed")

// scramNonceLen is SCRAM_RAW_NONCE_LEN.
const scramNonceLen = 18

// SCRAM is one connection's exchange. Its zero value is not usable; see
// NewSCRAM.
type SCRAM struct {
	v        Verifier
	mock     bool   // no verifier: fail at the proof
	cbHash   []byte // tls-server-end-point data (nil: no channel binding offered)
	state    int
	cbFlag   byte   // gs2 cbind-flag: 'n', 'y' or 'p'
	gs2      string // the gs2 header as sent, for c=
	first    string // client-first-message-bare
	srvFirst string
	nonce    string // client nonce + server nonce

	serverNonce string // tests: the server's part of the nonce (default random)
}

// NewSCRAM starts an exchange for a role whose stored password is
// stored ("" when the role does not exist or has none). mockSecret keys
// the mock salt (per server); user names it. cbHash, if not nil, is the
// tls-server-end-point hash of the server's certificate: then the PLUS
// mechanism is offered too.
func NewSCRAM(user, stored string, mockSecret []byte, cbHash []byte) *SCRAM {
	s := &SCRAM{cbHash: cbHash}
	v, ok := ParseSCRAMVerifier(stored)
	if !ok {
		s.mock = true
		h := sha256.New()
		h.Write(mockSecret)
		h.Write([]byte(user))
		v = Verifier{Iterations: SCRAMIterations, Salt: h.Sum(nil)[:scramSaltLen]}
	}
	s.v = v
	return s
}

// Mechanisms are the SASL mechanisms the server offers, in its
// preferred order.
func (s *SCRAM) Mechanisms() []string {
	if s.cbHash != nil {
		return []string{MechSCRAMPlus, MechSCRAM}
	}
	return []string{MechSCRAM}
}

// malformed is PostgreSQL's error for a message it cannot parse.
func malformed(detail string, args ...any) *pgerr.Error {
	return &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.ProtocolViolation, Message: "malformed SCRAM message",
		Detail: fmt.Sprintf(detail, args...)}
}

// Start handles the SASLInitialResponse: the chosen mechanism and the
// client-first-message. It returns the server-first-message.
func (s *SCRAM) Start(mech string, msg []byte) ([]byte, error) {
	switch {
	case mech == MechSCRAM:
	case mech == MechSCRAMPlus && s.cbHash != nil:
	default:
		return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.ProtocolViolation,
			Message: "client selected an invalid SASL authentication mechanism"}
	}
	if s.state != 0 {
		return nil, malformed("The message is empty.")
	}
	in := string(msg)
	if in == "" {
		return nil, malformed("The message is empty.")
	}
	if strings.IndexByte(in, 0) >= 0 {
		return nil, malformed("Message contains a null character.")
	}
	// gs2-cbind-flag
	switch in[0] {
	case 'n':
		if mech == MechSCRAMPlus {
			return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.ProtocolViolation,
				Message: "malformed SCRAM message", Detail: "The client selected SCRAM-SHA-256-PLUS, but the SCRAM message does not include channel binding data."}
		}
		in = in[1:]
	case 'y':
		// The client supports channel binding but thinks we do not. If
		// we offered it, that is a downgrade.
		if s.cbHash != nil {
			return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.ProtocolViolation,
				Message: "SCRAM channel binding negotiation error",
				Detail:  "The client supports SCRAM channel binding but thinks the server does not.  However, this server does support channel binding."}
		}
		in = in[1:]
	case 'p':
		if s.cbHash == nil || mech != MechSCRAMPlus {
			return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.ProtocolViolation,
				Message: "malformed SCRAM message", Detail: "The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data."}
		}
		name, rest, ok := strings.Cut(in[1:], ",")
		if !ok || !strings.HasPrefix(name, "=") {
			return nil, malformed("Expected attribute \"%c\" but found \"%s\".", '=', sanitize(in[1:]))
		}
		if name[1:] != "tls-server-end-point" {
			return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.ProtocolViolation,
				Message: fmt.Sprintf("unsupported SCRAM channel-binding type \"%s\"", sanitize(name[1:]))}
		}
		in = "," + rest
	default:
		return nil, malformed("Unexpected channel-binding flag \"%s\".", sanitize(in[:1]))
	}
	s.cbFlag = msg[0]
	if !strings.HasPrefix(in, ",") {
		return nil, malformed("Comma expected, but found character \"%s\".", sanitize(in[:min(1, len(in))]))
	}
	in = in[1:]
	// authzid
	if strings.HasPrefix(in, "a=") {
		return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.FeatureNotSupported,
			Message: "client uses authorization identity, but it is not supported"}
	}
	if !strings.HasPrefix(in, ",") {
		return nil, malformed("Unexpected attribute \"%s\" in client-first-message.", sanitize(in[:min(1, len(in))]))
	}
	in = in[1:]
	s.gs2 = string(msg[:len(msg)-len(in)])
	s.first = in
	// n=user (ignored), then r=nonce; extensions are refused.
	if strings.HasPrefix(in, "m=") {
		return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.FeatureNotSupported,
			Message: "client requires an unsupported SCRAM extension"}
	}
	attrs := strings.Split(in, ",")
	if len(attrs) < 2 {
		return nil, malformed("Expected attribute \"%c\" but found \"%s\".", 'r', "")
	}
	if !strings.HasPrefix(attrs[0], "n=") {
		return nil, malformed("Expected attribute \"%c\" but found \"%s\".", 'n', sanitize(attrs[0]))
	}
	if !strings.HasPrefix(attrs[1], "r=") {
		return nil, malformed("Expected attribute \"%c\" but found \"%s\".", 'r', sanitize(attrs[1]))
	}
	clientNonce := attrs[1][2:]
	if clientNonce == "" || !printable(clientNonce) {
		return nil, malformed("Client nonce contains invalid characters.")
	}
	if s.serverNonce == "" {
		raw := make([]byte, scramNonceLen)
		_, _ = rand.Read(raw)
		s.serverNonce = base64.StdEncoding.EncodeToString(raw)
	}
	s.nonce = clientNonce + s.serverNonce
	s.srvFirst = "r=" + s.nonce + ",s=" + base64.StdEncoding.EncodeToString(s.v.Salt) + ",i=" + fmt.Sprint(s.v.Iterations)
	s.state = 1
	return []byte(s.srvFirst), nil
}

// Finish handles the client-final-message. On success it returns the
// server-final-message; a wrong proof (or a mock exchange) gives
// ErrAuthFailed, a malformed message a *pgerr.Error.
func (s *SCRAM) Finish(msg []byte) ([]byte, error) {
	if s.state != 1 {
		return nil, malformed("The message is empty.")
	}
	s.state = 2
	in := string(msg)
	if in == "" {
		return nil, malformed("The message is empty.")
	}
	if strings.IndexByte(in, 0) >= 0 {
		return nil, malformed("Message contains a null character.")
	}
	i := strings.LastIndex(in, ",p=")
	if i < 0 {
		return nil, malformed("Expected attribute \"%c\" but found \"%s\".", 'p', "")
	}
	withoutProof, proofB64 := in[:i], in[i+3:]
	attrs := strings.Split(withoutProof, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "c=") {
		return nil, malformed("Expected attribute \"%c\" but found \"%s\".", 'c', sanitize(attrs[0]))
	}
	cb, err := base64.StdEncoding.DecodeString(attrs[0][2:])
	if err != nil {
		return nil, malformed("Malformed channel binding data.")
	}
	want := []byte(s.gs2)
	if s.cbFlag == 'p' {
		want = append(want, s.cbHash...)
	}
	if subtle.ConstantTimeCompare(cb, want) != 1 {
		if s.cbFlag == 'p' {
			return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.InvalidAuthorizationSpec,
				Message: "SCRAM channel binding check failed"}
		}
		return nil, &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.ProtocolViolation,
			Message: "unexpected SCRAM channel-binding attribute in client-final-message"}
	}
	if !strings.HasPrefix(attrs[1], "r=") {
		return nil, malformed("Expected attribute \"%c\" but found \"%s\".", 'r', sanitize(attrs[1]))
	}
	if attrs[1][2:] != s.nonce {
		return nil, malformed("Nonce does not match.")
	}
	if len(attrs) > 2 {
		return nil, malformed("Garbage found at the end of client-final-message.")
	}
	proof, err := base64.StdEncoding.DecodeString(proofB64)
	if err != nil || len(proof) != scramKeyLen {
		return nil, malformed("Malformed proof in client-final-message.")
	}
	authMsg := s.first + "," + s.srvFirst + "," + withoutProof
	if s.mock {
		// Spend the time a real check takes.
		_ = hmacSHA256(s.v.Salt, authMsg)
		return nil, ErrAuthFailed
	}
	sig := hmacSHA256(s.v.StoredKey, authMsg)
	clientKey := make([]byte, scramKeyLen)
	for i := range clientKey {
		clientKey[i] = proof[i] ^ sig[i]
	}
	h := sha256.Sum256(clientKey)
	if !hmac.Equal(h[:], s.v.StoredKey) {
		return nil, ErrAuthFailed
	}
	return []byte("v=" + base64.StdEncoding.EncodeToString(hmacSHA256(s.v.ServerKey, authMsg))), nil
}

// printable is RFC 5802's printable: %x21-2B / %x2D-7E.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == ',' {
			return false
		}
	}
	return true
}

// sanitize is PostgreSQL's sanitize_str: a string for an error detail,
// with what is not printable ASCII replaced by '?', at most 30 bytes.
func sanitize(s string) string {
	if len(s) > 30 {
		s = s[:30]
	}
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	return string(b)
}
