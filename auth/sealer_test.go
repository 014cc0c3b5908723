package auth

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian/store"
)

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func newSealer(t *testing.T, key []byte) *Sealer {
	t.Helper()
	s, err := NewSealer(key)
	if err != nil {
		t.Fatalf("NewSealer: %v", err)
	}
	return s
}

func TestSealerRoundTrip(t *testing.T) {
	var s store.Sealer = newSealer(t, testKey(1))
	for _, plain := range []string{"", "hunter2", "päss wörd ✓", strings.Repeat("x", 10000), Mask, "enc:v1:not-really"} {
		sealed, err := s.Seal(plain)
		if err != nil {
			t.Fatalf("Seal(%q): %v", plain, err)
		}
		if !IsSealed(sealed) || !strings.HasPrefix(sealed, "enc:v1:") {
			t.Errorf("Seal(%q) = %q, want the enc:v1: prefix", plain, sealed)
		}
		if plain != "" && strings.Contains(sealed, plain) {
			t.Errorf("sealed value shows the plaintext")
		}
		got, err := s.Open(sealed)
		if err != nil || got != plain {
			t.Errorf("Open(Seal(%q)) = %q, %v", plain, got, err)
		}
	}
}

func TestSealerUsesAFreshNonceEachTime(t *testing.T) {
	s := newSealer(t, testKey(1))
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		sealed, err := s.Seal("same secret")
		if err != nil {
			t.Fatal(err)
		}
		if seen[sealed] {
			t.Fatalf("the same ciphertext came out twice")
		}
		seen[sealed] = true
	}
}

func TestSealerRefusesDamagedOrForeignInput(t *testing.T) {
	s := newSealer(t, testKey(1))
	sealed, err := s.Seal("hunter2")
	if err != nil {
		t.Fatal(err)
	}
	other, err := newSealer(t, testKey(2)).Seal("hunter2")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(sealed, SealedPrefix))
	flip := func(i int) string {
		b := append([]byte(nil), raw...)
		b[i] ^= 1
		return SealedPrefix + base64.StdEncoding.EncodeToString(b)
	}
	tests := []struct{ name, in string }{
		{"sealed with another key", other},
		{"nonce flipped", flip(0)},
		{"ciphertext flipped", flip(len(raw) / 2)},
		{"tag flipped", flip(len(raw) - 1)},
		{"truncated", SealedPrefix + base64.StdEncoding.EncodeToString(raw[:len(raw)-1])},
		{"too short", SealedPrefix + base64.StdEncoding.EncodeToString(raw[:5])},
		{"prefix only", SealedPrefix},
		{"not base64", SealedPrefix + "%%%"},
		{"not sealed", "hunter2"},
		{"empty", ""},
		{"other version", "enc:v2:" + strings.TrimPrefix(sealed, SealedPrefix)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := s.Open(tt.in); err == nil {
				t.Fatalf("Open accepted %q as %q", tt.in, got)
			}
		})
	}
}

func TestNewSealerNeedsA32ByteKey(t *testing.T) {
	for _, n := range []int{0, 16, 24, 31, 33, 64} {
		if _, err := NewSealer(make([]byte, n)); err == nil {
			t.Errorf("NewSealer accepted a %d-byte key", n)
		}
	}
}

func TestIsSealed(t *testing.T) {
	for in, want := range map[string]bool{"enc:v1:abc": true, "enc:v1:": true, "": false, "enc:v2:abc": false, "plain": false, Mask: false} {
		if got := IsSealed(in); got != want {
			t.Errorf("IsSealed(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestLoadSealerCreatesAndReusesKeyFile(t *testing.T) {
	t.Setenv(SecretKeyEnv, "")
	dir := filepath.Join(t.TempDir(), "meridian-data")
	s1, err := LoadSealer(dir)
	if err != nil {
		t.Fatalf("LoadSealer: %v", err)
	}
	path := filepath.Join(dir, KeyFileName)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("key file not created: %v", err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Errorf("key file mode = %o, want 600", mode)
	}
	content, _ := os.ReadFile(path)
	if key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(content))); err != nil || len(key) != 32 {
		t.Errorf("key file does not hold base64 of 32 bytes: %q", content)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("data directory holds %d entries, want only the key file", len(entries))
	}

	sealed, err := s1.Seal("hunter2")
	if err != nil {
		t.Fatal(err)
	}
	s2, err := LoadSealer(dir)
	if err != nil {
		t.Fatalf("second LoadSealer: %v", err)
	}
	if got, err := s2.Open(sealed); err != nil || got != "hunter2" {
		t.Fatalf("the key file was not reused: %q, %v", got, err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(after, content) {
		t.Errorf("the key file was rewritten")
	}
}

func TestLoadSealerRefusesADamagedKeyFile(t *testing.T) {
	t.Setenv(SecretKeyEnv, "")
	dir := t.TempDir()
	path := filepath.Join(dir, KeyFileName)
	if err := os.WriteFile(path, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSealer(dir); err == nil {
		t.Fatal("LoadSealer accepted a damaged key file")
	}
	if b, _ := os.ReadFile(path); string(b) != "not a key" {
		t.Errorf("the damaged key file was overwritten")
	}
}

func TestLoadSealerTakesTheKeyFromTheEnvironment(t *testing.T) {
	key := testKey(7)
	sum := sha256.Sum256([]byte("correct horse battery staple"))
	tests := []struct {
		name, env string
		want      []byte
	}{
		{"base64", base64.StdEncoding.EncodeToString(key), key},
		{"base64 url alphabet", base64.RawURLEncoding.EncodeToString(key), key},
		{"hex", hex.EncodeToString(key), key},
		{"passphrase", "correct horse battery staple", sum[:]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(SecretKeyEnv, tt.env)
			dir := t.TempDir()
			s, err := LoadSealer(dir)
			if err != nil {
				t.Fatalf("LoadSealer: %v", err)
			}
			want := newSealer(t, tt.want)
			sealed, _ := want.Seal("x")
			if got, err := s.Open(sealed); err != nil || got != "x" {
				t.Errorf("the environment key was not used: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, KeyFileName)); !os.IsNotExist(err) {
				t.Errorf("a key file was created although the environment holds the key")
			}
		})
	}
}
