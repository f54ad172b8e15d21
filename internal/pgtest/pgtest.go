// Package pgtest gives tests throwaway PostgreSQL databases. The server
// comes from HDS_TEST_DATABASE_URL; without it, tests that need PostgreSQL
// skip, unless HDS_REQUIRE_POSTGRES=1, under which a skip is a failure.
//
// Each test run migrates one template database (random name) once; every
// New copies it into a fresh database (random name) that is dropped when
// the test ends. Call Main from TestMain so that the template is dropped
// too.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/hds-go/hds/store/postgres" // also registers the "postgres" driver (lib/pq)
)

// Environment variables read by this package.
const (
	EnvURL     = "HDS_TEST_DATABASE_URL"
	EnvRequire = "HDS_REQUIRE_POSTGRES"
)

var template struct {
	once sync.Once
	name string
	err  error
}

// BaseURL returns the server URL, or skips (fails under
// HDS_REQUIRE_POSTGRES=1) when it is not set.
func BaseURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s is not set but %s=1: the PostgreSQL tests must run", EnvURL, EnvRequire)
		}
		t.Skipf("%s is not set: skipping PostgreSQL tests", EnvURL)
	}
	return u
}

// URLFor returns base with the database name replaced by name.
func URLFor(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("pgtest: bad %s: %w", EnvURL, err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

func randomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// admin runs f on a connection to the server's base database.
func admin(base string, f func(db *sqlx.DB) error) error {
	db, err := sqlx.Open("postgres", base)
	if err != nil {
		return err
	}
	defer db.Close()
	return f(db)
}

// NewURL creates a fresh, migrated database and returns its URL; the
// database is dropped when t ends.
func NewURL(t testing.TB) string {
	t.Helper()
	base := BaseURL(t)
	template.once.Do(func() { template.name, template.err = makeTemplate(base) })
	if template.err != nil {
		t.Fatalf("pgtest: template database: %v", template.err)
	}
	name := randomName("hds_test_")
	err := admin(base, func(db *sqlx.DB) error {
		_, err := db.Exec(`CREATE DATABASE ` + name + ` TEMPLATE ` + template.name)
		return err
	})
	if err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() { drop(base, name) })
	u, err := URLFor(base, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// NewEmptyURL creates a fresh database without any schema (to test
// migrations) and returns its URL; the database is dropped when t ends.
func NewEmptyURL(t testing.TB) string {
	t.Helper()
	base := BaseURL(t)
	name := randomName("hds_test_")
	if err := admin(base, func(db *sqlx.DB) error {
		_, err := db.Exec(`CREATE DATABASE ` + name)
		return err
	}); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() { drop(base, name) })
	u, err := URLFor(base, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// New returns a pool on a fresh, migrated database (see NewURL), closed
// when t ends.
func New(t testing.TB) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("postgres", NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(4)
	t.Cleanup(func() { db.Close() })
	return db
}

func makeTemplate(base string) (string, error) {
	name := randomName("hds_tpl_")
	if err := admin(base, func(db *sqlx.DB) error {
		_, err := db.Exec(`CREATE DATABASE ` + name)
		return err
	}); err != nil {
		return "", err
	}
	u, err := URLFor(base, name)
	if err != nil {
		return "", err
	}
	db, err := sqlx.Open("postgres", u)
	if err != nil {
		return "", err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := postgres.New(db).Migrate(ctx); err != nil {
		drop(base, name)
		return "", err
	}
	return name, nil
}

func drop(base, name string) {
	_ = admin(base, func(db *sqlx.DB) error {
		_, err := db.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`)
		return err
	})
}

// Main runs the tests and then drops the template database.
func Main(m *testing.M) int {
	code := m.Run()
	if template.name != "" {
		drop(os.Getenv(EnvURL), template.name)
	}
	return code
}

// Open returns a store on the database at url, on a pool of its own of
// at most four connections; the store and its pool are closed when t
// ends.
func Open(t testing.TB, url string, opts ...postgres.Option) *postgres.Store {
	t.Helper()
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(4)
	s := postgres.New(db, opts...)
	t.Cleanup(func() { s.Close() })
	return s
}

// Pair returns two stores on one fresh, migrated database (NewURL), each
// on a pool of its own (Open), as two instances of a server sharing the
// database are: what one writes, the other reads.
func Pair(t testing.TB, opts ...postgres.Option) (*postgres.Store, *postgres.Store) {
	t.Helper()
	url := NewURL(t)
	return Open(t, url, opts...), Open(t, url, opts...)
}
