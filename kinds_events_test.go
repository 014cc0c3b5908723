package meridian

import "testing"

func TestWebhookEndpointRules(t *testing.T) {
	tests := []struct {
		endpoint string
		ok       bool
	}{
		{"https://hooks.example.com/meridian", true},
		{"http://10.0.0.1:8080/h?x=1", true}, // where it may connect is decided on connect
		{"", false},
		{"ftp://example.com/", false},
		{"file:///etc/passwd", false},
		{"https://", false},
		{"//example.com/h", false},
		{"https://user:pw@example.com/h", false},
		{"https://example.com/" + string(make([]byte, 2048)), false},
	}
	for _, tc := range tests {
		if err := ValidateWebhookEndpoint(tc.endpoint); (err == nil) != tc.ok {
			t.Errorf("ValidateWebhookEndpoint(%.40q) = %v, want ok=%v", tc.endpoint, err, tc.ok)
		}
	}
}

func TestEmailAddressRules(t *testing.T) {
	for addr, ok := range map[string]bool{
		"a@example.com": true, "first.last+tag@example.co.uk": true,
		"": false, "not an address": false, "Name <a@example.com>": false, "a@example.com\r\nBcc: b@example.com": false,
		"a@example.com, b@example.com": false,
	} {
		if err := ValidateEmailAddress(addr); (err == nil) != ok {
			t.Errorf("ValidateEmailAddress(%q) = %v, want ok=%v", addr, err, ok)
		}
	}
}

func TestHeaderValueRules(t *testing.T) {
	for v, ok := range map[string]bool{"Bearer abc": true, "a\tb": true, "": true, "a\r\nX: 1": false, "a\x00": false, "a\x7f": false} {
		if got := ValidHeaderValue(v); got != ok {
			t.Errorf("ValidHeaderValue(%q) = %v, want %v", v, got, ok)
		}
	}
}
