package main

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/meridian-catalog/meridian/bench/benchenv"
)

// throwawayDB creates a meridian_bench_<random> database on the server at adminURL
// and returns its URL and a function that drops it.
func throwawayDB(ctx context.Context, adminURL string) (string, func(), error) {
	return benchenv.ThrowawayDB(ctx, adminURL, "meridian_bench_")
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
