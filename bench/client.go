package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// client calls the REST API with the admin token over keep-alive connections.
type client struct {
	base  string
	token string
	hc    *http.Client
}

func newClient(base, token string, conns int) *client {
	tr := &http.Transport{
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	return &client{base: base, token: token, hc: &http.Client{Transport: tr, Timeout: 2 * time.Minute}}
}

// statusError is a response whose status was not the expected one.
type statusError struct {
	method, path string
	status       int
	body         string
}

func (e *statusError) Error() string {
	body := e.body
	if len(body) > 300 {
		body = body[:300] + "…"
	}
	return fmt.Sprintf("%s %s: %d %s", e.method, e.path, e.status, body)
}

// do sends one request and reads the whole answer. Any status other than want is a
// *statusError.
func (c *client) do(ctx context.Context, method, path, contentType string, body []byte, want ...int) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if len(want) == 0 {
		want = []int{http.StatusOK}
	}
	for _, w := range want {
		if resp.StatusCode == w {
			return b, nil
		}
	}
	return b, &statusError{method: method, path: path, status: resp.StatusCode, body: string(b)}
}

// postJSON POSTs v as JSON and expects 201 (or 200).
func (c *client) postJSON(ctx context.Context, path string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return c.postEncoded(ctx, path, b)
}

// postEncoded POSTs b, a JSON body, and expects 201 (or 200), as postJSON.
func (c *client) postEncoded(ctx context.Context, path string, b []byte) ([]byte, error) {
	return c.do(ctx, http.MethodPost, path, "application/json", b, http.StatusCreated, http.StatusOK)
}

func (c *client) close() { c.hc.CloseIdleConnections() }
