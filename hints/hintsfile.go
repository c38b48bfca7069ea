package hints

import (
	"fmt"
	"strings"
)

// fileLine is one "key value" line of a system hints file.
type fileLine struct {
	line       int
	key, value string
}

// parseHintsFile reads ROMIO's system hints format: one "key value" per
// line, key and value separated by spaces or tabs, lines starting with #
// are comments, blank lines are skipped. The value is the rest of the line
// (trimmed), so a value may contain spaces. Lines without a value are
// returned as problems naming the file and line.
func parseHintsFile(name string, data []byte) (lines []fileLine, problems []string) {
	for i, raw := range strings.Split(string(data), "\n") {
		text := strings.TrimSpace(raw)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		key, value := text, ""
		if sep := strings.IndexAny(text, " \t"); sep >= 0 {
			key, value = text[:sep], strings.TrimSpace(text[sep+1:])
		}
		if value == "" {
			problems = append(problems, fmt.Sprintf("%s line %d: %q has no value (expected \"key value\")", name, i+1, text))
			continue
		}
		lines = append(lines, fileLine{line: i + 1, key: key, value: value})
	}
	return lines, problems
}
