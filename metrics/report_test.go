package metrics

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestCountersFieldsMatchKind(t *testing.T) {
	var c Counters
	var k Kind
	if len(c.fields()) != len(k.stats()) {
		t.Fatalf("Counters has %d fields, Kind %d stats", len(c.fields()), len(k.stats()))
	}
	// Every field is listed once: setting field i through the list sets a
	// distinct value.
	for i, p := range c.fields() {
		*p = int64(i + 1)
	}
	seen := map[int64]bool{}
	for _, p := range c.fields() {
		if seen[*p] {
			t.Fatalf("a field is listed twice: %+v", c)
		}
		seen[*p] = true
	}
	if c.Calls != 1 || c.BytesRecv != int64(len(c.fields())) {
		t.Fatalf("order: %+v", c)
	}
}

func TestEncodeDecode(t *testing.T) {
	var fc FileCounters
	fc.AddCollective(Call{Op: "write_at_all", Bytes: 100, Rounds: 2, Aggregator: true, Plan: 3, IO: 4, IOWait: 5, Total: 9, MsgsSent: 7, BytesSent: -1}, 12)
	fc.AddCollective(Call{Op: "read_all", Bytes: 50, Total: 1}, 3)
	fc.AddIndependent(true, 10, 1, 2*time.Millisecond, false)
	fc.AddIndependent(false, 0, 0, 0, true)
	fc.AddFailedCollective(true)
	fc.Open = time.Second
	b := fc.Encode()
	if len(b) != FileCountersSize {
		t.Fatalf("encoded %d bytes, want %d", len(b), FileCountersSize)
	}
	got, err := DecodeFileCounters(b)
	if err != nil {
		t.Fatal(err)
	}
	if got != fc {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, fc)
	}
	if _, err := DecodeFileCounters(b[1:]); err == nil {
		t.Fatal("a short record decoded")
	}
	w := fc.Kinds[CollectiveWrite]
	if w.Calls != 1 || w.Failed != 1 || w.Pieces != 12 || w.AggregatorCalls != 1 || w.Rounds != 2 {
		t.Fatalf("collective writes: %+v", w)
	}
	if r := fc.Kinds[CollectiveRead]; r.Calls != 1 || r.Bytes != 50 {
		t.Fatalf("collective reads: %+v", r)
	}
	if iw, ir := fc.Kinds[IndependentWrite], fc.Kinds[IndependentRead]; iw.Calls != 1 || iw.Total != 2*time.Millisecond || ir.Calls != 0 || ir.Failed != 1 {
		t.Fatalf("independent: %+v %+v", iw, ir)
	}
}

func TestCollectiveKinds(t *testing.T) {
	var fc FileCounters
	for _, op := range []string{"read_at_all", "iread_at_all", "read_all", "iread_all", "read_all_begin", "read_ordered"} {
		fc.AddCollective(Call{Op: op, Bytes: 1}, 1)
	}
	for _, op := range []string{"write_at_all", "iwrite_at_all", "write_all", "iwrite_all", "write_at_all_begin", "write_ordered"} {
		fc.AddCollective(Call{Op: op, Bytes: 2}, 1)
	}
	if r, w := fc.Kinds[CollectiveRead], fc.Kinds[CollectiveWrite]; r.Calls != 6 || r.Bytes != 6 || w.Calls != 6 || w.Bytes != 12 {
		t.Fatalf("reads %+v, writes %+v", r, w)
	}
}

