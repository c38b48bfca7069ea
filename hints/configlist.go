package hints

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// AnyHost is the host of a cb_config_list entry that matches every host.
const AnyHost = "*"

// AllProcs is the count of a cb_config_list entry that takes every rank of
// the matched hosts ("host:*").
const AllProcs = -1

// ConfigEntry is one entry of a cb_config_list: up to Count aggregators on
// Host.
type ConfigEntry struct {
	Host  string // AnyHost ("*") = any host
	Count int    // AllProcs (-1) = all ranks on the host
}

// ParseConfigList parses ROMIO's cb_config_list grammar: comma-separated
// entries host:n, host:*, *:n, *:* or host (= host:1), with n >= 1. Spaces
// around names and numbers are ignored.
func ParseConfigList(s string) ([]ConfigEntry, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty list")
	}
	parts := strings.Split(s, ",")
	entries := make([]ConfigEntry, 0, len(parts))
	for i, part := range parts {
		e, err := parseConfigEntry(part)
		if err != nil {
			return nil, fmt.Errorf("entry %d %q: %v", i+1, strings.TrimSpace(part), err)
		}
		entries = append(entries, e)
	}
	return entries, nil
}

func parseConfigEntry(part string) (ConfigEntry, error) {
	host, count, hasCount := strings.Cut(part, ":")
	host = strings.TrimSpace(host)
	if host == "" {
		return ConfigEntry{}, fmt.Errorf("missing host name")
	}
	if host != AnyHost && strings.ContainsAny(host, "*: \t") {
		return ConfigEntry{}, fmt.Errorf("bad host name")
	}
	if !hasCount {
		return ConfigEntry{Host: host, Count: 1}, nil
	}
	count = strings.TrimSpace(count)
	if count == "*" {
		return ConfigEntry{Host: host, Count: AllProcs}, nil
	}
	n, err := strconv.Atoi(count)
	if err != nil || n > math.MaxInt32 {
		return ConfigEntry{}, fmt.Errorf("count must be a number or *")
	}
	if n < 1 {
		return ConfigEntry{}, fmt.Errorf("count must be at least 1")
	}
	return ConfigEntry{Host: host, Count: n}, nil
}

// FormatConfigList writes entries in canonical form (host:n, no spaces).
func FormatConfigList(entries []ConfigEntry) string {
	parts := make([]string, len(entries))
	for i, e := range entries {
		count := "*"
		if e.Count != AllProcs {
			count = strconv.Itoa(e.Count)
		}
		parts[i] = e.Host + ":" + count
	}
	return strings.Join(parts, ",")
}
