package collab

import "testing"

func TestPageLimitDefaultsZeroAndRefusesOutOfRange(t *testing.T) {
	cases := []struct {
		name      string
		n, want   int
		wantValid bool
	}{
		{"zero takes the default", 0, 50, true},
		{"one", 1, 1, true},
		{"the maximum", 500, 500, true},
		{"above the maximum", 501, 501, false},
		{"negative", -1, -1, false},
	}
	for _, c := range cases {
		got, ok := PageLimit(c.n, 50, 500)
		if got != c.want || ok != c.wantValid {
			t.Errorf("%s: PageLimit(%d) = %d, %v; want %d, %v", c.name, c.n, got, ok, c.want, c.wantValid)
		}
	}
}
