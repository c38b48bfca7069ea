package lustre

import (
	"testing"
)

// FuzzDecodeLayout feeds arbitrary LL_IOC_LOV_GETSTRIPE answers (plain v1
// and v3, composite with components anywhere) to decodeLayout: it never
// panics or reads outside the buffer, a bad layout is an error that says
// why, and an accepted one is a layout a file can have. Seeds:
// testdata/fuzz/FuzzDecodeLayout.
func FuzzDecodeLayout(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := decodeLayout(b)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if l.StripeSize < 0 || l.StripeSize > 1<<32-1 || l.StripeCount < 0 || l.StripeCount > lovV1InsaneStripeIndex ||
			l.StartTarget < -1 || l.StartTarget >= 0xFFFFFFFF {
			t.Fatalf("decoded %+v", l)
		}
		if l.StartTarget >= 0 && l.StripeCount == 0 {
			t.Fatalf("start target without stripes: %+v", l)
		}
		// What setstripe would send for this layout decodes to it.
		s := setstripe{stripeSize: uint32(l.StripeSize), stripeCount: uint16(l.StripeCount), stripeOffset: lovOffsetDefault}
		again, err := decodeLayout(s.encode())
		if err != nil || again.StripeSize != l.StripeSize || again.StripeCount != l.StripeCount || again.StartTarget != -1 {
			t.Fatalf("%+v re-encoded decodes to %+v, %v", l, again, err)
		}
	})
}
