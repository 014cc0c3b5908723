package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Mask replaces a secret in responses to callers who may not see it.
const Mask = "*********"

// SealedPrefix starts every value Seal returns.
const SealedPrefix = "enc:v1:"

// SecretKeyEnv names the environment variable that holds the secret key.
const SecretKeyEnv = "MERIDIAN_SECRET_KEY"

// KeyFileName is the key file LoadSealer creates in the data directory.
const KeyFileName = "secret.key"

// Sealer encrypts secrets at rest with AES-256-GCM. It is safe for concurrent use.
type Sealer struct {
	aead cipher.AEAD
}

var _ store.Sealer = (*Sealer)(nil)

// NewSealer returns a Sealer for a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("auth: secret key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// LoadSealer returns the Sealer of a data directory. The key comes from the
// MERIDIAN_SECRET_KEY environment variable when it is set: base64 (standard or URL
// alphabet) or hex of 32 bytes is used as it is, and any other non-empty text is
// hashed with SHA-256. Otherwise it comes from <dataDir>/secret.key, which holds the
// base64 of 32 bytes and is created with mode 0600 (and dataDir with 0700) on first
// use. A key file that exists but does not hold a valid key is an error, never
// overwritten.
func LoadSealer(dataDir string) (*Sealer, error) {
	if env := strings.TrimSpace(os.Getenv(SecretKeyEnv)); env != "" {
		return NewSealer(keyFromText(env))
	}
	key, err := keyFile(filepath.Join(dataDir, KeyFileName))
	if err != nil {
		return nil, err
	}
	return NewSealer(key)
}

// keyFromText decodes a 32-byte key given as base64 or hex, or derives one with SHA-256.
func keyFromText(s string) []byte {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == 32 {
			return b
		}
	}
	if b, err := hex.DecodeString(s); err == nil && len(b) == 32 {
		return b
	}
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

// keyFile reads the key file, creating it first when it does not exist.
func keyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createKeyFile(path); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("auth: read secret key: %w", err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("auth: %s does not hold the base64 of a 32-byte key", path)
	}
	return key, nil
}

// createKeyFile writes a fresh key; O_EXCL makes two processes starting together agree
// on the first one written.
func createKeyFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("auth: create data directory: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("auth: generate secret key: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".secret.key-*")
	if err != nil {
		return fmt.Errorf("auth: create secret key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("auth: create secret key: %w", err)
	}
	if _, err := tmp.WriteString(base64.StdEncoding.EncodeToString(key) + "\n"); err != nil {
		tmp.Close()
		return fmt.Errorf("auth: write secret key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("auth: write secret key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("auth: write secret key: %w", err)
	}
	// A hard link fails if path exists, so a concurrent creator's key is never replaced,
	// and the file appears complete or not at all.
	err = os.Link(tmp.Name(), path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	// The file system has no hard links: create the file exclusively instead.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		return fmt.Errorf("auth: create secret key: %w", err)
	}
	_, err = f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("auth: write secret key: %w", err)
	}
	return nil
}

// Seal encrypts plain with a fresh random nonce and returns "enc:v1:" +
// base64(nonce||ciphertext).
func (s *Sealer) Seal(plain string) (string, error) {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("auth: generate nonce: %w", err)
	}
	out := s.aead.Seal(nonce, nonce, []byte(plain), []byte(SealedPrefix))
	return SealedPrefix + base64.StdEncoding.EncodeToString(out), nil
}

// Open decrypts a value made by Seal. A value that is not sealed, was sealed with
// another key or was tampered with is an EInternal error.
func (s *Sealer) Open(sealed string) (string, error) {
	if !IsSealed(sealed) {
		return "", meridian.Errorf(meridian.EInternal, "Secret is not encrypted")
	}
	b, err := base64.StdEncoding.DecodeString(sealed[len(SealedPrefix):])
	if err != nil || len(b) < s.aead.NonceSize()+s.aead.Overhead() {
		return "", meridian.Errorf(meridian.EInternal, "Secret cannot be decrypted: it is damaged")
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, b[:n], b[n:], []byte(SealedPrefix))
	if err != nil {
		return "", meridian.Errorf(meridian.EInternal, "Secret cannot be decrypted: wrong key or damaged data")
	}
	return string(plain), nil
}

// IsSealed reports whether s looks like a value made by Seal.
func IsSealed(s string) bool { return strings.HasPrefix(s, SealedPrefix) }
