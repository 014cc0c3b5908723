package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
)

// throwawayDB creates the database meridian_bench_<random> on the server at adminURL
// and returns its URL and a function that drops it.
func throwawayDB(ctx context.Context, adminURL string) (string, func(), error) {
	u, err := url.Parse(adminURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", nil, fmt.Errorf("-postgres-url must be a postgres:// URL")
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("PostgreSQL unreachable at %s: %v", redact(u), err)
	}
	defer conn.Close(context.Background())

	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "meridian_bench_" + hex.EncodeToString(b)
	if _, err := conn.Exec(cctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("create database %s: %v", name, err)
	}
	drop := func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(dctx, adminURL)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(dctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	}
	du := *u
	du.Path = "/" + name
	return du.String(), drop, nil
}

// postgresSize returns pg_database_size of the database at dbURL.
func postgresSize(ctx context.Context, dbURL string) (int64, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	var n int64
	err = conn.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&n)
	return n, err
}

// redact hides a password in a URL for messages.
func redact(u *url.URL) string {
	return u.Redacted()
}
