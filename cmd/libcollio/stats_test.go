//go:build cgo

package main

import "testing"

func TestStatsPath(t *testing.T) {
	for tmpl, want := range map[string]string{
		"/tmp/x.json":        "/tmp/x.json",
		"/tmp/x.%p.json":     "/tmp/x.4242.json",
		"/tmp/100%%.json":    "/tmp/100%.json",
		"/tmp/%q%":           "/tmp/%q%",
		"%p-%p":              "4242-4242",
		"/tmp/a%%p/b%p.json": "/tmp/a%p/b4242.json",
	} {
		if got := statsPath(tmpl, 4242); got != want {
			t.Errorf("statsPath(%q) = %q, want %q", tmpl, got, want)
		}
	}
}
