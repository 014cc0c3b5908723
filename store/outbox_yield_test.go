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

func TestLoadHistoryJudgesABurstOverItsSpan(t *testing.T) {
	t0 := time.Unix(1000, 0)
	// window is one yieldWindow's load: the share of it the writer was busy, and whether
	// entity writes arrived in it.
	type window struct {
		busy   float64
		writes bool
	}
	busy, quiet, idle := window{0.9, true}, window{0.1, true}, window{0, false}
	repeat := func(w window, n int) []window {
		out := make([]window, n)
		for i := range out {
			out[i] = w
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		windows []window
		want    bool // the judgement after the last window
	}{
		{"ABusyWindowIsSaturated", []window{busy}, true},
		{"AQuietWindowInsideABurstKeepsItSaturated", append(repeat(busy, 5), quiet), true},
		{"TwoQuietWindowsInsideABurstKeepIt", append(repeat(busy, 8), quiet, quiet), true},
		{"AQuietSecondEndsIt", append(repeat(busy, 8), repeat(quiet, 10)...), false},
		{"AnIdleWriterAfterTheBurstEndsItWithinTheSpan", append(repeat(busy, 8), repeat(idle, 11)...), false},
		{"OneBusyWindowInAQuietSecondIsSaturatedWhileItLasts", append(repeat(quiet, 10), busy), true},
		{"AndNotAfterIt", append(repeat(quiet, 10), busy, quiet), false},
		{"OrdinaryWritesNeverAre", repeat(quiet, 30), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h loadHistory
			cur := loadSample{at: t0}
			h.add(cur)
			var got bool
			for _, w := range tc.windows {
				cur.at = cur.at.Add(yieldWindow)
				cur.busy += time.Duration(w.busy * float64(yieldWindow))
				if w.writes {
					cur.writes++
				}
				got = h.add(cur)
			}
			if got != tc.want {
				t.Fatalf("saturated = %v, want %v", got, tc.want)
			}
			if span := cur.at.Sub(h[0].at); len(tc.windows) > 12 && span > yieldSpan+yieldWindow {
				t.Fatalf("the history spans %v, want at most %v", span, yieldSpan+yieldWindow)
			}
		})
	}
}
