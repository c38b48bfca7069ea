package benchutil

import (
	"fmt"
	"strings"

	"github.com/collio/collio/hints"
)

// ParseBytes parses a size as IOR writes them, with hints.ParseSize (a
// number with an optional suffix k, m or g, powers of 1024), after
// dropping a trailing "iB" or "B": "4k", "1m", "64KiB", "1048576".
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "i")
	v, err := hints.ParseSize(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size (a number with an optional k, m or g suffix): %v", s, err)
	}
	if v < 0 {
		return 0, fmt.Errorf("%q is not a size: it is negative", s)
	}
	return v, nil
}

// FormatBytes writes n with the largest binary unit that divides it
// ("4 KiB", "1 MiB", "1000 B"), or with two decimals above 1 MiB when none
// does ("1.50 MiB").
func FormatBytes(n int64) string {
	units := []string{"TiB", "GiB", "MiB", "KiB"}
	for i, u := range units {
		m := int64(1) << (10 * (len(units) - i))
		if n >= m && n%m == 0 {
			return fmt.Sprintf("%d %s", n/m, u)
		}
	}
	if n >= 1<<20 {
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d B", n)
}
