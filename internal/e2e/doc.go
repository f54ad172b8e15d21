// Package e2e is the black-box test suite of hds, in a module of its own
// (internal/e2e/go.mod) so that a host importing hds does not download
// the suite's dependencies (a browser driver, OpenAPI validators and
// generators, a Redis client). Its tests drive hds.New through HTTP on
// every store kind; clients holds the Go clients generated from the
// served OpenAPI document. Run from the repository root:
//
//	go -C internal/e2e test ./...
package e2e
