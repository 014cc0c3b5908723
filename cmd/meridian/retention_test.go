package main

import (
	"testing"
	"time"
)

func TestParseRetention(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30d", 30 * day, true},
		{"30", 30 * day, true},
		{" 7D ", 7 * day, true},
		{"12h", 12 * time.Hour, true},
		{"90m", 90 * time.Minute, true},
		{"never", -1, true},
		{"NEVER", -1, true},
		{"0", -1, true},
		{"0d", 0, false},
		{"30s", 0, false},
		{"-1d", 0, false},
		{"36501d", 0, false},
		{"1.5d", 0, false},
		{"", 0, false},
		{"soon", 0, false},
	} {
		got, err := parseRetention(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseRetention(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
