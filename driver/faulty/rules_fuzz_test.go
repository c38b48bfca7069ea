package faulty

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// FuzzParseRules: any collio_fault string parses to rules that validate
// and print back to themselves, or fails with a *RuleError naming the rule
// and the reason; never a panic. Seeds: testdata/fuzz/FuzzParseRules.
func FuzzParseRules(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		rules, err := ParseRules(s)
		if err != nil {
			var re *RuleError
			if !errors.As(err, &re) || re.Reason == "" || re.Rule == "" {
				t.Fatalf("%q: error %#v is not a *RuleError with a rule and a reason", s, err)
			}
			if !strings.Contains(s, re.Rule) {
				t.Fatalf("%q: the error names rule %q, which is not in the input", s, re.Rule)
			}
			return
		}
		if len(rules) > strings.Count(s, ";")+1 {
			t.Fatalf("%q: %d rules", s, len(rules))
		}
		var texts []string
		for _, r := range rules {
			if err := r.Validate(); err != nil {
				t.Fatalf("%q: parsed rule %+v does not validate: %v", s, r, err)
			}
			texts = append(texts, r.String())
		}
		again, err := ParseRules(strings.Join(texts, ";"))
		if err != nil || !slices.Equal(again, rules) {
			t.Fatalf("%q: %v printed as %q parses to %v, %v", s, rules, texts, again, err)
		}
	})
}

// FuzzParseRanks: collio_fault_ranks gives non-negative ranks or an error
// naming the bad entry. Seeds: testdata/fuzz/FuzzParseRanks.
func FuzzParseRanks(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		ranks, err := parseRanks(s)
		if err != nil {
			if !strings.Contains(err.Error(), "is not a rank") {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if len(ranks) > strings.Count(s, ",")+1 {
			t.Fatalf("%q: %d ranks", s, len(ranks))
		}
		for _, r := range ranks {
			if r < 0 {
				t.Fatalf("%q: rank %d", s, r)
			}
		}
	})
}
