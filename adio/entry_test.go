package adio

import (
	"testing"

	"github.com/collio/collio/internal/coll"
	"pgregory.net/rapid"
)

func TestEntryRecordRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		i := func(name string) int64 { return rapid.Int64().Draw(t, name) }
		e := entryRecord{
			op: i("op"), seq: i("seq"), rng: coll.Range{Start: i("s"), End: i("e")},
			bad: rapid.Bool().Draw(t, "bad"), pending: coll.Range{Start: i("ps"), End: i("pe")},
			fellBack: rapid.Bool().Draw(t, "fell"), bytes: i("bytes"),
			own:      coll.OwnBlocks{Count: i("count"), Hash: rapid.Uint64().Draw(t, "hash")},
			maySieve: rapid.Bool().Draw(t, "sieve"), digest: rapid.Uint64().Draw(t, "digest"), pieces: i("pieces"),
		}
		b := make([]byte, 8*entryWords)
		e.encode(b)
		if got := decodeEntry(b); got != e {
			t.Fatalf("decoded %+v, want %+v", got, e)
		}
	})
}