func TestStrategiesGroup(t *testing.T) {
	var s Strategies
	for i := int64(1); i <= 10000; i++ {
		c := Call{Op: "write_all", Strategy: "twophase", Reason: "several nodes", Domains: fmt.Sprint("even ", i)}
		if i%1000 == 0 {
			c.Strategy, c.Reason = "independent", "romio_cb_write=disable"
		}
		s.Add(i, c)
	}
	if len(s.Groups) != 2 {
		t.Fatalf("%d groups: %+v", len(s.Groups), s.Groups)
	}
	g := s.Groups[0]
	if g.Calls != 9990 || fmt.Sprint(g.First) != "[1 2 3 4 5]" || g.Domains != "even 1" {
		t.Fatalf("first group: %+v", g)
	}
	if g := s.Groups[1]; g.Calls != 10 || fmt.Sprint(g.First) != "[1000 2000 3000 4000 5000]" {
		t.Fatalf("second group: %+v", g)
	}

	// Reasons beyond MaxStrategyGroups fold into one group per op and strategy.
	var many Strategies
	for i := int64(1); i <= 100; i++ {
		many.Add(i, Call{Op: "write_all", Strategy: "independent", Reason: fmt.Sprint("density ", i)})
	}
	if len(many.Groups) != MaxStrategyGroups+1 {
		t.Fatalf("%d groups", len(many.Groups))
	}
	last := many.Groups[MaxStrategyGroups]
	if last.Reason != OtherReasons || last.Calls != 100-MaxStrategyGroups || last.First[0] != MaxStrategyGroups+1 {
		t.Fatalf("overflow group: %+v", last)
	}
}

func sampleReport() FileReport {
	ranks := make([]FileCounters, 4)
	var s Strategies
	for r := range ranks {
		fc := &ranks[r]
		fc.Open = time.Duration(20+r) * time.Millisecond
		for i := int64(1); i <= 3; i++ {
			c := Call{Op: "write_at_all", Strategy: "twophase", Reason: "accesses interleave; several nodes: two-phase",
				Bytes: 1 << 20, Rounds: 1, Aggregator: r%2 == 0, Plan: time.Millisecond, ReqExchange: 2 * time.Millisecond,
				Shuffle: 3 * time.Millisecond, IO: time.Duration(4+r) * time.Millisecond, IOWait: time.Millisecond,
				Total: 10 * time.Millisecond, MsgsSent: 3, BytesSent: 3 << 18}
			if i == 2 {
				c.Strategy, c.Reason = "independent", "romio_cb_write=disable"
			}
			if r == 1 {
				c.Publish = 2 * time.Millisecond
			}
			fc.AddCollective(c, 256)
			if r == 0 {
				s.Add(i, c)
			}
		}
		fc.AddIndependent(true, int64(r)<<20, int64(r), time.Millisecond, false)
	}
	return Aggregate("out.dat", "/run/out.dat", ranks, s.Groups)
}

