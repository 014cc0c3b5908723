package store

import (
	"testing"
	"time"
)

func TestSaturatedNeedsArrivingWritesAndABusyWriter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int, busy time.Duration, writes int64) loadSample {
		return loadSample{at: t0.Add(time.Duration(ms) * time.Millisecond), busy: busy, writes: writes}
	}
	for _, tc := range []struct {
		name string
		a, b loadSample
		want bool
	}{
		{"WritesArriveAndTheWriterIsBusyMostOfTheTime", at(0, 0, 10), at(100, 90*time.Millisecond, 80), true},
		{"ExactlyHalfBusyCounts", at(0, time.Second, 10), at(100, time.Second+50*time.Millisecond, 11), true},
		{"AnIdleWriterIsNotSaturated", at(0, 0, 10), at(100, 10*time.Millisecond, 12), false},
		{"ABusyWriterWithoutNewWritesIsTheConsumersOwnWork", at(0, 0, 10), at(100, 100*time.Millisecond, 10), false},
		{"NoTimePassedJudgesNothing", at(100, 0, 10), at(100, 50*time.Millisecond, 20), false},
		{"ASampleFromTheFutureJudgesNothing", at(200, 0, 10), at(100, 50*time.Millisecond, 20), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := saturated(tc.a, tc.b); got != tc.want {
				t.Fatalf("saturated(%+v, %+v) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
		})
	}
}
