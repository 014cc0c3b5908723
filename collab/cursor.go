package collab

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// MaxCursor bounds the length of an encoded Cursor, in bytes.
const MaxCursor = 128

// afterCursor is the keyset condition that selects the rows after a Cursor in
// (ts DESC, id DESC) order; its placeholders take the cursor's TS, TS and ID.
const afterCursor = "(ts < ? OR (ts = ? AND id < ?))"

// Cursor is the position after the last row of a page listed newest first: the row's
// timestamp (epoch ms) and id. Its text form is base64url (unpadded) of "<ts>:<id>".
type Cursor struct {
	TS int64
	ID string
}

// String encodes c.
func (c Cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.TS, 10) + ":" + c.ID))
}

// ParseCursor decodes an encoded Cursor. ok is false when s is not one: longer than
// MaxCursor, not base64url, without a colon, with a timestamp that is not an integer
// or an id that is not a UUID. Callers add their own rules and their own error.
func ParseCursor(s string) (c Cursor, ok bool) {
	if len(s) > MaxCursor {
		return Cursor{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, false
	}
	tsPart, id, found := strings.Cut(string(b), ":")
	if !found {
		return Cursor{}, false
	}
	ts, err := strconv.ParseInt(tsPart, 10, 64)
	if err != nil {
		return Cursor{}, false
	}
	if _, err := uuid.Parse(id); err != nil {
		return Cursor{}, false
	}
	return Cursor{TS: ts, ID: id}, true
}
