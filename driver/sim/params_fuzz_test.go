package sim

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzDecodeParams feeds arbitrary sidecar files (a sim file's striping
// and speed, read at every open) to decodeParams: a bad one is an
// *os.PathError saying the file is corrupt and why, and an accepted one
// is a sane layout that survives a round trip. Seeds:
// testdata/fuzz/FuzzDecodeParams.
func FuzzDecodeParams(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := decodeParams("f.sim", data)
		if err != nil {
			var pe *os.PathError
			if !errors.As(err, &pe) || pe.Path != "f.sim" || !strings.Contains(err.Error(), "corrupt sim parameter file: ") {
				t.Fatalf("error %#v", err)
			}
			return
		}
		if p.stripeSize < 1 || p.stripeCount < 1 || p.stripeCount > maxTargets || p.startTarget < 0 ||
			p.startTarget >= p.stripeCount || p.bandwidth < 0 || p.latency < 0 || p.lockLatency < 0 {
			t.Fatalf("accepted %+v", p)
		}
		again, err := decodeParams("f.sim", p.encode())
		if err != nil || again != p {
			t.Fatalf("round trip: %+v -> %+v, %v", p, again, err)
		}
	})
}

// A line longer than the scanner's buffer is an error, not the end of
// the file.
func TestDecodeParamsLongLine(t *testing.T) {
	p := params{stripeSize: 1 << 20, stripeCount: 4, bandwidth: 1 << 30}
	data := append(p.encode(), strings.Repeat("x", 1<<17)...)
	if _, err := decodeParams("f.sim", data); err == nil || !strings.Contains(err.Error(), "token too long") {
		t.Fatalf("long line: %v", err)
	}
}
