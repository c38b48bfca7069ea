package benchutil

import "time"

// Compute spends d as an application's compute phase would: asleep, or
// spinning on the calling thread (busy), which competes with background
// work such as the E10 cache's copies for the CPU.
func Compute(d time.Duration, busy bool) {
	if !busy {
		time.Sleep(d)
		return
	}
	x := uint64(1)
	for end := time.Now().Add(d); time.Now().Before(end); {
		for range 1000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	computeSink = x
}

var computeSink uint64 // keeps the busy loop from being optimised away
