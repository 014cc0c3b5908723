package rest

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/quality"
)

func testCaseFQN(r *http.Request, param string) (string, error) {
	v, err := pathParam(r, param)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(v) == "" {
		return "", invalid("Invalid fully qualified name: empty")
	}
	return v, nil
}

func (s *server) addTestCaseResult(param string) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		fqn, err := testCaseFQN(r, param)
		if err != nil {
			return err
		}
		body, err := readObject(r)
		if err != nil {
			return err
		}
		res, err := quality.AddResult(r.Context(), s.ents, principal(r), fqn, body)
		if err != nil {
			return err
		}
		w.Header().Set(ChangeHeader, meridian.EventEntityUpdated)
		writeJSON(w, http.StatusOK, res)
		return nil
	}
}

// tsParam parses startTs or endTs: epoch milliseconds, 0 when absent.
func tsParam(r *http.Request, name string) (int64, error) {
	v := strings.TrimSpace(r.URL.Query().Get(name))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, invalid("Timestamp %s is not valid, it should be in milliseconds since epoch", v)
	}
	return n, nil
}

func (s *server) listTestCaseResults(param string) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		fqn, err := testCaseFQN(r, param)
		if err != nil {
			return err
		}
		start, err := tsParam(r, "startTs")
		if err != nil {
			return err
		}
		end, err := tsParam(r, "endTs")
		if err != nil {
			return err
		}
		list, err := quality.ListResults(r.Context(), s.ents, principal(r), fqn, start, end)
		if err != nil {
			return err
		}
		if list == nil {
			list = []meridian.Entity{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": list, "paging": paging{Total: len(list)}})
		return nil
	}
}

// createBasicSuite creates a table's basic test suite (quality.CreateBasicSuite).
func (s *server) createBasicSuite(w http.ResponseWriter, r *http.Request) error {
	body, err := readObject(r)
	if err != nil {
		return err
	}
	res, err := quality.CreateBasicSuite(r.Context(), s.ents, principal(r), body)
	if err != nil {
		return err
	}
	w.Header().Set("Location", res.Entity.String("href"))
	writeResult(w, http.StatusCreated, res)
	return nil
}
