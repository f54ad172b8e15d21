package sqlite_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/hds-go/hds/store"
)

// BenchmarkUpdateHistory is a record's update keeping five versions of
// history (the API's default kind of write of an existing record), one at
// a time: the writer's statements for the quota's count of the history.
func BenchmarkUpdateHistory(b *testing.B) {
	s := open(b)
	p := speedProject(b, s)
	ctx := context.Background()
	p.Record = "r"
	if _, err := s.CreateRecord(ctx, p, &store.Record{Type: store.Integer, Value: json.RawMessage("0")}, store.Write{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, err := s.UpdateRecord(ctx, p, store.Write{MaxVersions: 5}, func(r *store.Record) error {
			r.Value = json.RawMessage(strconv.Itoa(i))
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
}
