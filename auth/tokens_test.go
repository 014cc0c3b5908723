package auth

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/drivertest"
)

// TestModule is auth's conformance suite: the tokens table it owns, and the Authority
// over it, on every driver.
func TestModule(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, open drivertest.Open)
	}{
		{"TokensAreFoundByHashListedByUserAndRevoked", testTokenTable},
		{"TokenWritesAreRefusedInAReadOnlyTransaction", testTokenReadOnly},
		{"IssuedTokensVerifyUntilRevoked", testAuthorityRoundTrip},
		{"NewNeedsTheModule", testNewNeedsModule},
	}
	drivertest.Each(t, func(t *testing.T, open drivertest.Open) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) { tc.run(t, open) })
		}
	})
}

// inTx runs fn in a transaction of db and commits it when writable.
func inTx(t *testing.T, db store.Driver, writable bool, fn func(db store.SQL) error) error {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Begin(ctx, writable)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := fn(tx.SQL()); err != nil {
		return err
	}
	if writable {
		return tx.Commit()
	}
	return nil
}

func testTokenTable(t *testing.T, open drivertest.Open) {
	ctx := context.Background()
	db := open(t, Module())
	a := Token{ID: "tk1", Hash: "h1", UserName: "alice", Name: "ci", TokenType: meridian.TokenTypePersonal, CreatedAt: 2, ExpiresAt: 99}
	b := Token{ID: "tk2", Hash: "h2", UserName: "alice", Name: "bot", TokenType: meridian.TokenTypeBot, CreatedAt: 1}
	c := Token{ID: "tk3", Hash: "h3", UserName: "bob", CreatedAt: 1}
	err := inTx(t, db, true, func(db store.SQL) error {
		for _, tk := range []Token{a, b, c} {
			if err := putToken(ctx, db, tk); err != nil {
				return err
			}
		}
		return revokeHash(ctx, db, "tk1")
	})
	if err != nil {
		t.Fatal(err)
	}
	a.Revoked = true
	_ = inTx(t, db, false, func(db store.SQL) error {
		got, err := tokenByHash(ctx, db, "h1")
		if err != nil || !reflect.DeepEqual(got, a) {
			t.Errorf("tokenByHash: %+v, %v", got, err)
		}
		_, err = tokenByHash(ctx, db, "nope")
		if meridian.ErrorCode(err) != meridian.ENotFound || meridian.ErrorMessage(err) != "token not found" {
			t.Errorf("tokenByHash of a missing hash: %v", err)
		}
		list, err := listTokens(ctx, db, "alice")
		if err != nil || !reflect.DeepEqual(list, []Token{b, a}) {
			t.Errorf("listTokens: %+v, %v", list, err)
		}
		if list, err := listTokens(ctx, db, "carol"); err != nil || list == nil || len(list) != 0 {
			t.Errorf("listTokens of a user without any: %#v, %v", list, err)
		}
		return nil
	})
	for _, tt := range []struct {
		name string
		fn   func(db store.SQL) error
		code string
	}{
		{"revoke missing", func(db store.SQL) error { return revokeHash(ctx, db, "zz") }, meridian.ENotFound},
		{"duplicate hash", func(db store.SQL) error { return putToken(ctx, db, Token{ID: "tk9", Hash: "h1"}) }, meridian.EConflict},
		{"duplicate id", func(db store.SQL) error { return putToken(ctx, db, Token{ID: "tk1", Hash: "h9"}) }, meridian.EConflict},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := inTx(t, db, true, tt.fn); meridian.ErrorCode(err) != tt.code {
				t.Errorf("error %v, want code %s", err, tt.code)
			}
		})
	}
}

// revokeHash revokes a token by id, as Revoke does.
func revokeHash(ctx context.Context, db store.SQL, id string) error {
	_, err := revokeToken(ctx, db, id, time.Now().UnixMilli())
	return err
}

func testTokenReadOnly(t *testing.T, open drivertest.Open) {
	ctx := context.Background()
	db := open(t, Module())
	for name, fn := range map[string]func(db store.SQL) error{
		"put":    func(db store.SQL) error { return putToken(ctx, db, Token{ID: "t", Hash: "h"}) },
		"revoke": func(db store.SQL) error { return revokeHash(ctx, db, "t") },
	} {
		if err := inTx(t, db, false, fn); err == nil {
			t.Errorf("%s in a read-only transaction succeeded", name)
		}
	}
	_ = inTx(t, db, false, func(db store.SQL) error {
		if list, _ := listTokens(ctx, db, ""); len(list) != 0 {
			t.Errorf("a read-only transaction wrote %v", list)
		}
		return nil
	})
}

func testAuthorityRoundTrip(t *testing.T, open drivertest.Open) {
	ctx := context.Background()
	db := open(t, Module())
	addUser(t, db, aliceID, "alice", `{"name":"alice","roles":["DataSteward"]}`)
	a, err := New(ctx, db, testIssuer)
	if err != nil {
		t.Fatal(err)
	}
	raw, tok, err := a.Issue(ctx, Subject{ID: aliceID, Name: "alice"}, meridian.TokenTypePersonal, time.Hour, "laptop")
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.Verify(ctx, raw)
	if err != nil || p.Name != "alice" || p.ID != "6f1c1f0e-0b7e-4d43-9a0e-7a6f3b6c9f01" || !p.HasRole(meridian.RoleDataSteward) {
		t.Fatalf("Verify = %+v, %v", p, err)
	}
	list, err := a.Tokens(ctx, "alice")
	if err != nil || len(list) != 1 || list[0] != tok || tok.Name != "laptop" || tok.Hash != hashToken(raw) {
		t.Fatalf("Tokens = %+v, %v; issued %+v", list, err, tok)
	}
	if err := a.Revoke(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Verify(ctx, raw); meridian.ErrorMessage(err) != "Token has been revoked" {
		t.Fatalf("Verify after Revoke = %v", err)
	}
	if err := a.Revoke(ctx, "no-such-token"); meridian.ErrorCode(err) != meridian.ENotFound {
		t.Fatalf("Revoke of a missing token = %v", err)
	}
}

func testNewNeedsModule(t *testing.T, open drivertest.Open) {
	_, err := New(context.Background(), open(t), testIssuer)
	if err == nil {
		t.Fatal("New accepted a store opened without auth's module")
	}
}
