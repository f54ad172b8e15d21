// Command pbbench runs PocketBase and hds on SQLite side by side and
// drives both over real HTTP with the same load (issue 38): creates at 8
// and 32 connections, a GET of one record and a list of 100 at 32, and
// 32 connections creating while 8 read one record. The servers run in a
// child process (the same binary, started with -serve) pinned to CPU 0,
// the load driver on CPU 1, each on its own temporary database and port,
// with request logs on, the two servers interleaved in every round. It is
// its own module (PocketBase needs a newer Go than hds and many
// dependencies), so that neither the library's `go test ./...` nor the
// e2e module builds it. See README.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

func main() {
	var err error
	if len(os.Args) > 1 && os.Args[1] == serveFlag {
		err = serve(os.Args[2:], os.Stdin, os.Stdout)
	} else {
		err = run(os.Args[1:], os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pbbench:", err)
		os.Exit(1)
	}
}

// op is one measurement: its loads run at once.
type op struct {
	name  string
	loads []load
}

func create(t *target, i int64) (string, string, []byte) {
	p, b := t.create(i)
	return http.MethodPost, p, b
}

func get(t *target, _ int64) (string, string, []byte)  { return http.MethodGet, t.get, nil }
func list(t *target, _ int64) (string, string, []byte) { return http.MethodGet, t.list, nil }

// mixed is the op of issue 38's goal of no 503 under writes and reads.
const mixed = "writes32+reads8"

var allOps = []op{
	{"create8", []load{{"create", 8, create, 0}}},
	{"create32", []load{{"create", 32, create, 0}}},
	{"get", []load{{"get", 32, get, http.StatusOK}}},
	{"list100", []load{{"list100", 32, list, http.StatusOK}}},
	{mixed, []load{{"create", 32, create, 0}, {"get", 8, get, http.StatusOK}}},
}

// sample is one load's result in one round, with the CPU the two
// processes used during it.
type sample struct {
	result
	serverCPU, driverCPU float64 // fraction of one CPU
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("pbbench", flag.ContinueOnError)
	duration := fs.Duration("duration", 3*time.Second, "length of each measurement")
	rounds := fs.Int("rounds", 3, "rounds of every measurement, the servers interleaved")
	dir := fs.String("dir", "", "directory of the databases and hds's log (default: a temporary one, removed at the end)")
	pin := fs.Bool("pin", true, "servers on CPU 0 and the driver on CPU 1 (taskset), when taskset exists and there are 2 CPUs or more")
	logs := fs.Bool("logs", true, "request logs on: PocketBase's defaults, hds's JSON lines to a file")
	opsFlag := fs.String("ops", "", "comma-separated ops to run (default all): "+opNames())
	only := fs.String("only", "", "run one server only: pocketbase or hds")
	hdsReadConns := fs.Int("hds-read-conns", 0, "hds's SQLite read pool (sqlite.WithReadConns; 0: its default)")
	hdsNormal := fs.Bool("hds-normal", false, "hds's SQLite with synchronous=NORMAL, PocketBase's setting (default FULL, hds's: durable when answered)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the servers' process, over the measurements, to this file (pprof labels server and op)")
	traceFile := fs.String("trace", "", "write an execution trace of the servers' process, over the measurements, to this file (go tool trace)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	ops, err := pickOps(*opsFlag)
	if err != nil {
		return err
	}
	if *only != "" && *only != "pocketbase" && *only != "hds" {
		return fmt.Errorf("-only %q: want pocketbase or hds", *only)
	}
	taskset, notPinned, err := pinDriver(*pin, args)
	if err != nil {
		return err
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "pbbench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	serveArgs := []string{"-data", *dir, "-logs=" + fmt.Sprint(*logs), "-only", *only, "-hds-normal=" + fmt.Sprint(*hdsNormal), "-hds-read-conns", fmt.Sprint(*hdsReadConns)}
	if *cpuprofile != "" {
		serveArgs = append(serveArgs, "-cpuprofile", *cpuprofile)
	}
	if *traceFile != "" {
		serveArgs = append(serveArgs, "-trace", *traceFile)
	}
	ch, err := startChild(taskset, serveArgs)
	if err != nil {
		return fmt.Errorf("servers: %w", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			ch.stop() //nolint:errcheck // an error is already returned
		}
	}()
	var targets []*target
	c := newClient(64)
	for _, ti := range ch.ready.Targets {
		t := newTarget(ti)
		if err := fill(c, t); err != nil {
			return fmt.Errorf("%s: fill: %w", t.Name, err)
		}
		targets = append(targets, t)
	}

	if taskset != "" {
		fmt.Fprintf(out, "pinned: servers on CPU 0, load driver on CPU 1 (taskset)\n")
	} else {
		fmt.Fprintf(out, "not pinned (%s): servers and driver share the CPUs\n", notPinned)
	}
	fmt.Fprintf(out, "GOMAXPROCS servers %d, driver %d; %d rounds of %s; p50/p99 per request; cpu: of one CPU, servers' process and driver\n",
		ch.ready.GOMAXPROCS, runtime.GOMAXPROCS(0), *rounds, *duration)
	fmt.Fprintf(out, "request logs: %s\n", ch.ready.Logs)
	durability := "hds synchronous=FULL (durable when answered), pocketbase synchronous=NORMAL (WAL; its default)"
	if *hdsNormal {
		durability = "hds and pocketbase synchronous=NORMAL (-hds-normal; WAL)"
	}
	fmt.Fprintf(out, "SQLite: %s\n", durability)
	if *cpuprofile != "" {
		fmt.Fprintf(out, "CPU profile of the servers' process from the first round to the end: %s (labels server=pocketbase|hds, op=<op>: go tool pprof -tagfocus server=hds)\n", *cpuprofile)
	}
	if err := ch.send("start"); err != nil {
		return err
	}
	var seq atomic.Int64
	results := map[string][]sample{}
	for round := 1; round <= *rounds; round++ {
		for _, o := range ops {
			for _, t := range targets {
				if err := ch.send("phase " + o.name); err != nil {
					return err
				}
				s0, d0, w0 := ch.cpuTime(), selfCPUTime(), time.Now()
				rs := measure(c, t, o.loads, *duration, &seq)
				wall := time.Since(w0).Seconds()
				scpu, dcpu := (ch.cpuTime()-s0).Seconds()/wall, (selfCPUTime()-d0).Seconds()/wall
				for li, r := range rs {
					key := rowKey(o, o.loads[li], t)
					results[key] = append(results[key], sample{r, scpu, dcpu})
					fmt.Fprintf(out, "round %d  %s %7.0f req/s  p50 %8s  p99 %8s  p99/p50 %5.1fx  503 %d  other %d  errors %d  cpu %3.0f%% %3.0f%%\n",
						round, key, r.rps, fmtDur(r.p50), fmtDur(r.p99), r.ratio(), r.s503, r.other, r.errors, 100*scpu, 100*dcpu)
				}
			}
		}
	}
	if err := ch.send("phase idle"); err != nil {
		return err
	}

	fmt.Fprintln(out, "\nmedians over rounds (p99/p50: median of the rounds' ratios; 503, other, errors: totals):")
	for _, o := range ops {
		for _, l := range o.loads {
			for _, t := range targets {
				key := rowKey(o, l, t)
				ss := results[key]
				var s503, other, errs int64
				for _, s := range ss {
					s503, other, errs = s503+s.s503, other+s.other, errs+s.errors
				}
				fmt.Fprintf(out, "  %s %7.0f req/s  p50 %8s  p99 %8s  p99/p50 %5.1fx  503 %d  other %d  errors %d  cpu %3.0f%% %3.0f%%\n", key,
					median(ss, func(s sample) float64 { return s.rps }),
					fmtDur(time.Duration(median(ss, func(s sample) float64 { return float64(s.p50) }))),
					fmtDur(time.Duration(median(ss, func(s sample) float64 { return float64(s.p99) }))),
					median(ss, func(s sample) float64 { return s.ratio() }), s503, other, errs,
					100*median(ss, func(s sample) float64 { return s.serverCPU }), 100*median(ss, func(s sample) float64 { return s.driverCPU }))
			}
		}
	}
	goals(out, ops, targets, results)

	stopped = true
	d, err := ch.stop()
	if err != nil {
		return fmt.Errorf("servers: %w", err)
	}
	if *logs {
		var written []string
		for _, t := range targets {
			if t.Name == "hds" {
				written = append(written, fmt.Sprintf("hds %d lines", d.HDSLogLines))
			} else {
				written = append(written, fmt.Sprintf("pocketbase %d rows", d.PBLogRows))
			}
		}
		fmt.Fprintf(out, "request logs written: %s\n", strings.Join(written, ", "))
	}
	if d.Profile != "" {
		fmt.Fprintf(out, "CPU profile written: %s\n", d.Profile)
	}
	return nil
}

// goals prints issue 38's goals as the run measured them: no 503 at 32
// writers and 8 readers; a GET's p99 within 5x its p50 at 32 connections.
func goals(out io.Writer, ops []op, targets []*target, results map[string][]sample) {
	var lines []string
	for _, o := range ops {
		for _, t := range targets {
			switch o.name {
			case mixed:
				var s503, other int64
				for _, l := range o.loads {
					for _, s := range results[rowKey(o, l, t)] {
						s503, other = s503+s.s503, other+s.other
					}
				}
				lines = append(lines, fmt.Sprintf("  %-10s no 503 at 32 writers + 8 readers: %d 503, %d other non-2xx, over all rounds", t.Name, s503, other))
			case "get":
				ss := results[rowKey(o, o.loads[0], t)]
				lines = append(lines, fmt.Sprintf("  %-10s GET p99 within 5x p50 at 32 conns: %.1fx (median of rounds; rounds %s)", t.Name,
					median(ss, func(s sample) float64 { return s.ratio() }), ratios(ss)))
			}
		}
	}
	if len(lines) > 0 {
		fmt.Fprintln(out, "\nissue 38's goals:")
		fmt.Fprintln(out, strings.Join(lines, "\n"))
	}
}

func ratios(ss []sample) string {
	var parts []string
	for _, s := range ss {
		parts = append(parts, fmt.Sprintf("%.1fx", s.ratio()))
	}
	return strings.Join(parts, " ")
}

// rowKey names one load of one op on one server, padded for the table.
func rowKey(o op, l load, t *target) string {
	return fmt.Sprintf("%-15s %-10s %-7s %2d conns", o.name, t.Name, l.name, l.conns)
}

func opNames() string {
	var names []string
	for _, o := range allOps {
		names = append(names, o.name)
	}
	return strings.Join(names, ",")
}

// pickOps returns the ops named in the comma list s, in their usual
// order; all for "".
func pickOps(s string) ([]op, error) {
	if s == "" {
		return allOps, nil
	}
	want := strings.Split(s, ",")
	for _, w := range want {
		if !slices.ContainsFunc(allOps, func(o op) bool { return o.name == w }) {
			return nil, fmt.Errorf("-ops: unknown op %q (have %s)", w, opNames())
		}
	}
	var ops []op
	for _, o := range allOps {
		if slices.Contains(want, o.name) {
			ops = append(ops, o)
		}
	}
	if len(ops) == 0 {
		return nil, errors.New("-ops: none")
	}
	return ops, nil
}
