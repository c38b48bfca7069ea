package beegfs

import (
	"testing"
)

// FuzzDecodeStripeInfo feeds arbitrary BEEGFS_IOC_GET_STRIPEINFO answers
// to decodeStripeInfo and layout: a short buffer is an error, never a
// panic, and every answer gives a layout a file can have, unknown when
// there is no pattern or chunk size. Seeds:
// testdata/fuzz/FuzzDecodeStripeInfo.
func FuzzDecodeStripeInfo(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeStripeInfo(b)
		if err != nil {
			if len(b) >= sizeStripeInfo || err.Error() == "" {
				t.Fatalf("%d bytes: %v", len(b), err)
			}
			return
		}
		l := s.layout()
		if l.StripeSize < 0 || l.StripeSize > 1<<32-1 || l.StripeCount < 0 || l.StripeCount > maxNumTargets || l.StartTarget != -1 {
			t.Fatalf("%+v gives %+v", s, l)
		}
		if (s.patternType == patternInvalid || s.chunkSize == 0) != (l.StripeSize == 0) {
			t.Fatalf("%+v gives %+v", s, l)
		}
		if l.StripeSize == 0 && l.StripeCount != 0 {
			t.Fatalf("stripes without a size: %+v", l)
		}
		b2 := make([]byte, sizeStripeInfo)
		hostEndian.PutUint32(b2[offInfoPatternType:], s.patternType)
		hostEndian.PutUint32(b2[offInfoChunkSize:], s.chunkSize)
		hostEndian.PutUint16(b2[offInfoNumTargets:], s.numTargets)
		if again, err := decodeStripeInfo(b2); err != nil || again != s {
			t.Fatalf("round trip: %+v -> %+v, %v", s, again, err)
		}
	})
}
