package elastic

import (
	"bytes"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
)

// fieldTerm is a q token of the form field:value.
var fieldTerm = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.]*):(.*)$`)

// ParseSearchQuery reads q: the search words and the term filters of its supported
// field:value tokens. The package comment says what is supported. Errors: EInvalid.
func ParseSearchQuery(q string) ([]string, []search.Filter, error) {
	if len(q) > search.MaxQueryLength && utf8.RuneCountInString(q) > search.MaxQueryLength {
		return nil, nil, meridian.Errorf(meridian.EInvalid, "q is longer than the maximum of %d characters", search.MaxQueryLength)
	}
	q = strings.TrimSpace(q)
	if q == "" || q == "*" {
		return nil, nil, nil
	}
	var (
		terms   []string
		filters []search.Filter
	)
	for _, tok := range queryTokens(q) {
		switch tok {
		case "AND", "OR", "&&", "||":
			continue
		case "NOT", "!":
			return nil, nil, meridian.Errorf(meridian.EInvalid,
				"Unsupported q: NOT. Supported: keywords (all required, prefixes match), \"*\" and field:value")
		}
		if strings.HasPrefix(tok, "-") || strings.HasPrefix(tok, "!") {
			return nil, nil, meridian.Errorf(meridian.EInvalid,
				"Unsupported q: exclusion %s. Supported: keywords (all required, prefixes match), \"*\" and field:value", tok)
		}
		if m := fieldTerm.FindStringSubmatch(tok); m != nil {
			value := strings.Trim(m[2], `"`)
			if field, ok := searchFields[strings.TrimSuffix(m[1], ".keyword")]; ok && value != "" && value != "*" {
				if field == search.FieldDeleted {
					value = strings.ToLower(value)
					if value != "true" && value != "false" {
						return nil, nil, meridian.Errorf(meridian.EInvalid, "Unsupported q: deleted:%s (use true or false)", m[2])
					}
				}
				filters = append(filters, search.Filter{Field: field, Values: []string{value}})
				continue
			}
			tok = value
		}
		for _, w := range search.Words(tok) {
			if len(w) > search.MaxTermLength {
				return nil, nil, meridian.Errorf(meridian.EInvalid, "q has a word longer than the maximum of %d bytes", search.MaxTermLength)
			}
			terms = append(terms, w)
		}
		if len(terms) > search.MaxTerms {
			return nil, nil, meridian.Errorf(meridian.EInvalid, "q has more than the maximum of %d words", search.MaxTerms)
		}
	}
	return terms, filters, nil
}

// queryTokens splits q on spaces outside double quotes; quotes stay in the tokens.
func queryTokens(q string) []string {
	var (
		out    []string
		cur    bytes.Buffer
		quoted bool
	)
	for _, r := range q {
		switch {
		case r == '"':
			quoted = !quoted
			cur.WriteRune(r)
		case unicode.IsSpace(r) && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
