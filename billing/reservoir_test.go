package billing

import "testing"

func TestPercentilesStayBoundedAndClose(t *testing.T) {
	var r reservoir
	const n = 3 * maxLatencySamples
	for i := int64(1); i <= n; i++ {
		r.add(i)
	}
	if len(r.vals) != maxLatencySamples {
		t.Fatalf("kept %d values, want %d", len(r.vals), maxLatencySamples)
	}
	p50, p95 := r.percentiles()
	if p50 < n*48/100 || p50 > n*52/100 || p95 < n*93/100 || p95 > n*97/100 {
		t.Errorf("p50 %d, p95 %d of 1..%d", p50, p95, n)
	}
	var small reservoir
	for _, v := range []int64{5, 1, 3, 2, 4} {
		small.add(v)
	}
	if p50, p95 := small.percentiles(); p50 != 3 || p95 != 5 {
		t.Errorf("exact percentiles of 1..5 = %d, %d", p50, p95)
	}
}
