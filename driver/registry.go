package driver

import (
	"fmt"
	"sort"
	"sync"
)

// registry maps driver names to drivers. The package functions use one
// process-wide instance; tests build their own so that they can register
// fakes (even a fake "ufs") without touching the real one.
type registry struct {
	mu      sync.RWMutex
	drivers map[string]Driver
}

func newRegistry() *registry {
	return &registry{drivers: make(map[string]Driver)}
}

var defaultRegistry = newRegistry()

// Register makes d available by its name, both as a path prefix and as a
// detection result. Drivers call it from init. Registering nil, an empty
// name or a name twice is a programming error and panics.
func Register(d Driver) { defaultRegistry.register(d) }

// ByName returns the registered driver with that name.
func ByName(name string) (Driver, bool) { return defaultRegistry.byName(name) }

// Names returns the registered driver names, sorted.
func Names() []string { return defaultRegistry.names() }

func (r *registry) register(d Driver) {
	if d == nil {
		panic("driver: Register of a nil driver")
	}
	name := d.Name()
	if name == "" {
		panic("driver: Register of a driver with an empty name")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.drivers[name]; dup {
		panic(fmt.Sprintf("driver: Register called twice for driver %q", name))
	}
	r.drivers[name] = d
}

func (r *registry) byName(name string) (Driver, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, ok := r.drivers[name]
	return d, ok
}

func (r *registry) names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.drivers))
	for name := range r.drivers {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
