package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

func TestUserCommandsWithMemoryStore(t *testing.T) {
	for _, args := range [][]string{
		{"user", "add", "bob"},
		{"user", "disable", "bob"},
		{"user", "enable", "bob"},
		{"user", "delete", "bob"},
		{"user", "password", "bob"},
		{"user", "list"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			stdout, _, err := runOnce(t, args, nil, "a-password\n")
			if err == nil {
				t.Fatal("run succeeded, want an error: the in-memory store cannot be managed from outside the server")
			}
			for _, want := range []string{"in-memory store", "running server process", "database_url"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error = %q, want it to contain %q", err, want)
				}
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}

	t.Run("with an unreachable database", func(t *testing.T) {
		_, _, err := runOnce(t, []string{"user", "list"}, map[string]string{"HDS_DATABASE_URL": "postgres://u:secret-pw@127.0.0.1:1/hds"}, "")
		if err == nil || !strings.Contains(err.Error(), "user list: HDS_DATABASE_URL: ") {
			t.Errorf("error = %v, want one about the database", err)
		}
		if err != nil && strings.Contains(err.Error(), "secret-pw") {
			t.Errorf("error %q shows the database password", err)
		}
	})
}

// TestUserActions runs the user actions against a directory, as they will
// run against a database once PostgreSQL support exists.
func TestUserActions(t *testing.T) {
	ctx := context.Background()
	dir := memory.New()
	do := func(action, username, stdin string) (string, error) {
		var out bytes.Buffer
		cmd := userCommand{action: action, username: username}
		if a, ok := strings.CutSuffix(action, " true"); ok { // "add true": add -admin; "admin true"
			cmd.action, cmd.admin = a, true
		} else if a, ok := strings.CutSuffix(action, " false"); ok {
			cmd.action = a
		}
		err := runUserCommand(ctx, dir, cmd, strings.NewReader(stdin), &out)
		return out.String(), err
	}
	mustOK := func(action, username, stdin string) string {
		t.Helper()
		out, err := do(action, username, stdin)
		if err != nil {
			t.Fatalf("user %s %s: %v", action, username, err)
		}
		return out
	}
	mustFail := func(action, username, stdin, want string) {
		t.Helper()
		if _, err := do(action, username, stdin); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("user %s %s: error %v, want one containing %q", action, username, err, want)
		}
	}

	mustOK("add", "bob", "bob-password\r\nignored second line\n")
	u, err := dir.FindUserByName(ctx, "bob")
	if err != nil || !u.Active || len(u.PasswordHash) == 0 || bytes.Contains(u.PasswordHash, []byte("bob-password")) {
		t.Fatalf("bob after add: %+v, %v; want an active user with a password hash", u, err)
	}
	mustOK("add", "carol", "carol-password") // no final newline
	mustFail("add", "bob", "another\n", `user "bob" already exists`)
	mustFail("add", "dave", "", "no password")
	mustFail("add", "dave", "\n", "no password")
	mustFail("add", "dave", strings.Repeat("x", 73)+"\n", "at most 72 bytes")
	mustFail("add", " dave", "pw\n", "white space")

	mustOK("disable", "bob", "")
	if out := mustOK("list", "", ""); !regexp.MustCompile(`(?m)^bob\s+disabled\s`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^carol\s+active\s`).MatchString(out) {
		t.Errorf("list after disable:\n%s\nwant bob disabled and carol active", out)
	}
	mustOK("enable", "bob", "")
	if u, _ := dir.FindUserByName(ctx, "bob"); !u.Active {
		t.Error("bob is not active after enable")
	}
	before, _ := dir.FindUserByName(ctx, "carol")
	if out := mustOK("password", "carol", "new-carol-pw\nignored\n"); !strings.Contains(out, "password changed") {
		t.Errorf("user password: output %q", out)
	}
	after, _ := dir.FindUserByName(ctx, "carol")
	if !auth.CheckPassword(after.PasswordHash, "new-carol-pw") || auth.CheckPassword(after.PasswordHash, "carol-password") {
		t.Error("user password: the hash is not that of the new password")
	}
	if after.SessionGeneration != before.SessionGeneration+1 {
		t.Errorf("user password: session generation %d, want %d (every earlier session ends)", after.SessionGeneration, before.SessionGeneration+1)
	}
	mustFail("password", "carol", "", "no password")
	mustFail("password", "carol", strings.Repeat("x", 73)+"\n", "at most 72 bytes")
	if u, _ := dir.FindUserByName(ctx, "carol"); u.SessionGeneration != after.SessionGeneration {
		t.Error("a refused user password changed the user")
	}

	// Administrators
	// (docs/api.md#server-administrators-and-user-accounts-v12) and the
	// last-administrator rule.
	if out := mustOK("add true", "root", "root-password\n"); !strings.Contains(out, "server administrator") {
		t.Errorf("user add -admin: output %q", out)
	}
	if u, _ := dir.FindUserByName(ctx, "root"); !u.Admin {
		t.Error("user add -admin made no administrator")
	}
	if out := mustOK("list", "", ""); !regexp.MustCompile(`(?m)^root\s+active\s+yes\s`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^carol\s+active\s+no\s`).MatchString(out) {
		t.Errorf("list shows who is an administrator:\n%s", out)
	}
	mustFail("admin false", "root", "", "at least one active administrator must remain")
	mustFail("disable", "root", "", "at least one active administrator must remain")
	mustFail("delete", "root", "", "at least one active administrator must remain")
	mustOK("admin true", "carol", "")
	mustOK("admin false", "root", "")
	if u, _ := dir.FindUserByName(ctx, "root"); u.Admin {
		t.Error("user admin root false: still an administrator")
	}
	mustFail("admin true", "nobody", "", `user "nobody" not found`)

	// Disable ends the sessions; enable brings none back (issue 24 item 9).
	gen := func() int64 { u, _ := dir.FindUserByName(ctx, "bob"); return u.SessionGeneration }
	g := gen()
	mustOK("disable", "bob", "")
	mustOK("enable", "bob", "")
	if gen() != g+1 {
		t.Errorf("disable then enable: session generation %d, want %d (the disable ended every session, the enable revived none)", gen(), g+1)
	}

	// An owner cannot be deleted (issue 24 item 8).
	bob, _ := dir.FindUserByName(ctx, "bob")
	if _, err := dir.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: bob.ID}, Project: "bobs"}); err != nil {
		t.Fatal(err)
	}
	mustFail("delete", "bob", "", `user delete "bob": the user owns 1 project: transfer or delete them first, or disable the user`)
	if err := dir.DeleteProject(ctx, store.Path{Caller: store.Caller{UserID: bob.ID}, Need: store.RightOwn, Project: "bobs"}); err != nil {
		t.Fatal(err)
	}

	mustOK("delete", "bob", "")
	if out := mustOK("list", "", ""); strings.Contains(out, "bob") {
		t.Errorf("list after delete still shows bob:\n%s", out)
	}
	for _, action := range []string{"disable", "enable", "delete"} {
		mustFail(action, "nobody", "", `user "nobody" not found`)
	}
	for _, action := range []string{"password"} {
		mustFail(action, "nobody", "pw\n", `user "nobody" not found`)
	}
}
