package schema

import (
	"regexp"
	"testing"
)

// samePatternAnswers are strings on which a coded pattern must answer as its regular
// expression does.
var samePatternAnswers = []string{
	"", "a", ":", "::", ":::", "a:", "a::", ":a", "::a", "a:b", "a::b", "a:b:c", "a:b::c",
	"orders", "raw_customer_daily_12", "x: y", "a\n::", "a:\nb", "\xff::", "\xff:", "日本:語", "日本::語",
}

func TestCodedPatternsMatchAsTheirExpressions(t *testing.T) {
	for expr, match := range codedPatterns {
		re := regexp.MustCompile(expr)
		for _, s := range samePatternAnswers {
			if got, want := match(s), re.MatchString(s); got != want {
				t.Errorf("pattern %s on %q: coded %v, regexp %v", expr, s, got, want)
			}
		}
	}
}

func TestCompilePatternUsesGoRegexpForOtherPatterns(t *testing.T) {
	p, err := compilePattern(`^[a-z]+$`)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.(*regexp.Regexp); !ok || !p.MatchString("abc") || p.MatchString("ab1") {
		t.Fatalf("compilePattern(^[a-z]+$) = %T, not Go's regexp", p)
	}
	if _, err := compilePattern(`(`); err == nil {
		t.Fatal("an invalid expression compiled")
	}
}

func TestCodedPatternReportsItsExpression(t *testing.T) {
	for expr := range codedPatterns {
		p, err := compilePattern(expr)
		if err != nil {
			t.Fatal(err)
		}
		if _, coded := p.(codedPattern); !coded || p.String() != expr {
			t.Errorf("compilePattern(%s) = %T %q", expr, p, p.String())
		}
	}
}

// FuzzCodedPatternsMatchAsTheirExpressions checks every coded pattern against its
// regular expression on any string.
func FuzzCodedPatternsMatchAsTheirExpressions(f *testing.F) {
	for _, s := range samePatternAnswers {
		f.Add(s)
	}
	type pair struct {
		re    *regexp.Regexp
		match func(string) bool
	}
	var pairs []pair
	for expr, match := range codedPatterns {
		pairs = append(pairs, pair{regexp.MustCompile(expr), match})
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range pairs {
			if got, want := p.match(s), p.re.MatchString(s); got != want {
				t.Fatalf("pattern %s on %q: coded %v, regexp %v", p.re, s, got, want)
			}
		}
	})
}
