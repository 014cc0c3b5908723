package store

import (
	"encoding/json"
	"log/slog"
	"maps"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/meridian-catalog/meridian"
)

// Mask replaces a secret in answers to callers who may not see it.
const Mask = "*********"

// sealedKey is the member of a stored document (row and version snapshot) that lists the
// paths of the values the engine sealed. Only the engine writes it: write replaces
// whatever a document holds under it, and the schema refuses it in a body. A stored
// string is opened only when its path is listed here, so a user string that looks
// sealed ("enc:…") is never taken for one.
const sealedKey = "$sealed"

// SecretSchema is what the engine needs of a Validator to know a kind's secrets: the
// paths the kind's JSON Schema declares with "format": "password" ("/"-separated
// property names from the root, "*" for any member or item). schema.Validator
// implements it. Without it the engine knows no secrets.
type SecretSchema interface {
	Secrets(kind string) []string
}

// secretRules are one kind's secrets. fields are the secret-bearing top-level fields
// (the first name of each declared path). Below them a value is a secret when
//
//   - its path matches a declared path;
//   - a member name on its path names a secret (password, token, apiKey, … see
//     namesSecret): every scalar below that member; or
//   - it is a string holding credentials (a URL or DSN with a password, password=…):
//     the whole string is sealed, and answers mask the password part only.
//
// Empty strings and null are not secrets.
type secretRules struct {
	fields map[string]bool
	paths  [][]string
}

// newSecretRules compiles declared paths.
func newSecretRules(paths []string) *secretRules {
	if len(paths) == 0 {
		return nil
	}
	r := &secretRules{fields: map[string]bool{}}
	for _, p := range paths {
		segs := strings.Split(p, "/")
		r.fields[segs[0]] = true
		r.paths = append(r.paths, segs)
	}
	return r
}

// secretClass says what a leaf value is.
type secretClass int

const (
	notSecret   secretClass = iota
	wholeSecret             // sealed whole, answered as Mask
	urlSecret               // a string with credentials: sealed whole, its password masked
)

// classify tells what the leaf v at path (from the document root, array items by index)
// is. A "*" on path stands for any member or index (a list item whose index a change
// description does not record).
func (r *secretRules) classify(path []string, v any) secretClass {
	switch t := v.(type) {
	case unreadable:
		return wholeSecret
	case string:
		if t == "" {
			return notSecret
		}
	case float64, bool, json.Number:
	default:
		return notSecret
	}
	if r.declared(path) || underSecretName(path) {
		return wholeSecret
	}
	if s, ok := v.(string); ok && len(credentialSpans(s)) > 0 {
		return urlSecret
	}
	return notSecret
}

