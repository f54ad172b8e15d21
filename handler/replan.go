package handler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hds-go/hds/store"
)

// An import or a promote without a precondition is planned on a snapshot
// of the project and applied in one store.Store.Apply whose ops are
// conditioned on what the plan read (the entity tag of each record it
// updates or deletes; the absence of each it creates). A concurrent write
// to one of those records fails the apply, which changes nothing; the
// request is then planned again on the project as it now is, until it
// applies (docs/api.md#compare-and-promote: without a precondition,
// concurrent writes never make it 409 or 412). Writes elsewhere in the
// project never fail it.

// replanBudget is how long a request is planned again while concurrent
// writes keep changing what it read; past it, it is answered 503.
const replanBudget = 30 * time.Second

// errKeptChanging is the error of a request that raced with concurrent
// writes for all of replanBudget.
var errKeptChanging = fmt.Errorf("%w: the project kept changing under the request", store.ErrUnavailable)

// raced reports whether err is the failure of a plan that concurrent
// writes made stale: a record it updates or deletes changed or went, or
// one it creates appeared.
func raced(err error) bool {
	return errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrAlreadyExists)
}

// untilApplied runs attempt (plan and apply) again while it reports that
// it raced, pausing a little more each time, for at most replanBudget or
// until ctx ends (errKeptChanging); it returns attempt's last error.
func untilApplied(ctx context.Context, attempt func() (raced bool, err error)) error {
	start := time.Now()
	for n := 1; ; n++ {
		again, err := attempt()
		if !again {
			return err
		}
		if time.Since(start) > replanBudget {
			return errKeptChanging
		}
		pause := time.NewTimer(min(time.Duration(n)*5*time.Millisecond, 100*time.Millisecond))
		select {
		case <-ctx.Done():
			pause.Stop()
			return errKeptChanging
		case <-pause.C:
		}
	}
}
