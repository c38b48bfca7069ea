package coll

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
)

// Registration is one strategy as the registry holds it: everything the
// file object needs to choose it and run it, so that a new strategy is a
// package that registers itself and nothing else.
type Registration struct {
	// Name is its collio_strategy value.
	Name string
	// New makes the strategy for a file.
	New func(s Setting) Strategy
	// Bid is its say in the automatic choice among the strategies that
	// aggregate (as OMPIO's components answer a file query); nil never
	// bids: the strategy is then chosen by name or by the file object's
	// own rules.
	Bid func(s Situation) Bid
	// Aggregators is its rule when collio picks a call's aggregators; nil
	// keeps those chosen at open.
	Aggregators func(s Situation) AggregatorRule
}

// Registry holds strategies by name. The package functions use one
// process-wide instance that strategy packages register into from init;
// tests build their own.
type Registry struct {
	mu     sync.RWMutex
	byName map[string]Registration
	sorted []Registration // by name; remade at each Register
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byName: make(map[string]Registration)} }

var strategies = NewRegistry()

// Register makes a strategy available in the process-wide registry.
// Strategy packages call it from init; a program gets a strategy by
// importing its package (collio and libcollio import all of them).
func Register(r Registration) { strategies.Register(r) }

// Lookup returns the registered strategy of that name.
func Lookup(name string) (Registration, bool) { return strategies.Lookup(name) }

// Registered returns every registered strategy, sorted by name.
func Registered() []Registration { return strategies.All() }

// Choose is the automatic choice among the registered strategies' bids.
func Choose(s Situation) (name, reason string) { return strategies.Choose(s) }

// Register adds r. An empty name, a missing New or a name registered
// twice is a programming error and panics.
func (g *Registry) Register(r Registration) {
	if r.Name == "" || r.New == nil {
		panic(fmt.Sprintf("coll: Register of strategy %q without a name or a New", r.Name))
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, dup := g.byName[r.Name]; dup {
		panic(fmt.Sprintf("coll: Register called twice for strategy %q", r.Name))
	}
	g.byName[r.Name] = r
	g.sorted = append(g.sorted, r)
	slices.SortFunc(g.sorted, func(a, b Registration) int { return cmp.Compare(a.Name, b.Name) })
}

// Lookup returns the strategy registered under name.
func (g *Registry) Lookup(name string) (Registration, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	r, ok := g.byName[name]
	return r, ok
}

// All returns the registered strategies, sorted by name.
func (g *Registry) All() []Registration {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return slices.Clone(g.sorted)
}

// Choose returns the strategy with the highest bid for s and its reason;
// on a tie the first by name wins, so every rank and every run picks
// the same. No bid at all gives "".
func (g *Registry) Choose(s Situation) (name, reason string) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	best := 0
	for _, r := range g.sorted {
		if r.Bid == nil {
			continue
		}
		if b := r.Bid(s); b.Priority > best {
			best, name, reason = b.Priority, r.Name, b.Reason
		}
	}
	return name, reason
}
