package engine

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian"
)

// JSONValue turns a value a driver returned into a JSON-ready one: string, int64,
// float64, bool or nil; times become RFC 3339 strings, bytes base64 unless they are
// valid text, non-finite floats strings, and anything else its fmt form.
func JSONValue(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string, bool, int64:
		return x
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		if x > math.MaxInt64 {
			return fmt.Sprint(x)
		}
		return int64(x)
	case float32:
		return JSONValue(float64(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprint(x)
		}
		return x
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case []byte:
		if isText(x) {
			return string(x)
		}
		return base64.StdEncoding.EncodeToString(x)
	case *big.Int:
		return x.String()
	case fmt.Stringer:
		return x.String()
	default:
		return fmt.Sprint(x)
	}
}

func isText(b []byte) bool {
	for _, c := range string(b) {
		if c == '\uFFFD' || (c < 0x20 && c != '\n' && c != '\r' && c != '\t') {
			return false
		}
	}
	return true
}

// Redact returns msg with every occurrence of the secrets of c replaced by a mask, so
// that a driver's message can never carry a password or token to a caller or a log.
func Redact(c Conn, msg string) string {
	for _, s := range []string{c.Password, c.Token} {
		if len(s) >= 1 {
			msg = strings.ReplaceAll(msg, s, "********")
		}
	}
	return msg
}

// Errorf returns a meridian error whose message has the secrets of c redacted.
func Errorf(c Conn, code, format string, args ...any) error {
	return &meridian.Error{Code: code, Message: Redact(c, fmt.Sprintf(format, args...))}
}

// Capped wraps a sink to count rows and stop at MaxRows: Row returns ErrCapReached
// when the row cap has been reached, and the engine stops reading.
type Capped struct {
	Sink    Sink
	Max     int
	Count   int64
	Reached bool
}

// ErrCapReached is what Capped.Row returns once the row cap is reached.
var ErrCapReached = fmt.Errorf("row cap reached")

// Row forwards one row unless the cap is reached.
func (c *Capped) Row(values []any) error {
	if c.Max > 0 && c.Count >= int64(c.Max) {
		c.Reached = true
		return ErrCapReached
	}
	c.Count++
	return c.Sink.Row(values)
}
