package meridian

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameLength is the longest entity name accepted.
const MaxNameLength = 256

// MaxFQNLength is the longest fully qualified name accepted.
const MaxFQNLength = 3072

// ValidateName checks an entity name: 1 to MaxNameLength characters of valid UTF-8, no
// "::", no double quote (a name holding a dot is quoted by QuoteName, never by the
// caller), no control character (C0, DEL or C1) and no bidirectional formatting
// character (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069), which could make
// a name display as another. It returns an EInvalid error that names the field.
func ValidateName(field, name string) error {
	switch {
	case name == "" || strings.TrimSpace(name) == "":
		return Errorf(EInvalid, "%s must not be empty", field)
	case !utf8.ValidString(name):
		return Errorf(EInvalid, "%s must be valid UTF-8", field)
	case utf8.RuneCountInString(name) > MaxNameLength:
		return Errorf(EInvalid, "%s size must be between 1 and %d", field, MaxNameLength)
	case strings.Contains(name, "::"):
		return Errorf(EInvalid, "%s must not contain '::'", field)
	case strings.ContainsRune(name, '"'):
		return Errorf(EInvalid, "Invalid name %s", name)
	}
	for _, r := range name {
		switch {
		case unicode.IsControl(r):
			return Errorf(EInvalid, "%s must not contain control characters (%s)", field, codePoint(r))
		case unicode.Is(unicode.Bidi_Control, r):
			return Errorf(EInvalid, "%s must not contain bidirectional formatting characters (%s)", field, codePoint(r))
		}
	}
	return nil
}

// codePoint names a rune as U+XXXX.
func codePoint(r rune) string { return fmt.Sprintf("U+%04X", r) }

// QuoteName returns name as one FQN part: wrapped in double quotes when it holds a dot.
func QuoteName(name string) string {
	if strings.Contains(name, ".") {
		return `"` + name + `"`
	}
	return name
}

// BuildFQN quotes each part as needed and joins them with dots.
func BuildFQN(parts ...string) string {
	q := make([]string, len(parts))
	for i, p := range parts {
		q[i] = QuoteName(p)
	}
	return strings.Join(q, ".")
}

// SplitFQN parses a fully qualified name into its unquoted parts. A part is either a
// run of characters without dots or quotes, or a quoted run that holds at least one dot.
// Empty parts, stray quotes and unterminated quotes are EInvalid.
func SplitFQN(fqn string) ([]string, error) {
	if fqn == "" {
		return nil, Errorf(EInvalid, "Invalid fully qualified name: empty")
	}
	if len(fqn) > MaxFQNLength {
		return nil, Errorf(EInvalid, "Invalid fully qualified name: longer than %d characters", MaxFQNLength)
	}
	var parts []string
	i := 0
	for {
		if i >= len(fqn) {
			return nil, Errorf(EInvalid, "Invalid fully qualified name %s: empty part", fqn)
		}
		var part string
		if fqn[i] == '"' {
			end := strings.IndexByte(fqn[i+1:], '"')
			if end < 0 {
				return nil, Errorf(EInvalid, "Invalid fully qualified name %s: unterminated quote", fqn)
			}
			part = fqn[i+1 : i+1+end]
			if !strings.Contains(part, ".") {
				return nil, Errorf(EInvalid, "Invalid fully qualified name %s: a quoted part must contain '.'", fqn)
			}
			i += end + 2
			if i < len(fqn) && fqn[i] != '.' {
				return nil, Errorf(EInvalid, "Invalid fully qualified name %s: stray quote", fqn)
			}
		} else {
			end := strings.IndexByte(fqn[i:], '.')
			if end < 0 {
				end = len(fqn) - i
			}
			part = fqn[i : i+end]
			if part == "" {
				return nil, Errorf(EInvalid, "Invalid fully qualified name %s: empty part", fqn)
			}
			if strings.ContainsRune(part, '"') {
				return nil, Errorf(EInvalid, "Invalid fully qualified name %s: stray quote", fqn)
			}
			i += end
		}
		parts = append(parts, part)
		if i >= len(fqn) {
			return parts, nil
		}
		i++ // the dot
	}
}

// ParentFQN returns the FQN without its last part, or "" for a one-part name.
func ParentFQN(fqn string) (string, error) {
	parts, err := SplitFQN(fqn)
	if err != nil {
		return "", err
	}
	return BuildFQN(parts[:len(parts)-1]...), nil
}

// NormalizeFQN parses and rebuilds an FQN, so that needless quotes are removed.
func NormalizeFQN(fqn string) (string, error) {
	parts, err := SplitFQN(fqn)
	if err != nil {
		return "", err
	}
	return BuildFQN(parts...), nil
}

// InvalidUTF8Offset is the offset of the first byte of b that does not start a valid
// UTF-8 sequence, or len(b) when b is valid UTF-8.
func InvalidUTF8Offset(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}