func (r *secretRules) declared(path []string) bool {
	for _, p := range r.paths {
		if len(p) != len(path) {
			continue
		}
		match := true
		for i, seg := range p {
			if seg != "*" && path[i] != "*" && seg != path[i] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// underSecretName reports whether a member name below the top-level field names a
// secret.
func underSecretName(path []string) bool {
	for _, seg := range path[1:] {
		if namesSecret(seg) {
			return true
		}
	}
	return false
}

// secretNames are the words that make a member name a secret's, compared with the name
// lower-cased and stripped of "_", "-" and ".".
var secretNames = []string{"password", "passwd", "pwd", "secret", "token", "bearer", "apikey",
	"privatekey", "accesskey", "credential", "passphrase", "authorization"}

// notSecretSuffixes name what describes a secret rather than holding it (tokenUrl,
// secretType).
var notSecretSuffixes = []string{"url", "uri", "endpoint", "type"}

// namesSecret reports whether a member name names a secret: it contains one of
// secretNames and does not end with one of notSecretSuffixes.
func namesSecret(name string) bool {
	n := strings.NewReplacer("_", "", "-", "", ".", "").Replace(strings.ToLower(name))
	for _, suffix := range notSecretSuffixes {
		if strings.HasSuffix(n, suffix) {
			return false
		}
	}
	for _, s := range secretNames {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// kvPassword finds password=… and pwd=… in DSNs, ODBC strings and query strings.
var kvPassword = regexp.MustCompile(`(?i)(?:^|[\s;&?,])(?:password|passwd|pwd)\s*=\s*([^;&\s,]+)`)

// credentialSpans returns the byte ranges of the passwords s holds: the password of a
// URL's user info (scheme://user:password@host), of a scheme-less DSN
// (user:password@tcp(host)/db) and of password=, passwd= or pwd= pairs.
func credentialSpans(s string) [][2]int {
	var spans [][2]int
	start, rest := 0, s
	if i := strings.Index(s, "://"); i > 0 {
		start = i + 3
		rest = s[start:]
	}
	end := len(rest)
	if start > 0 {
		if j := strings.IndexAny(rest, "/?#"); j >= 0 {
			end = j
		}
	}
	if at := strings.LastIndex(rest[:end], "@"); at > 0 {
		userinfo := rest[:at]
		if c := strings.IndexByte(userinfo, ':'); c > 0 && c < len(userinfo)-1 &&
			!strings.ContainsAny(userinfo, " \t\n") && !strings.ContainsAny(userinfo[:c], "/") {
			spans = append(spans, [2]int{start + c + 1, start + at})
		}
	}
	for _, m := range kvPassword.FindAllStringSubmatchIndex(s, -1) {
		spans = append(spans, [2]int{m[2], m[3]})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	return spans
}

// maskCredentials replaces each password in s with Mask.
func maskCredentials(s string) string {
	var b strings.Builder
	last := 0
	for _, sp := range credentialSpans(s) {
		if sp[0] < last {
			continue
		}
		b.WriteString(s[last:sp[0]])
		b.WriteString(Mask)
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// unreadable is a stored secret that cannot be opened (another key, damaged data, a
// value stored before it was declared secret). Answers show the mask for it, and
// writes keep it as it is stored, so one bad value never breaks a read or a write.
type unreadable string

// MarshalJSON writes the value as it is stored.
func (u unreadable) MarshalJSON() ([]byte, error) { return json.Marshal(string(u)) }

// mapLeaves returns v with every leaf below path replaced by f(path, leaf); objects
// and arrays are copied, v is not changed.
func mapLeaves(v any, path []string, f func(path []string, leaf any) any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = mapLeaves(x, append(path[:len(path):len(path)], k), f)
		}
		return out
	case meridian.Entity:
		return mapLeaves(map[string]any(t), path, f)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = mapLeaves(x, append(path[:len(path):len(path)], strconv.Itoa(i)), f)
		}
		return out
	}
	return f(path, v)
}

// maskValue is what a caller who may not see secrets sees of the leaf at path.
func (r *secretRules) maskValue(path []string, v any) any {
	switch r.classify(path, v) {
	case wholeSecret:
		return Mask
	case urlSecret:
		return maskCredentials(v.(string))
	}
	return v
}

// masked returns a copy of e with its secrets masked. Only the secret fields are new
// values (mapLeaves copies what it walks); the others are e's own, shared, so neither
// document may be modified afterwards where the other is still used.
func (r *secretRules) masked(e meridian.Entity) meridian.Entity {
	out := maps.Clone(e)
	if r == nil {
		return out
	}
	for field := range r.fields {
		if v, ok := out[field]; ok {
			out[field] = mapLeaves(v, []string{field}, r.maskValue)
		}
	}
	return out
}

// unreadableMasked returns e with only its unreadable secrets masked: the answer to a
// caller who may see secrets.
func (r *secretRules) unreadableMasked(e meridian.Entity) meridian.Entity {
	for field := range r.fields {
		if v, ok := e[field]; ok {
			e[field] = mapLeaves(v, []string{field}, func(_ []string, leaf any) any {
				if _, bad := leaf.(unreadable); bad {
					return Mask
				}
				return leaf
			})
		}
	}
	return e
}

// seal returns a copy of e for storage: every secret sealed, whatever it looks like
// (a value the caller sent that looks sealed is sealed again), values that could not
// be opened kept as stored, and their paths listed under sealedKey. As with masked, only
// the secret fields are new values: the copy is for encoding, not for changing.
func (r *secretRules) seal(sealer Sealer, e meridian.Entity) (meridian.Entity, error) {
	out := maps.Clone(e)
	delete(out, sealedKey)
	if r == nil || sealer == nil {
		return out, nil
	}
	var (
		sealed [][]string
		err    error
	)
	for field := range r.fields {
		v, ok := out[field]
		if !ok {
			continue
		}
		out[field] = mapLeaves(v, []string{field}, func(path []string, leaf any) any {
			if r.classify(path, leaf) == notSecret || err != nil {
				return leaf
			}
			sealed = append(sealed, path)
			if u, ok := leaf.(unreadable); ok {
				return string(u)
			}
			plain, _ := json.Marshal(leaf)
			s, serr := sealer.Seal(string(plain))
			if serr != nil {
				err = serr
			}
			return s
		})
	}
	if err != nil {
		return nil, err
	}
	if len(sealed) > 0 {
		sort.Slice(sealed, func(i, j int) bool { return strings.Join(sealed[i], "/") < strings.Join(sealed[j], "/") })
		list := make([]any, len(sealed))
		for i, p := range sealed {
			segs := make([]any, len(p))
			for j, s := range p {
				segs[j] = s
			}
			list[i] = segs
		}
		out[sealedKey] = list
	}
	return out, nil
}

// open opens, in place, the secrets of a stored document e (a row or a version
// snapshot) and removes sealedKey. A value that cannot be opened becomes unreadable and
// is logged (kind, id and path, never the value). A document stored before sealedKey
// existed has its "enc:" values at secret paths opened the same way.
func (r *secretRules) open(sealer Sealer, kind string, e meridian.Entity) {
	list, marked := e[sealedKey].([]any)
	delete(e, sealedKey)
	if r == nil || sealer == nil {
		return
	}
	openOne := func(path []string, stored string, legacy bool) any {
		plain, err := sealer.Open(stored)
		if err == nil {
			if legacy {
				return plain
			}
			var v any
			if json.Unmarshal([]byte(plain), &v) == nil {
				return v
			}
		}
		slog.Warn("a stored secret cannot be opened; answering the mask", "kind", kind, "id", e.ID(), "path", strings.Join(path, "/"))
		return unreadable(stored)
	}
	if marked {
		for _, item := range list {
			segs, _ := item.([]any)
			path := make([]string, 0, len(segs))
			for _, s := range segs {
				str, _ := s.(string)
				path = append(path, str)
			}
			if len(path) == 0 || !r.fields[path[0]] {
				continue
			}
			setLeaf(e, path, func(v any) any {
				s, ok := v.(string)
				if !ok {
					return v
				}
				return openOne(path, s, false)
			})
		}
		return
	}
	for field := range r.fields {
		if v, ok := e[field]; ok {
			e[field] = mapLeaves(v, []string{field}, func(path []string, leaf any) any {
				s, ok := leaf.(string)
				if !ok || !strings.HasPrefix(s, "enc:") || r.classify(path, leaf) != wholeSecret {
					return leaf
				}
				return openOne(path, s, true)
			})
		}
	}
}

// setLeaf replaces the value at path in e (objects by member, arrays by index) with
// f(value); a path that leads nowhere changes nothing.
func setLeaf(e meridian.Entity, path []string, f func(any) any) {
	var cur any = map[string]any(e)
	for i, seg := range path {
		last := i == len(path)-1
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[seg]
			if !ok {
				return
			}
			if last {
				c[seg] = f(v)
				return
			}
			cur = v
		case []any:
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n >= len(c) {
				return
			}
			if last {
				c[n] = f(c[n])
				return
			}
			cur = c[n]
		default:
			return
		}
	}
}

// leafAt returns the value at path in v.
func leafAt(v any, path []string) (any, bool) {
	for _, seg := range path {
		switch c := v.(type) {
		case map[string]any:
			x, ok := c[seg]
			if !ok {
				return nil, false
			}
			v = x
		case meridian.Entity:
			x, ok := c[seg]
			if !ok {
				return nil, false
			}
			v = x
		case []any:
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n >= len(c) {
				return nil, false
			}
			v = c[n]
		default:
			return nil, false
		}
	}
	return v, true
}

// restore puts back, in next, the stored value of every secret a caller sent back as
// it was answered to them: the mask, or a URL with its password masked. old is the
// stored document with its secrets opened.
func (r *secretRules) restore(old, next meridian.Entity) {
	if r == nil || old == nil {
		return
	}
	for field := range r.fields {
		v, ok := next[field]
		if !ok {
			continue
		}
		next[field] = mapLeaves(v, []string{field}, func(path []string, leaf any) any {
			s, ok := leaf.(string)
			if !ok {
				return leaf
			}
			prev, ok := leafAt(old, path)
			if !ok {
				return leaf
			}
			if strings.Contains(s, Mask) && r.classify(path, prev) != notSecret && r.maskValue(path, prev) == s {
				return prev
			}
			return leaf
		})
	}
}

// redact masks the secrets in the old and new values a change description records.
// Secret-bearing fields are recorded whole (as JSON text of the field's value, or of the
// list items that changed), so each is decoded, masked and encoded again.
func (r *secretRules) redact(cd *meridian.ChangeDescription) {
	if r == nil {
		return
	}
	for _, list := range [][]meridian.FieldChange{cd.FieldsAdded, cd.FieldsUpdated, cd.FieldsDeleted} {
		for i := range list {
			fc := &list[i]
			if !r.fields[fc.Name] {
				continue
			}
			fc.OldValue = r.redactValue(fc.Name, fc.OldValue)
			fc.NewValue = r.redactValue(fc.Name, fc.NewValue)
		}
	}
}

func (r *secretRules) redactValue(field string, v any) any {
	s, ok := v.(string)
	if !ok {
		if v == nil {
			return nil
		}
		return r.maskValue([]string{field}, v)
	}
	var decoded any
	if err := json.Unmarshal([]byte(s), &decoded); err != nil {
		return Mask
	}
	var masked any
	if items, ok := decoded.([]any); ok {
		// A list change records only the changed items: each stands for any item.
		out := make([]any, len(items))
		for i, item := range items {
			out[i] = mapLeaves(item, []string{field, "*"}, r.maskValue)
		}
		masked = out
	} else {
		masked = mapLeaves(decoded, []string{field}, r.maskValue)
	}
	b, _ := json.Marshal(masked)
	return string(b)
}
