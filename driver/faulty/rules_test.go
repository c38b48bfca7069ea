package faulty

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRules(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Rule
		str  string // canonical form, "" = in
	}{
		{"", nil, ""},
		{" ; ;", nil, ""},
		{"enospc_after=1048576", []Rule{NoSpaceAfter(1 << 20)}, ""},
		{"enospc_after=1m", []Rule{NoSpaceAfter(1 << 20)}, "enospc_after=1048576"},
		{"enospc_process_after=0", []Rule{NoSpaceAfterProcess(0)}, ""},
		{"eio_call=write:3", []Rule{EIOOnCall(OpWrite, 3)}, ""},
		{"eio_call=sync:1+", []Rule{EIOFromCall(OpSync, 1)}, ""},
		{"eio_call=*:7", []Rule{EIOOnCall(OpAny, 7)}, ""},
		{"eio_call=open:1", []Rule{EIOOnCall(OpOpen, 1)}, ""},
		{"eio_offset=4096", []Rule{EIOAt(4096)}, ""},
		{"eio_offset=4k", []Rule{EIOAt(4096)}, "eio_offset=4096"},
		{"short_write=2", []Rule{ShortWriteOnCall(2)}, ""},
		{"short_write=2+", []Rule{{Kind: ShortWrite, Call: 2, AndLater: true}}, ""},
		{"slow=write:50ms", []Rule{SlowCalls(OpWrite, 50*time.Millisecond)}, ""},
		{" slow = read : 1s ; eio_offset=0;", []Rule{SlowCalls(OpRead, time.Second), EIOAt(0)}, "slow=read:1s;eio_offset=0"},
		{"crash=write:3", []Rule{CrashOnCall(OpWrite, 3)}, ""},
		{"crash = * : 1", []Rule{CrashOnCall(OpAny, 1)}, "crash=*:1"},
		{"enospc_after=10;eio_call=allocate:2;short_write=1",
			[]Rule{NoSpaceAfter(10), EIOOnCall(OpAllocate, 2), ShortWriteOnCall(1)}, ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseRules(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			want := tc.str
			if want == "" {
				want = tc.in
			}
			if len(got) > 0 {
				assert.Equal(t, want, join(got))
			}
			for _, r := range got {
				assert.NoError(t, r.Validate())
				again, err := ParseRules(r.String())
				require.NoError(t, err)
				assert.Equal(t, []Rule{r}, again)
			}
		})
	}
}

func join(rules []Rule) string {
	s := ""
	for i, r := range rules {
		if i > 0 {
			s += ";"
		}
		s += r.String()
	}
	return s
}

func TestParseRulesErrors(t *testing.T) {
	for _, tc := range []struct{ in, rule, reason string }{
		{"enospc_after", "enospc_after", "name=value"},
		{"enospc_after=", "enospc_after=", "name=value"},
		{"enospc_after=-1", "enospc_after=-1", "byte count"},
		{"enospc_after=lots", "enospc_after=lots", "byte count"},
		{"eio_offset=1x", "eio_offset=1x", "byte count"},
		{"eio_call=write", "eio_call=write", "OP:K"},
		{"eio_call=wirte:3", "eio_call=wirte:3", `unknown operation "wirte"`},
		{"eio_call=write:0", "eio_call=write:0", "call number"},
		{"eio_call=write:x", "eio_call=write:x", "call number"},
		{"short_write=0", "short_write=0", "call number"},
		{"short_write=2++", "short_write=2++", "call number"},
		{"slow=write", "slow=write", "OP:DURATION"},
		{"slow=write:fast", "slow=write:fast", "duration"},
		{"slow=write:-1s", "slow=write:-1s", "duration"},
		{"slow=flush:1s", "slow=flush:1s", "unknown operation"},
		{"crash=write", "crash=write", "OP:K"},
		{"crash=write:0", "crash=write:0", "call number"},
		{"crash=write:2+", "crash=write:2+", "call number >= 1"},
		{"crash=flush:1", "crash=flush:1", "unknown operation"},
		{"eio_call=write:1;explode=1", "explode=1", "unknown fault"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseRules(tc.in)
			var re *RuleError
			require.True(t, errors.As(err, &re), "%v", err)
			assert.Equal(t, tc.rule, re.Rule)
			assert.Contains(t, re.Reason, tc.reason)
			assert.Contains(t, err.Error(), `"`+tc.rule+`"`)
		})
	}
}

func TestValidate(t *testing.T) {
	for _, r := range []Rule{
		{}, {Kind: 99}, NoSpaceAfter(-1), EIOAt(-5), EIOOnCall(OpWrite, 0), EIOOnCall("flush", 1),
		ShortWriteOnCall(0), SlowCalls("nope", time.Second), SlowCalls(OpRead, -time.Second),
		CrashOnCall(OpWrite, 0), CrashOnCall("flush", 1), {Kind: Crash, Op: OpWrite, Call: 1, AndLater: true},
	} {
		assert.Error(t, r.Validate(), "%#v", r)
	}
	assert.Panics(t, func() { New(nil) })
}

func TestParseRanks(t *testing.T) {
	for in, want := range map[string][]int{"": nil, " ": nil, "0": {0}, "1, 3,5": {1, 3, 5}} {
		got, err := parseRanks(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"a", "1,,2", "-1", "1;2"} {
		_, err := parseRanks(in)
		assert.Error(t, err, in)
	}
}
