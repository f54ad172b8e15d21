package store_test

import (
	"context"
	"fmt"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// A host that serves hds in its own process follows a project's changes
// as GET P/events does: the log replayed from a revision, then live.
func ExampleWatchProject() {
	ctx := context.Background()
	s := memory.New() // give the same store to hds.WithStore
	alice := store.Caller{UserID: "alice-id", Name: "alice"}
	web := store.Path{Need: store.RightRead, Caller: alice, Project: "web"}
	if _, err := s.CreateProject(ctx, web); err != nil {
		panic(err)
	}

	// Every event after revision 0: the project's creation first.
	w, err := store.WatchProject(ctx, s, s, web, 0, 0)
	if err != nil {
		panic(err)
	}
	defer w.Close()

	prod := web
	prod.Collection = "prod"
	if _, err := s.CreateCollection(ctx, prod); err != nil {
		panic(err)
	}
	for range 2 {
		e := <-w.C
		fmt.Println(e.Revision, e.Action, e.Collection, e.ActorName)
	}
	// Output:
	// 1 project.create  alice
	// 2 collection.create prod alice
}
