package remote

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
	"sync"
)

// maxChallenge bounds the WWW-Authenticate header a client parses.
const maxChallenge = 4 << 10

// digestState remembers the last Digest challenge so that later requests authenticate
// at once, counting its nonce uses (RFC 7616).
type digestState struct {
	mu    sync.Mutex
	ch    *challenge
	count uint32
	basic bool
}

// challenge is a parsed Digest challenge.
type challenge struct {
	realm, nonce, opaque, algorithm, qop string
}

// preemptive is the Authorization header for a request when a challenge was answered
// before, "" otherwise.
func (d *digestState) preemptive(cfg Config, method, uri string) string {
	if cfg.User == "" {
		return ""
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.basic {
		return basicAuth(cfg)
	}
	if d.ch == nil {
		return ""
	}
	d.count++
	return d.ch.authorization(cfg, method, uri, d.count)
}

// answer answers the challenges of a 401: Digest (MD5 or SHA-256, qop auth) when
// offered, else Basic.
func (d *digestState) answer(cfg Config, headers []string, method, uri string) (string, error) {
	var digest, basic bool
	var ch *challenge
	for _, h := range headers {
		if len(h) > maxChallenge {
			continue
		}
		scheme, rest, _ := strings.Cut(strings.TrimSpace(h), " ")
		switch strings.ToLower(scheme) {
		case "digest":
			c := parseChallenge(rest)
			if c.nonce == "" {
				continue
			}
			switch strings.ToUpper(c.algorithm) {
			case "", "MD5", "SHA-256":
			default:
				continue
			}
			if ch == nil || strings.EqualFold(c.algorithm, "SHA-256") {
				ch = c
			}
			digest = true
		case "basic":
			basic = true
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case digest:
		d.ch, d.count, d.basic = ch, 1, false
		return ch.authorization(cfg, method, uri, 1), nil
	case basic:
		d.ch, d.basic = nil, true
		return basicAuth(cfg), nil
	}
	return "", fmt.Errorf("%w: no supported authentication scheme offered", ErrUnauthorized)
}

// basicAuth is the Basic Authorization header for cfg's credentials.
func basicAuth(cfg Config) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(cfg.User+":"+cfg.Password))
}

// authorization is the Digest Authorization header answering c.
func (c *challenge) authorization(cfg Config, method, uri string, count uint32) string {
	var newHash func() hash.Hash = md5.New
	alg := "MD5"
	if strings.EqualFold(c.algorithm, "SHA-256") {
		newHash, alg = sha256.New, "SHA-256"
	}
	h := func(s string) string {
		x := newHash()
		x.Write([]byte(s))
		return hex.EncodeToString(x.Sum(nil))
	}
	ha1 := h(cfg.User + ":" + c.realm + ":" + cfg.Password)
	ha2 := h(method + ":" + uri)
	var b strings.Builder
	fmt.Fprintf(&b, `Digest username=%q, realm=%q, nonce=%q, uri=%q, algorithm=%s`, cfg.User, c.realm, c.nonce, uri, alg)
	if hasQopAuth(c.qop) {
		cnonceBytes := make([]byte, 12)
		_, _ = rand.Read(cnonceBytes)
		cnonce := hex.EncodeToString(cnonceBytes)
		nc := fmt.Sprintf("%08x", count)
		resp := h(ha1 + ":" + c.nonce + ":" + nc + ":" + cnonce + ":auth:" + ha2)
		fmt.Fprintf(&b, `, qop=auth, nc=%s, cnonce=%q, response=%q`, nc, cnonce, resp)
	} else {
		fmt.Fprintf(&b, `, response=%q`, h(ha1+":"+c.nonce+":"+ha2))
	}
	if c.opaque != "" {
		fmt.Fprintf(&b, `, opaque=%q`, c.opaque)
	}
	return b.String()
}

// hasQopAuth reports whether a qop list offers "auth".
func hasQopAuth(qop string) bool {
	for _, q := range strings.Split(qop, ",") {
		if strings.TrimSpace(q) == "auth" {
			return true
		}
	}
	return false
}

// parseChallenge parses the parameters of a Digest challenge: comma-separated
// key=value pairs whose values may be quoted.
func parseChallenge(s string) *challenge {
	c := &challenge{}
	for len(s) > 0 {
		s = strings.TrimLeft(s, " ,\t")
		k, rest, ok := strings.Cut(s, "=")
		if !ok {
			break
		}
		k = strings.ToLower(strings.TrimSpace(k))
		var v string
		rest = strings.TrimLeft(rest, " \t")
		if strings.HasPrefix(rest, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(rest); i++ {
				if rest[i] == '\\' && i+1 < len(rest) {
					i++
					b.WriteByte(rest[i])
					continue
				}
				if rest[i] == '"' {
					break
				}
				b.WriteByte(rest[i])
			}
			v = b.String()
			if i < len(rest) {
				i++
			}
			s = rest[i:]
		} else {
			v, s, _ = strings.Cut(rest, ",")
			v = strings.TrimSpace(v)
		}
		switch k {
		case "realm":
			c.realm = v
		case "nonce":
			c.nonce = v
		case "opaque":
			c.opaque = v
		case "algorithm":
			c.algorithm = v
		case "qop":
			c.qop = v
		}
	}
	return c
}
