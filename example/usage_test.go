package main

import (
	"errors"
	"strings"
	"testing"
)

// TestUsageErrors checks that a bad command line is one line naming the
// problem and where the usage is, with a non-zero exit
// (docs/api.md#the-standalone-server), for every command family, and
// that -h prints the usage and exits 0.
func TestUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args       []string
		want, help string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate": use serve, user, credentials, backup, restore, run, export, import, diff, promote, snapshot`, "example -h"},
		{[]string{"serve", "now"}, `serve takes no arguments, got ["now"]`, "example serve -h"},
		{[]string{"user"}, "user needs an action: add, admin, disable, enable, delete, password or list", "example user -h"},
		{[]string{"user", "rename", "a"}, `unknown user action "rename": use add, admin, disable, enable, delete, password or list`, "example user -h"},
		{[]string{"user", "add"}, "user add takes an optional -admin and exactly one username: user add [-admin] NAME", "example user -h"},
		{[]string{"user", "add", "a", "b"}, "user add takes an optional -admin and exactly one username: user add [-admin] NAME", "example user -h"},
		{[]string{"user", "add", "-admin"}, "user add takes an optional -admin and exactly one username: user add [-admin] NAME", "example user -h"},
		{[]string{"user", "add", "-root", "a"}, "user add takes an optional -admin and exactly one username: user add [-admin] NAME", "example user -h"},
		{[]string{"user", "admin", "a"}, "user admin takes a username and true or false: user admin NAME true|false", "example user -h"},
		{[]string{"user", "admin", "a", "yes"}, "user admin takes a username and true or false: user admin NAME true|false", "example user -h"},
		{[]string{"user", "disable"}, "user disable takes exactly one argument, the username", "example user -h"},
		{[]string{"user", "enable", "a", "b"}, "user enable takes exactly one argument, the username", "example user -h"},
		{[]string{"user", "delete"}, "user delete takes exactly one argument, the username", "example user -h"},
		{[]string{"user", "list", "extra"}, "user list takes no arguments", "example user -h"},
		{[]string{"user", "password"}, "user password takes exactly one argument, the username", "example user -h"},
		{[]string{"user", "password", "a", "b"}, "user password takes exactly one argument, the username", "example user -h"},
		{[]string{"credentials"}, "credentials needs an action: rotate", "example credentials -h"},
		{[]string{"credentials", "turn"}, `unknown credentials action "turn": use rotate`, "example credentials -h"},
		{[]string{"credentials", "rotate", "a", "b"}, "credentials rotate takes at most one argument, the record id to resume after", "example credentials -h"},
		{[]string{"run", "-cluster", "onlyP", "--", "true"}, "run: -cluster must name a cluster as PROJECT/COLLECTION/CLUSTER", "example run -h"},
		{[]string{"run", "-cluster", "p/c/k"}, "run: give the command to run after --", "example run -h"},
		{[]string{"run", "-nope"}, "run: flag provided but not defined: -nope", "example run -h"},
		{[]string{"export"}, "export takes exactly one argument, the project", "example export -h"},
		{[]string{"export", "-reveal=maybe", "p"}, `export: invalid boolean value "maybe" for -reveal: parse error`, "example export -h"},
		{[]string{"import", "-merge", "p"}, "import: flag provided but not defined: -merge", "example import -h"},
		{[]string{"import", "a", "b"}, "import takes exactly one argument, the project", "example import -h"},
		{[]string{"diff", "p", "staging"}, "diff takes exactly three arguments: the project, FROM and TO (COLLECTION or COLLECTION/CLUSTER)", "example diff -h"},
		{[]string{"diff", "-unchanged=maybe", "p", "a", "b"}, `diff: invalid boolean value "maybe" for -unchanged: parse error`, "example diff -h"},
		{[]string{"promote", "p", "a", "b", "c"}, "promote takes exactly three arguments: the project, FROM and TO (COLLECTION or COLLECTION/CLUSTER)", "example promote -h"},
		{[]string{"promote", "-if-revision", "x", "p", "a", "b"}, `promote: invalid value "x" for flag -if-revision: parse error`, "example promote -h"},
		{[]string{"promote", "-if-revision", "-3", "p", "a", "b"}, "promote: -if-revision must be a positive revision, got -3", "example promote -h"},
		{[]string{"diff", "-from-snapshot", "v1", "p", "a", "b"}, "diff -from-snapshot takes exactly two arguments: the project and TO (COLLECTION or COLLECTION/CLUSTER)", "example diff -h"},
		{[]string{"promote", "-from-snapshot", "v1", "p"}, "promote -from-snapshot takes exactly two arguments: the project and TO (COLLECTION or COLLECTION/CLUSTER)", "example promote -h"},
		{[]string{"snapshot"}, "snapshot needs an action: create, list or delete", "example snapshot -h"},
		{[]string{"snapshot", "take", "p"}, `unknown snapshot action "take": use create, list or delete`, "example snapshot -h"},
		{[]string{"snapshot", "create", "p", "prod"}, "snapshot create takes exactly three arguments: the project, COLLECTION or COLLECTION/CLUSTER, and the snapshot's name", "example snapshot -h"},
		{[]string{"snapshot", "create", "p", "prod/", "v1"}, `snapshot create: "prod/" is not COLLECTION or COLLECTION/CLUSTER`, "example snapshot -h"},
		{[]string{"snapshot", "create", "p", "/app", "v1"}, `snapshot create: "/app" is not COLLECTION or COLLECTION/CLUSTER`, "example snapshot -h"},
		{[]string{"snapshot", "create", "-cluster", "app", "p", "prod", "v1"}, "snapshot create: flag provided but not defined: -cluster", "example snapshot -h"},
		{[]string{"snapshot", "list"}, "snapshot list takes exactly one argument, the project", "example snapshot -h"},
		{[]string{"snapshot", "list", "p", "prod"}, "snapshot list takes exactly one argument, the project", "example snapshot -h"},
		{[]string{"snapshot", "delete", "p"}, "snapshot delete takes exactly two arguments: the project and the snapshot's name", "example snapshot -h"},
		{[]string{"-nope"}, "flag provided but not defined: -nope", "example -h"},
		{[]string{"-config"}, "flag needs an argument: -config", "example -h"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, err := runOnce(t, tt.args, nil, "")
			want := tt.want + " (usage: " + tt.help + ")"
			if err == nil || err.Error() != want {
				t.Errorf("error = %v, want %q", err, want)
			}
			var exit *exitError
			if errors.As(err, &exit) && exit.code == 0 {
				t.Errorf("exit status 0, want non-zero")
			}
			if stdout != "" || stderr != "" {
				t.Errorf("stdout %q, stderr %q: want nothing but the error's one line", stdout, stderr)
			}
		})
	}

	for _, tt := range []struct {
		args []string
		want []string // lines of the usage printed
	}{
		{[]string{"-h"}, []string{"example [-config FILE] user add [-admin] NAME", "example [-config FILE] user admin NAME true|false", "example [-config FILE] run [-url URL]", "-config FILE"}},
		{[]string{"user", "-h"}, []string{"example [-config FILE] user add [-admin] NAME", "example [-config FILE] user admin NAME true|false"}},
		{[]string{"credentials", "-h"}, []string{"example [-config FILE] credentials rotate [AFTER_ID]"}},
		{[]string{"serve", "-h"}, []string{"example [-config FILE] [serve]"}},
		{[]string{"run", "-h"}, []string{"example [-config FILE] run [-url URL] [-resolve=false] [-timeout D] [-cache FILE] -cluster P/C/K -- CMD ARGS...",
			"example [-config FILE] run -watch [-signal SIG] [-grace D] [-debounce D] [other run flags] -cluster P/C/K -- CMD ARGS...",
			"-cluster PROJECT/COLLECTION/CLUSTER", "-resolve", "-watch", "-cache FILE", "-signal SIGNAL"}},
		{[]string{"export", "-url", "http://x", "-h"}, []string{"example [-config FILE] export [-url URL] [-reveal] P", "-reveal"}},
		{[]string{"import", "--help"}, []string{"example [-config FILE] import [-url URL] [-replace] [-dry-run] P", "-dry-run"}},
		{[]string{"diff", "-h"}, []string{"example [-config FILE] diff [-url URL] [-reveal] [-unchanged] P FROM TO", "-unchanged"}},
		{[]string{"promote", "-h"}, []string{"example [-config FILE] promote [-url URL] [-delete] [-dry-run] [-if-revision N] [-record NAME]... P FROM TO", "-if-revision revision", "-record NAME",
			"example [-config FILE] promote [-url URL] [-delete] [-dry-run] [-if-revision N] [-record NAME]... -from-snapshot NAME P TO", "-from-snapshot NAME"}},
		{[]string{"diff", "-h"}, []string{"example [-config FILE] diff [-url URL] [-reveal] [-unchanged] -from-snapshot NAME P TO", "-from-snapshot NAME"}},
		{[]string{"snapshot", "-h"}, []string{"example [-config FILE] snapshot create [-url URL] [-description TEXT] P COLLECTION[/CLUSTER] NAME",
			"example [-config FILE] snapshot list [-url URL] [-collection C] P", "example [-config FILE] snapshot delete [-url URL] P NAME"}},
		{[]string{"snapshot", "create", "-h"}, []string{"example [-config FILE] snapshot create [-url URL] [-description TEXT] P COLLECTION[/CLUSTER] NAME", "-description TEXT"}},
		{[]string{"snapshot", "list", "-h"}, []string{"example [-config FILE] snapshot list [-url URL] [-collection C] P", "-collection C"}},
		{[]string{"-h"}, []string{"example [-config FILE] snapshot create", "HDS_URL"}},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, stderr, err := runOnce(t, tt.args, nil, "")
			if err != nil {
				t.Errorf("error %v, want none", err)
			}
			for _, line := range tt.want {
				if !strings.Contains(stderr, line) {
					t.Errorf("stderr = %q, want the usage with %q", stderr, line)
				}
			}
		})
	}
}
