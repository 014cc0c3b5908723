package auth

import (
	"context"
	"embed"
	"io/fs"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Token is a stored API token. Only its hash is kept.
type Token struct {
	ID        string // the jti claim
	Hash      string // hex SHA-256 of the raw token
	UserName  string
	Name      string // label shown in token lists
	TokenType string
	CreatedAt int64 // epoch ms
	ExpiresAt int64 // epoch ms; 0: never
	Revoked   bool
}

//go:embed migrations
var migrationFiles embed.FS

// migrations holds sqlite/ and postgres/, as store.Module wants.
var migrations, _ = fs.Sub(migrationFiles, "migrations")

// Module is the store module that owns auth's tables: tokens, and token_invalidations
// (the revocations every server's principal cache follows). Open the catalog database
// with it (sqlite.Open, postgres.Open) before New.
func Module() store.Module {
	return store.Module{Name: "auth", Migrations: migrations}
}

// The token table, reached through the transaction's module seam. Token rows are not
// removed with a user entity: a token of a deleted user is refused by Verify, and a
// user restored keeps its tokens.

const tokenColumns = "id, hash, user_name, name, token_type, created_at, expires_at, revoked"

func scanToken(s store.Scanner) (Token, error) {
	var t Token
	err := s.Scan(&t.ID, &t.Hash, &t.UserName, &t.Name, &t.TokenType, &t.CreatedAt, &t.ExpiresAt, &t.Revoked)
	return t, err
}

// putToken stores a new token. Errors: EConflict (an id or hash already stored).
func putToken(ctx context.Context, db store.SQL, t Token) error {
	n, err := db.Exec(ctx, "INSERT INTO tokens ("+tokenColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT DO NOTHING`, t.ID, t.Hash, t.UserName, t.Name, t.TokenType, t.CreatedAt, t.ExpiresAt, t.Revoked)
	if meridian.ErrorCode(err) == meridian.EConflict || (err == nil && n == 0) {
		return meridian.Errorf(meridian.EConflict, "Token already exists")
	}
	return err
}

// tokenByHash finds a token by its hash. Errors: ENotFound, whose message does not
// repeat the hash.
func tokenByHash(ctx context.Context, db store.SQL, hash string) (Token, error) {
	t, err := scanToken(db.QueryRow(ctx, "SELECT "+tokenColumns+" FROM tokens WHERE hash = $1", hash))
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return Token{}, meridian.Errorf(meridian.ENotFound, "token not found")
	}
	return t, err
}

// invalidationRetention is how long a token_invalidations row is kept: far longer than
// any server takes to read it (every Verify catches up within cachePoll).
const invalidationRetention = time.Hour

// revokeToken marks a token revoked, records its hash in token_invalidations for the
// principal caches of every server, prunes the invalidations older than
// invalidationRetention, and returns the hash. now is epoch ms. Errors: ENotFound.
func revokeToken(ctx context.Context, db store.SQL, id string, now int64) (string, error) {
	var hash string
	err := db.QueryRow(ctx, "SELECT hash FROM tokens WHERE id = $1", id).Scan(&hash)
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return "", meridian.NotFound("token", id)
	}
	if err != nil {
		return "", err
	}
	if _, err := db.Exec(ctx, "UPDATE tokens SET revoked = $1 WHERE id = $2", true, id); err != nil {
		return "", err
	}
	if _, err := db.Exec(ctx, "INSERT INTO token_invalidations (hash, created_at) VALUES ($1, $2)", hash, now); err != nil {
		return "", err
	}
	if _, err := db.Exec(ctx, "DELETE FROM token_invalidations WHERE created_at < $1",
		now-invalidationRetention.Milliseconds()); err != nil {
		return "", err
	}
	return hash, nil
}

// invalidationHead returns the newest token_invalidations sequence number, 0 when none.
func invalidationHead(ctx context.Context, db store.SQL) (int64, error) {
	var seq int64
	err := db.QueryRow(ctx, "SELECT COALESCE(MAX(seq), 0) FROM token_invalidations").Scan(&seq)
	return seq, err
}

// invalidatedHashes returns the hashes of the tokens invalidated after sequence number
// after and up to upTo, oldest first, at most limit of them.
func invalidatedHashes(ctx context.Context, db store.SQL, after, upTo int64, limit int) ([]string, error) {
	rows, err := db.Query(ctx, "SELECT hash FROM token_invalidations WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3",
		after, upTo, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// listTokens lists a user's tokens, oldest first; never nil.
func listTokens(ctx context.Context, db store.SQL, userName string) ([]Token, error) {
	rows, err := db.Query(ctx, "SELECT "+tokenColumns+" FROM tokens WHERE user_name = $1 ORDER BY created_at, id", userName)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Token{}
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
