package events_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian/collab/events"
	"github.com/meridian-catalog/meridian/collab/events/eventstest"
	"github.com/meridian-catalog/meridian/store/drivertest"
)

// BenchmarkDelivery measures, per event, matching and queueing the outbox's table events
// and delivering them to one signed loopback webhook, on each driver (go test -bench
// Delivery). The entity writes are made before the timer starts.
func BenchmarkDelivery(b *testing.B) {
	for _, d := range drivertest.Drivers {
		b.Run(d.Name, func(b *testing.B) {
			f := newFixture(b, d.Open, events.Config{})
			r := eventstest.NewReceiver(b, "bench")
			f.subscribe("bench", r, "svc.db", "")
			for i := range b.N {
				f.table("svc.db.sch", fmt.Sprintf("t%d", i))
			}
			b.ResetTimer()
			f.pump()
			if got := r.Wait(b.N, 30*time.Second); len(got) != b.N {
				b.Fatalf("delivered %d of %d", len(got), b.N)
			}
		})
	}
}