func TestAggregate(t *testing.T) {
	rep := sampleReport()
	cw := rep.CollectiveWrite
	if rep.Ranks != 4 || cw.Calls != (Stat{12, 3, 3}) || cw.Bytes != (Stat{12 << 20, 3 << 20, 3 << 20}) || cw.Pieces.Sum != 12*256 {
		t.Fatalf("collective writes: %+v", cw)
	}
	if cw.IO != (Stat{3 * (4 + 5 + 6 + 7) * int64(time.Millisecond), 12 * int64(time.Millisecond), 21 * int64(time.Millisecond)}) {
		t.Fatalf("io: %+v", cw.IO)
	}
	if cw.AggregatorRanks != 2 {
		t.Fatalf("aggregator ranks %d", cw.AggregatorRanks)
	}
	iw := rep.IndependentWrite
	if iw.Calls != (Stat{4, 1, 1}) || iw.Bytes != (Stat{6 << 20, 0, 3 << 20}) {
		t.Fatalf("independent writes: %+v", iw)
	}
	if rep.Open != (Stat{86 * int64(time.Millisecond), 20 * int64(time.Millisecond), 23 * int64(time.Millisecond)}) {
		t.Fatalf("open: %+v", rep.Open)
	}
	if len(rep.Strategies) != 2 || rep.Strategies[0].Calls != 2 || rep.Strategies[1].First[0] != 2 {
		t.Fatalf("strategies: %+v", rep.Strategies)
	}

	// Sum, Min, Max: each counter's statistic, field by field.
	if s, lo, hi := cw.Sum(), cw.Min(), cw.Max(); s.Calls != 12 || lo.Calls != 3 || hi.Calls != 3 ||
		s.IO != time.Duration(cw.IO.Sum) || lo.IO != 12*time.Millisecond || hi.IO != 21*time.Millisecond ||
		s.Bytes != 12<<20 || hi.BytesRecv != cw.BytesRecv.Max || lo.Agree != time.Duration(cw.Agree.Min) {
		t.Fatalf("Sum %+v Min %+v Max %+v of %+v", s, lo, hi, cw)
	}
	if iw.Max().Bytes != 3<<20 || iw.Min().Bytes != 0 {
		t.Fatalf("independent writes: Max %+v Min %+v", iw.Max(), iw.Min())
	}

	// JSON: one line, the documented names.
	b, err := json.Marshal(&rep)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "\n") {
		t.Fatal("JSON report spans lines")
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"format", "path", "abs_path", "ranks", "open_to_close_ns", "collective_write", "collective_read", "independent_write", "independent_read", "strategies"} {
		if _, ok := back[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	if back["collective_write"].(map[string]any)["io_wait_ns"].(map[string]any)["max"].(float64) != float64(3*time.Millisecond) {
		t.Errorf("io_wait_ns: %s", b)
	}

	// No ranks, no strategies: still valid.
	empty := Aggregate("x", "/x", nil, nil)
	if b, _ := json.Marshal(&empty); !strings.Contains(string(b), `"strategies":[]`) {
		t.Errorf("empty report: %s", b)
	}
}

func TestText(t *testing.T) {
	rep := sampleReport()
	var b strings.Builder
	if err := rep.Text(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Log("\n" + out)
	for _, want := range []string{
		"collio stats: out.dat (/run/out.dat)\n",
		"  4 ranks, open to close 23.00 ms (slowest rank)\n",
		"  collective writes       3   3,072  12.00           3          768        3.00\n",
		"  independent writes      4       6   6.00           1         0..3  0.00..3.00\n",
		"        2  write_at_all  twophase     1,3     accesses interleave; several nodes: two-phase\n",
		"        1  write_at_all  independent  2       romio_cb_write=disable\n",
		"    file I/O                             21.00   66.00\n",
		"    sync for read-back                    6.00    6.00\n",
		"  independent: whole calls                1.00    4.00\n",
		"  collective writes: 36 messages sent (max/rank 9), 9.00 MiB (max/rank 2.25); 2 aggregator ranks; rounds max/rank 3\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(out, "reads:") || strings.Contains(out, "collective reads") {
		t.Error("a report without reads has read columns")
	}
	// Columns line up: the header's "MiB" ends where the numbers end.
	lines := strings.Split(out, "\n")
	if h, r := lines[2], lines[3]; strings.Index(h, "MiB ")+3 != strings.Index(r, "12.00")+5 {
		t.Errorf("columns do not line up:\n%s\n%s", h, r)
	}

	// The sync for read-back shows only where a rank spent time on it.
	plain := make([]FileCounters, 2)
	for r := range plain {
		plain[r].AddCollective(Call{Op: "write_all", Bytes: 1, IO: time.Millisecond, Total: time.Millisecond}, 1)
	}
	var plainText strings.Builder
	plainReport := Aggregate("x", "x", plain, nil)
	plainReport.Text(&plainText)
	if strings.Contains(plainText.String(), "sync for read-back") {
		t.Errorf("a report without syncs has their row:\n%s", plainText.String())
	}

	var none strings.Builder
	empty := Aggregate("x", "x", make([]FileCounters, 2), nil)
	empty.Text(&none)
	if !strings.Contains(none.String(), "no data transfers") || strings.Contains(none.String(), "time, ms") {
		t.Errorf("empty report:\n%s", none.String())
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1977687: "1,977,687", -12345: "-12,345"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}
