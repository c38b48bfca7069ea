package commpool

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
)

// fakeComm records its Free into log; other methods are not used.
type fakeComm struct {
	comm.Comm
	name string
	log  *[]string
	err  error
}

func (c fakeComm) Free() error {
	*c.log = append(*c.log, "free "+c.name)
	return c.err
}

type fakeValue struct {
	name string
	log  *[]string
}

func (v fakeValue) Release() error {
	*v.log = append(*v.log, "release "+v.name)
	return nil
}

func TestPoolReusesTheLastEntryPutBack(t *testing.T) {
	var log []string
	p := new(Pool)
	reuse, next := p.Candidate()
	assert.Zero(t, reuse)
	assert.Equal(t, int64(1), next)

	a := NewEntry(fakeComm{name: "a", log: &log}, 1)
	p.Made(1)
	b := NewEntry(fakeComm{name: "b", log: &log}, 2)
	p.Made(2)
	_, next = p.Candidate()
	assert.Equal(t, int64(3), next, "IDs keep growing")

	require.True(t, p.Put(a))
	require.True(t, p.Put(b))
	reuse, _ = p.Candidate()
	assert.Equal(t, int64(2), reuse, "the most recently closed first")
	assert.Same(t, b, p.Take(2))
	assert.Nil(t, p.Take(2), "taken once")
	reuse, _ = p.Candidate()
	assert.Equal(t, int64(1), reuse)
	assert.Same(t, a, p.Take(1))
	assert.Empty(t, log, "nothing freed while pooled")
}

func TestPoolRefusesPastMaxIdle(t *testing.T) {
	var log []string
	p := new(Pool)
	for i := range MaxIdle {
		require.True(t, p.Put(NewEntry(fakeComm{log: &log}, int64(i+1))))
	}
	assert.False(t, p.Put(NewEntry(fakeComm{log: &log}, 99)), "the caller releases the extra one")
}

func TestReleaseFreesValuesNewestFirstThenTheComm(t *testing.T) {
	var log []string
	e := NewEntry(fakeComm{name: "dup", log: &log}, 1)
	assert.Nil(t, e.Value("w"))
	e.SetValue("w", fakeValue{"window", &log})
	e.SetValue("n", fakeValue{"nodes", &log})
	e.SetValue("w", fakeValue{"window2", &log}) // replaces, keeps its place
	assert.Equal(t, fakeValue{"window2", &log}, e.Value("w"))
	require.NoError(t, e.Release())
	assert.Equal(t, []string{"release nodes", "release window2", "free dup"}, log)
}

func TestReleaseJoinsErrors(t *testing.T) {
	var log []string
	e := NewEntry(fakeComm{name: "dup", log: &log, err: errors.New("boom")}, 1)
	assert.ErrorContains(t, e.Release(), "boom")
}

func TestPoolReleaseOldestFirstAndRefusesLaterPuts(t *testing.T) {
	var log []string
	p := new(Pool)
	p.Put(NewEntry(fakeComm{name: "a", log: &log}, 1))
	p.Put(NewEntry(fakeComm{name: "b", log: &log}, 2))
	require.NoError(t, p.Release(true))
	assert.Equal(t, []string{"free a", "free b"}, log)
	assert.False(t, p.Put(NewEntry(fakeComm{name: "c", log: &log}, 3)))
	reuse, _ := p.Candidate()
	assert.Zero(t, reuse)
}

func TestPoolReleaseWhileFinalizingMakesNoCalls(t *testing.T) {
	var log []string
	p := new(Pool)
	p.Put(NewEntry(fakeComm{name: "a", log: &log}, 1))
	require.NoError(t, p.Release(false))
	assert.Empty(t, log)
}

func TestPoisonDropsEntriesWithoutCalls(t *testing.T) {
	var log []string
	p := new(Pool)
	p.Put(NewEntry(fakeComm{name: "a", log: &log}, 1))
	p.Poison()
	reuse, _ := p.Candidate()
	assert.Zero(t, reuse)
	assert.False(t, p.Put(NewEntry(fakeComm{name: "b", log: &log}, 2)))
	require.NoError(t, p.Release(true))
	assert.Empty(t, log)
}

// keeper wraps a communicator that keeps a pool, as shapedComm does.
type keeper struct {
	comm.Comm
	p *Pool
}

func (k keeper) Pool() *Pool { return k.p }

type wrapper struct{ comm.Comm }

func (w wrapper) Unwrap() comm.Comm { return w.Comm }

func TestOfLooksThroughWrappers(t *testing.T) {
	p := new(Pool)
	assert.Same(t, p, Of(wrapper{keeper{p: p}}))
	assert.Nil(t, Of(wrapper{fakeComm{}}))
	assert.Nil(t, Of(nil))
}
