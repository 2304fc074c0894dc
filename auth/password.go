package auth

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
)

// Stored passwords, as PostgreSQL 15 keeps them in pg_authid.rolpassword
// (its libpq/crypt.c and auth-scram.c): a SCRAM-SHA-256 verifier
//
//	SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>
//
// (base64, 16-byte salt, 4096 iterations), or "md5" followed by the hex
// MD5 of the password followed by the role name. A password given
// already in one of these forms is stored as it is.

// PasswordType is what a stored password is (PostgreSQL's
// PasswordType).
type PasswordType int

const (
	PasswordPlaintext PasswordType = iota
	PasswordMD5
	PasswordSCRAM
)

// SCRAMIterations is PostgreSQL 15's SCRAM_DEFAULT_ITERATIONS.
const SCRAMIterations = 4096

// scramSaltLen is SCRAM_DEFAULT_SALT_LEN.
const scramSaltLen = 16

// scramKeyLen is SCRAM_KEY_LEN (SHA-256).
const scramKeyLen = sha256.Size

// md5PasswdLen is the length of an "md5" hash: the prefix and 32 hex
// digits.
const md5PasswdLen = 35

// TypeOf tells what kind of password shadow is (get_password_type).
func TypeOf(shadow string) PasswordType {
	if len(shadow) == md5PasswdLen && strings.HasPrefix(shadow, "md5") && isLowerHex(shadow[3:]) {
		return PasswordMD5
	}
	if _, ok := ParseSCRAMVerifier(shadow); ok {
		return PasswordSCRAM
	}
	return PasswordPlaintext
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Verifier is a parsed SCRAM-SHA-256 verifier.
type Verifier struct {
	Iterations int
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
}

// ParseSCRAMVerifier parses a stored SCRAM-SHA-256 verifier
// (parse_scram_secret).
func ParseSCRAMVerifier(s string) (Verifier, bool) {
	var v Verifier
	method, rest, ok := strings.Cut(s, "$")
	if !ok || method != "SCRAM-SHA-256" {
		return v, false
	}
	iterSalt, keys, ok := strings.Cut(rest, "$")
	if !ok {
		return v, false
	}
	iter, salt, ok := strings.Cut(iterSalt, ":")
	if !ok {
		return v, false
	}
	n, err := strconv.Atoi(iter)
	if err != nil || n <= 0 {
		return v, false
	}
	stored, server, ok := strings.Cut(keys, ":")
	if !ok {
		return v, false
	}
	v.Iterations = n
	if v.Salt, err = base64.StdEncoding.DecodeString(salt); err != nil || len(v.Salt) == 0 {
		return v, false
	}
	if v.StoredKey, err = base64.StdEncoding.DecodeString(stored); err != nil || len(v.StoredKey) != scramKeyLen {
		return v, false
	}
	if v.ServerKey, err = base64.StdEncoding.DecodeString(server); err != nil || len(v.ServerKey) != scramKeyLen {
		return v, false
	}
	return v, true
}

// String is the verifier in its stored form.
func (v Verifier) String() string {
	b64 := base64.StdEncoding.EncodeToString
	return "SCRAM-SHA-256$" + strconv.Itoa(v.Iterations) + ":" + b64(v.Salt) + "$" + b64(v.StoredKey) + ":" + b64(v.ServerKey)
}

// NewVerifier computes the verifier of password with salt and iterations
// (scram_build_secret).
func NewVerifier(password string, salt []byte, iterations int) Verifier {
	salted := saltedPassword(password, salt, iterations)
	clientKey := hmacSHA256(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	return Verifier{Iterations: iterations, Salt: salt, StoredKey: stored[:], ServerKey: hmacSHA256(salted, "Server Key")}
}

func saltedPassword(password string, salt []byte, iterations int) []byte {
	k, err := pbkdf2.Key(sha256.New, prepPassword(password), salt, iterations, scramKeyLen)
	if err != nil {
		panic("auth: pbkdf2: " + err.Error()) // only for key lengths out of range
	}
	return k
}

// prepPassword is SASLprep as PostgreSQL applies it (saslprep.go).
func prepPassword(p string) string { return saslprep(p) }

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// EncryptSCRAM makes a new SCRAM-SHA-256 verifier for password with a
// random salt, in its stored form.
func EncryptSCRAM(password string) string {
	salt := make([]byte, scramSaltLen)
	_, _ = rand.Read(salt)
	return NewVerifier(password, salt, SCRAMIterations).String()
}

// EncryptMD5 is PostgreSQL's MD5 password hash: "md5" and the hex MD5 of
// the password followed by the role name.
func EncryptMD5(password, role string) string {
	sum := md5.Sum([]byte(password + role))
	return "md5" + hex.EncodeToString(sum[:])
}

// Encrypt stores password for role as method ("scram-sha-256" or "md5",
// password_encryption) says, unless it is already a verifier or hash,
// which is kept (encrypt_password).
func Encrypt(method, role, password string) string {
	if TypeOf(password) != PasswordPlaintext {
		return password
	}
	if method == "md5" {
		return EncryptMD5(password, role)
	}
	return EncryptSCRAM(password)
}

// CheckPlain reports whether the cleartext password matches the stored
// one (plain_crypt_verify), whatever its kind.
func CheckPlain(role, stored, password string) bool {
	switch TypeOf(stored) {
	case PasswordSCRAM:
		v, _ := ParseSCRAMVerifier(stored)
		got := NewVerifier(password, v.Salt, v.Iterations)
		return subtle.ConstantTimeCompare(got.StoredKey, v.StoredKey) == 1 &&
			subtle.ConstantTimeCompare(got.ServerKey, v.ServerKey) == 1
	case PasswordMD5:
		return subtle.ConstantTimeCompare([]byte(EncryptMD5(password, role)), []byte(stored)) == 1
	}
	return false
}

// CheckMD5 reports whether the response of an MD5 challenge with salt
// matches a stored MD5 hash (md5_crypt_verify): the client sends "md5"
// and the hex MD5 of the hash's hex digits followed by the salt.
func CheckMD5(stored string, salt [4]byte, response string) bool {
	if TypeOf(stored) != PasswordMD5 {
		return false
	}
	sum := md5.Sum(append([]byte(stored[3:]), salt[:]...))
	want := "md5" + hex.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(want), []byte(response)) == 1
}
