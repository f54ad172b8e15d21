package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// BenchmarkBigValueWrite writes a STRING of about 900 KB (words of hex
// digits, which compress little), one create a call, each into a record
// of its own (issue 38: such a write took 385 ms):
//
//	HDS_TEST_DATABASE_URL=... go test -run '^$' -bench BenchmarkBigValueWrite -benchtime 10x ./store/postgres/
func BenchmarkBigValueWrite(b *testing.B) {
	ctx := context.Background()
	s := postgres.New(pgtest.New(b))
	s.SetQuotas(store.NoQuotas)
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "bench"}, Project: "p", Collection: "c", Cluster: "k"}
	if _, err := s.CreateProject(ctx, p); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Apply(ctx, p, store.Batch{Ops: []store.Op{{Kind: store.OpEnsureCluster, Collection: "c", Cluster: "k"}}}); err != nil {
		b.Fatal(err)
	}
	var words []string
	for i := 0; len(words)*33 < 900_000; i++ {
		words = append(words, fmt.Sprintf("%032x", uint64(i)*0x9e3779b97f4a7c15))
	}
	v := json.RawMessage(strconv.Quote(strings.Join(words, " ")))
	for i := 0; b.Loop(); i++ {
		rp := p
		rp.Record = "r" + strconv.Itoa(i)
		if _, err := s.CreateRecord(ctx, rp, &store.Record{Type: store.String, Value: v}, store.Write{}); err != nil {
			b.Fatal(err)
		}
	}
}
