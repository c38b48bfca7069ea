package comm

import "testing"

type named struct{ Comm }

func (named) Name() string { return "n" }

type wrap struct{ Comm }

func (w wrap) Unwrap() Comm { return w.Comm }

func TestAsLooksThroughWrappers(t *testing.T) {
	type namer interface{ Name() string }
	if n, ok := As[namer](wrap{wrap{named{}}}); !ok || n.Name() != "n" {
		t.Fatalf("As through two wrappers: %v %v", n, ok)
	}
	if _, ok := As[namer](wrap{}); ok {
		t.Fatal("As found a namer in a wrapper of nothing")
	}
	if _, ok := As[namer](nil); ok {
		t.Fatal("As found a namer in nil")
	}
}
