package store

import (
	"testing"

	"github.com/meridian-catalog/meridian"
)

func TestMaskCredentialsHidesOnlyThePassword(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://user:pass@host:5432/db", "postgres://user:" + Mask + "@host:5432/db"},
		{"mysql://u:p%40ss@h/db?sslmode=require", "mysql://u:" + Mask + "@h/db?sslmode=require"},
		{"user:secret@tcp(localhost:3306)/sales", "user:" + Mask + "@tcp(localhost:3306)/sales"},
		{"host=db user=svc password=s3cret dbname=x", "host=db user=svc password=" + Mask + " dbname=x"},
		{"Server=db;Uid=svc;Pwd=s3cret;", "Server=db;Uid=svc;Pwd=" + Mask + ";"},
		{"https://host/path?token=x&password=y", "https://host/path?token=x&password=" + Mask},
		{"https://wiki.example.com/space", "https://wiki.example.com/space"},
		{"postgres://user@host/db", "postgres://user@host/db"},
		{"alice@example.com", "alice@example.com"},
		{"a note: see user@host", "a note: see user@host"},
	}
	for _, tt := range tests {
		if got := maskCredentials(tt.in); got != tt.want {
			t.Errorf("maskCredentials(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSecretRulesClassifyDeclaredNamedAndURLValues(t *testing.T) {
	r := newSecretRules([]string{"connection/config/password", "connection/config/headers/*"})
	tests := []struct {
		path []string
		v    any
		want secretClass
	}{
		{[]string{"connection", "config", "password"}, "x", wholeSecret},
		{[]string{"connection", "config", "headers", "X-Api"}, "x", wholeSecret},
		{[]string{"connection", "config", "auth", "pwd"}, "x", wholeSecret},
		{[]string{"connection", "config", "credentials", "clientId"}, "x", wholeSecret},
		{[]string{"connection", "config", "client_secret"}, 42.0, wholeSecret},
		{[]string{"connection", "config", "tokenUrl"}, "https://idp/token", notSecret},
		{[]string{"connection", "config", "dsn"}, "postgres://u:p@h/db", urlSecret},
		{[]string{"connection", "config", "username"}, "svc", notSecret},
		{[]string{"connection", "config", "password"}, "", notSecret},
		{[]string{"connection", "config", "x"}, unreadable("enc:bad"), wholeSecret},
	}
	for _, tt := range tests {
		if got := r.classify(tt.path, tt.v); got != tt.want {
			t.Errorf("classify(%v, %v) = %v, want %v", tt.path, tt.v, got, tt.want)
		}
	}
}

func TestRedactMasksSecretsInChangeDescriptions(t *testing.T) {
	r := newSecretRules([]string{"connection/config/password"})
	cd := meridian.ChangeDescription{FieldsUpdated: []meridian.FieldChange{{Name: "connection",
		OldValue: `{"config":{"password":"old","dsn":"pg://u:old2@h/d"}}`, NewValue: `{"config":{"password":"new"}}`}}}
	r.redact(&cd)
	fc := cd.FieldsUpdated[0]
	if fc.OldValue != `{"config":{"dsn":"pg://u:`+Mask+`@h/d","password":"`+Mask+`"}}` || fc.NewValue != `{"config":{"password":"`+Mask+`"}}` {
		t.Fatalf("redacted change = %+v", fc)
	}
}
