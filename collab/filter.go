package collab

import (
	"strings"
	"unicode/utf8"

	"github.com/meridian-catalog/meridian"
)

// CheckFilters checks text filters, by name: each at most max bytes of valid UTF-8
// without NUL characters. Errors: EInvalid, naming the filter.
func CheckFilters(max int, filters map[string]string) error {
	for name, v := range filters {
		if len(v) > max {
			return meridian.Errorf(meridian.EInvalid, "%s is longer than %d bytes", name, max)
		}
		if strings.ContainsRune(v, 0) || !utf8.ValidString(v) {
			return meridian.Errorf(meridian.EInvalid, "%s must be valid UTF-8 without NUL characters", name)
		}
	}
	return nil
}
