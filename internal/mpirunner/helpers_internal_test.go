//go:build cgo

package mpirunner

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecordsRoundTrip(t *testing.T) {
	long := strings.Repeat("x", 400)
	all := append(append(append(record(false, "ignored"), record(true, "")...), record(true, "boom")...), record(true, long)...)
	ranks, first := failures(all)
	assert.Equal(t, []int{1, 2, 3}, ranks)
	assert.Equal(t, "rank 2: boom", first, "rank 1 sent no message")
	_, first = failures(record(true, long))
	assert.Equal(t, "rank 0: "+long[:maxMessage], first, "long messages are cut")
	ranks, first = failures(append(record(false, ""), record(false, "")...))
	assert.Empty(t, ranks)
	assert.Empty(t, first)
}

func TestFirstMessage(t *testing.T) {
	log := `=== RUN   TestX
    x_test.go:12: 
        	Error Trace:	/work/x_test.go:12
        	            				/work/run.go:70
        	Error:      	Not equal: 
        	            	expected: 1
        	Test:       	TestX
        	Messages:   	block 3
    x_test.go:20: second message
--- FAIL: TestX (0.00s)
`
	assert.Equal(t, "x_test.go:12: Error: Not equal: expected: 1 Messages: block 3", firstMessage(strings.NewReader(log)))
	assert.Equal(t, "p_test.go:33: deliberate failure on rank 2",
		firstMessage(strings.NewReader("=== RUN   TestF\n    p_test.go:33: deliberate failure on rank 2\n--- FAIL: TestF\n")))
	assert.Equal(t, "", firstMessage(strings.NewReader("=== RUN   TestF\n")))
	assert.Equal(t, "x.go:1: panic in the test body: boom", firstMessage(strings.NewReader(
		"    x.go:1: panic in the test body: boom\n        goroutine 5 [running]:\n        runtime/debug.Stack()\n")))
}

func TestFailureLinesKeepOnlyFailures(t *testing.T) {
	log := `=== RUN   TestA
    a_test.go:1: chatter of a passing test
--- PASS: TestA (0.00s)
=== RUN   TestB
=== RUN   TestB/sub
    b_test.go:2: boom
    --- FAIL: TestB/sub (0.00s)
--- FAIL: TestB (0.00s)
=== RUN   TestC
--- SKIP: TestC (0.00s)
    c_test.go:3: skipped
FAIL
panic: something after the tests
`
	assert.Equal(t, []string{
		"    b_test.go:2: boom",
		"    --- FAIL: TestB/sub (0.00s)",
		"--- FAIL: TestB (0.00s)",
		"    c_test.go:3: skipped",
		"panic: something after the tests",
	}, failureLines([]byte(log)))
}

func TestDigest(t *testing.T) {
	a := digest([]string{"x", "y"})
	assert.Equal(t, a, digest([]string{"x", "y"}))
	assert.NotEqual(t, a, digest([]string{"xy"}))
	assert.NotZero(t, digest(nil))
}

func TestAgreeTimeoutParsing(t *testing.T) {
	for in, want := range map[string]time.Duration{"": defaultAgreeTimeout, "5s": 5 * time.Second, "2.5": 2500 * time.Millisecond} {
		d, err := parseAgreeTimeout(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, d, in)
	}
	for _, in := range []string{"soon", "-3s", "0"} {
		d, err := parseAgreeTimeout(in)
		assert.ErrorContains(t, err, "bad MPITEST_AGREE_TIMEOUT", in)
		assert.Equal(t, defaultAgreeTimeout, d)
	}
	t.Setenv("MPITEST_AGREE_TIMEOUT", "7s")
	assert.Equal(t, 7*time.Second, agreeTimeout())
}

func TestRankLogMessagesAndReplay(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "log")
	require.NoError(t, err)
	term, err := os.CreateTemp(t.TempDir(), "term")
	require.NoError(t, err)
	l := &rankLog{rank: 5, file: f, term: term}
	f.WriteString("=== RUN   TestOld\n    old.go:1: before\n--- PASS: TestOld (0.00s)\n")
	start := l.offset()
	f.WriteString("=== RUN   TestNew\n    new.go:7: the failure\n--- FAIL: TestNew (0.00s)\n")
	assert.Equal(t, "new.go:7: the failure", l.firstMessageSince(start))
	l.replayLines(l.failureText(), "(note)")
	l.replay() // a second replay prints nothing
	got, err := os.ReadFile(term.Name())
	require.NoError(t, err)
	assert.Equal(t, "[rank 5]     new.go:7: the failure\n[rank 5] --- FAIL: TestNew (0.00s)\n[rank 5] (note)\n", string(got))
}
