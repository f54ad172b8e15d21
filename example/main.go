// Command example is the standalone hds server
// (docs/api.md#the-standalone-server). It serves the API with the
// in-memory store:
//
//	go run ./example                    # serve on 127.0.0.1:8080
//	go run ./example -config hds.json   # serve with a configuration file
//	go run ./example -config hds.json serve
//
// and manages accounts and credential keys of a configured database (not
// with the in-memory store, which lives only inside a running server):
//
//	go run ./example -config FILE user add NAME    # password: first line of stdin
//	go run ./example -config FILE user disable NAME
//	go run ./example -config FILE user enable NAME
//	go run ./example -config FILE user delete NAME
//	go run ./example -config FILE user password NAME   # new password: first line of stdin
//	go run ./example -config FILE user list
//	go run ./example -config FILE credentials rotate [AFTER_ID]
//	go run ./example -config FILE backup OUT   # beside a running server
//	go run ./example -config FILE restore IN   # with no server running
//
// and is a client of a running server for programs
// (docs/api.md#the-standalone-server), at -url or HDS_URL with the token
// in HDS_TOKEN:
//
//	go run ./example run [-url URL] [-resolve=false] [-timeout D] [-cache FILE] -cluster P/C/K -- CMD ARGS...
//	go run ./example run -watch [-signal SIG] [-grace D] [-debounce D] [...] -cluster P/C/K -- CMD ARGS...
//	go run ./example export [-url URL] [-reveal] P > file.json
//	go run ./example import [-url URL] [-replace] [-dry-run] P < file.json
//	go run ./example diff [-url URL] [-reveal] [-unchanged] P FROM TO
//	go run ./example promote [-url URL] [-delete] [-dry-run] [-if-revision N] [-record NAME]... P FROM TO
//	go run ./example promote [...] -from-snapshot NAME P TO
//	go run ./example snapshot create [-url URL] [-description TEXT] P COLLECTION[/CLUSTER] NAME
//	go run ./example snapshot list [-url URL] [-collection C] P
//	go run ./example snapshot delete [-url URL] P NAME
//
// Configuration comes from the JSON file given with -config and from the
// environment variables HDS_ADDR, HDS_DATABASE_URL, HDS_JWT_SECRET,
// HDS_CREDENTIAL_KEY, HDS_REDIS_URL, HDS_TLS_CERT_FILE, HDS_TLS_KEY_FILE
// and HDS_ALLOW_PLAIN_HTTP, the environment winning. See docs/server.md
// for every key and its default.
//
// The files, as cmd/dex lays them out: main.go (main, run and the command
// table), config.go (the configuration file and its checks), store.go
// (opening the configured store), serve.go (the server), users.go (the
// user commands), credentials.go (credentials rotate), tls.go (HTTPS, its
// certificate reloads and plain HTTP's loopback rule), client.go (what
// the client commands share), run.go (run: its flags, the fetch and the
// fallback to the cache), runproc.go (CMD, its signals and status),
// runcache.go (the sealed cache), runwatch.go (run -watch, built on
// client.Watch: run's fetching and watching are the package client's),
// transfer.go (export and import),
// compare.go (diff and promote), snapshot.go (snapshot), backupcmd.go
// (backup and restore) and backups.go (the backups.* keys; the backups of
// a directory, their schedule and routes are package internal/backups). A new command
// family adds its file and one row to commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second signal stops the process at once
	}()
	if err := run(ctx, os.Args, os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		// run passes on the exit status of the command it ran.
		var exit *exitError
		if errors.As(err, &exit) {
			if exit.err != nil {
				fmt.Fprintln(os.Stderr, "error:", exit.err)
			}
			os.Exit(exit.code)
		}
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// env is what a command runs with: the standard streams, the environment
// and the configuration, loaded when the command asks for it (commands
// that talk to a server over HTTP may never need it).
type env struct {
	getenv         func(string) string
	stdin          io.Reader
	stdout, stderr io.Writer
	configPath     string
	logger         *slog.Logger
}

// config loads and checks the configuration file and the environment.
func (e *env) config() (*config, error) { return loadConfig(e.configPath, e.getenv) }

// commandFamily is one first word of the command line and what runs it.
// run gets the arguments after that word; it returns a usageError for bad
// arguments, which is printed as one line naming the problem and where
// the usage is (-h), and a helpError when asked for its usage.
type commandFamily struct {
	name  string
	usage string // lines of the usage text, without the program name
	run   func(ctx context.Context, e *env, args []string) error
	// flags: run parses flags, -h among them (its helpError lists them);
	// for the other families run answers a first argument -h.
	flags bool
}

// commands is every command family, in the order of the usage text.
var commands = []commandFamily{
	{name: "serve", usage: serveUsage, run: runServe},
	{name: "user", usage: userUsage, run: runUser},
	{name: "credentials", usage: credentialsUsage, run: runCredentials},
	{name: "backup", usage: backupUsage, run: runBackup, flags: true},
	{name: "restore", usage: restoreUsage, run: runRestore, flags: true},
	{name: "run", usage: runUsage, run: runRun, flags: true},
	{name: "export", usage: exportUsage, run: runExport, flags: true},
	{name: "import", usage: importUsage, run: runImport, flags: true},
	{name: "diff", usage: diffUsage, run: runDiff, flags: true},
	{name: "promote", usage: promoteUsage, run: runPromote, flags: true},
	{name: "snapshot", usage: snapshotUsage, run: runSnapshot},
}

// usageError is a bad command line (docs/api.md#the-standalone-server:
// one clear line and a non-zero exit). run adds help, the command line that
// prints the usage.
type usageError struct {
	msg  string
	help string // e.g. "example run -h"
}

func (e *usageError) Error() string {
	if e.help == "" {
		return e.msg
	}
	return e.msg + " (usage: " + e.help + ")"
}

// usagef returns a usageError.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// helpError is a command's -h: run prints the usage of the command's
// family (with flags, the flags of the command) and exits 0.
type helpError struct{ flags *flag.FlagSet }

func (*helpError) Error() string { return "help requested" }

// isHelp reports whether arg asks for the usage.
func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" || arg == "--h" }

const envUsage = `
Environment (wins over the file): HDS_ADDR, HDS_DATABASE_URL, HDS_JWT_SECRET,
HDS_CREDENTIAL_KEY, HDS_REDIS_URL, HDS_TLS_CERT_FILE, HDS_TLS_KEY_FILE,
HDS_ALLOW_PLAIN_HTTP. The client commands (run, export, import, diff, promote,
snapshot) read HDS_URL (when -url is not given), HDS_TOKEN and HDS_CA_FILE (PEM
certificates trusted besides the system's), and no configuration.

Flags:
`

// run is the whole program: main only adds the process's arguments,
// environment, standard streams and a context cancelled by SIGINT or
// SIGTERM. args[0] is the program name.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	name := "example"
	if len(args) > 0 {
		name, args = filepath.Base(args[0]), args[1:]
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // a bad flag is one line (usageError), not the usage
	configPath := fs.String("config", "", "read the configuration from this JSON `FILE`")
	usage := func() {
		var b strings.Builder
		b.WriteString("Usage:\n")
		for _, c := range commands {
			for line := range strings.Lines(c.usage) {
				fmt.Fprintf(&b, "  %s [-config FILE] %s", name, line)
			}
		}
		b.WriteString(envUsage)
		fmt.Fprint(stderr, b.String())
		fs.SetOutput(stderr)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage()
			return nil
		}
		return &usageError{msg: err.Error(), help: name + " -h"}
	}
	e := &env{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr, configPath: *configPath,
		logger: slog.New(slog.NewTextHandler(stderr, nil))}
	rest := fs.Args()
	if len(rest) == 0 {
		rest = []string{"serve"}
	}
	for _, c := range commands {
		if c.name != rest[0] {
			continue
		}
		var err error
		if !c.flags && len(rest) > 1 && isHelp(rest[1]) {
			err = &helpError{}
		} else {
			err = c.run(ctx, e, rest[1:])
		}
		var uerr *usageError
		var help *helpError
		switch {
		case errors.As(err, &help):
			familyUsage(stderr, name, c, help.flags)
			return nil
		case errors.As(err, &uerr):
			uerr.help = name + " " + c.name + " -h"
		}
		return err
	}
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return &usageError{msg: fmt.Sprintf("unknown command %q: use %s", rest[0], strings.Join(names, ", ")), help: name + " -h"}
}

// familyUsage prints the usage of the command family c of program name
// to w, with the flags of flags when not nil.
func familyUsage(w io.Writer, name string, c commandFamily, flags *flag.FlagSet) {
	var b strings.Builder
	b.WriteString("Usage:\n")
	for line := range strings.Lines(c.usage) {
		fmt.Fprintf(&b, "  %s [-config FILE] %s", name, line)
	}
	fmt.Fprint(w, b.String())
	if flags != nil {
		fmt.Fprint(w, "\nFlags:\n")
		flags.SetOutput(w)
		flags.PrintDefaults()
	}
}
