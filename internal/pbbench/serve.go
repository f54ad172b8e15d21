package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pocketbase/pocketbase"
	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/logger"
	"github.com/pocketbase/pocketbase/tools/types"
	"golang.org/x/crypto/bcrypt"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
)

// serveFlag, as the first argument, makes the binary the servers' child
// process (startServers) instead of the load driver. It is not among the
// driver's flags.
const serveFlag = "-serve"

// ready is the child's first line on stdout, once both servers answer.
type ready struct {
	Pbbench    string       `json:"pbbench"` // "ready"
	GOMAXPROCS int          `json:"gomaxprocs"`
	Logs       string       `json:"logs"`
	Targets    []targetInfo `json:"targets"`
}

// targetInfo is where a server listens and the token the load sends it.
type targetInfo struct {
	Name  string `json:"name"`
	Base  string `json:"base"`
	Token string `json:"token"`
}

// done is the child's last line on stdout, once its stdin is closed.
type done struct {
	Pbbench     string `json:"pbbench"` // "done"
	HDSLogLines int    `json:"hds_log_lines"`
	PBLogRows   int    `json:"pb_log_rows"`
	Profile     string `json:"profile,omitempty"`
}

// serve is the child process: it starts the servers in dir (both, or the
// one -only names), prints a ready line, then reads commands from stdin
// until it is closed: "start" starts the CPU profile (-cpuprofile),
// "phase NAME" labels the requests that follow (pprof label op=NAME,
// server=pocketbase|hds). At EOF it writes the profile, flushes the logs,
// prints a done line and returns.
func serve(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("pbbench -serve", flag.ContinueOnError)
	// Not -dir: PocketBase parses os.Args for its own --dir.
	data := fs.String("data", "", "directory of the databases and of hds's log")
	logs := fs.Bool("logs", true, "request logs on")
	only := fs.String("only", "", "start only this server: pocketbase or hds")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile, from \"start\" to the end, to this file")
	traceFile := fs.String("trace", "", "write an execution trace, from \"start\" to the end, to this file")
	normal := fs.Bool("hds-normal", false, "hds's SQLite with synchronous=NORMAL, as PocketBase's")
	readConns := fs.Int("hds-read-conns", 0, "hds's SQLite read pool (0: its default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *data == "" {
		return errors.New("-serve needs -data")
	}
	var phase atomic.Pointer[string]
	idle := "idle"
	phase.Store(&idle)
	// With a profile, every goroutine a server starts (its connections',
	// its background writers) has the label server=NAME, and its
	// handlers the labels server and op.
	wrap := func(_ string, h http.Handler) http.Handler { return h }
	under := func(_ string, f func()) { f() }
	if *cpuprofile != "" {
		wrap = func(server string, h http.Handler) http.Handler { return labelled(server, &phase, h) }
		under = func(server string, f func()) {
			pprof.Do(context.Background(), pprof.Labels("server", server), func(context.Context) { f() })
		}
	}
	r := ready{Pbbench: "ready", GOMAXPROCS: runtime.GOMAXPROCS(0)}
	var app core.App
	var hlog *bufferedFile
	var logDescs []string
	if *only == "" || *only == "pocketbase" {
		var t targetInfo
		var a core.App
		var err error
		under("pocketbase", func() { t, a, err = startPocketBase(filepath.Join(*data, "pb_data"), *logs, wrap) })
		if err != nil {
			return fmt.Errorf("pocketbase: %w", err)
		}
		r.Targets, app = append(r.Targets, t), a
		if *logs {
			logDescs = append(logDescs, "pocketbase: its defaults (request logs kept in pb_data/auxiliary.db, written in batches)")
		} else {
			logDescs = append(logDescs, "pocketbase: off (logs.maxDays = 0)")
		}
	}
	if *only == "" || *only == "hds" {
		logPath := filepath.Join(*data, "hds.log")
		var t targetInfo
		var l *bufferedFile
		var err error
		var opts []sqlite.Option
		if *normal {
			opts = append(opts, sqlite.WithSynchronousNormal())
		}
		if *readConns > 0 {
			opts = append(opts, sqlite.WithReadConns(*readConns))
		}
		under("hds", func() { t, l, err = startHDS(filepath.Join(*data, "hds.db"), logPath, *logs, wrap, opts...) })
		if err != nil {
			return fmt.Errorf("hds: %w", err)
		}
		r.Targets, hlog = append(r.Targets, t), l
		if *logs {
			logDescs = append(logDescs, fmt.Sprintf("hds: a JSON line per request (slog.JSONHandler) to %s through a 32 KiB bufio.Writer flushed every %s, as the example server's logWriter", logPath, logFlushInterval))
		} else {
			logDescs = append(logDescs, "hds: off (slog.DiscardHandler)")
		}
	}
	if len(r.Targets) == 0 {
		return fmt.Errorf("-only %q: want pocketbase or hds", *only)
	}
	r.Logs = strings.Join(logDescs, "; ")
	line, _ := json.Marshal(r)
	fmt.Fprintf(stdout, "%s\n", line)

	var profile, traced *os.File
	started := false
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		cmd := sc.Text()
		switch {
		case cmd == "start" && !started:
			started = true
			var err error
			if profile, err = startTo(*cpuprofile, pprof.StartCPUProfile); err != nil {
				return err
			}
			if traced, err = startTo(*traceFile, trace.Start); err != nil {
				return err
			}
		case strings.HasPrefix(cmd, "phase "):
			p := strings.TrimPrefix(cmd, "phase ")
			phase.Store(&p)
		}
	}
	d := done{Pbbench: "done"}
	if traced != nil {
		trace.Stop()
		traced.Close()
	}
	if profile != nil {
		pprof.StopCPUProfile()
		profile.Close()
		d.Profile = *cpuprofile
	}
	if hlog != nil {
		if err := hlog.Close(); err != nil {
			return err
		}
		b, err := os.ReadFile(hlog.f.Name())
		if err != nil {
			return err
		}
		d.HDSLogLines = strings.Count(string(b), "\n")
	}
	if app != nil {
		if h, ok := app.Logger().Handler().(*logger.BatchHandler); ok {
			_ = h.WriteAll(context.WithValue(context.Background(), logger.BlockKey, true))
		}
		if err := app.AuxDB().NewQuery("SELECT count(*) FROM _logs").Row(&d.PBLogRows); err != nil {
			return fmt.Errorf("pocketbase: counting logs: %w", err)
		}
	}
	line, _ = json.Marshal(d)
	fmt.Fprintf(stdout, "%s\n", line)
	return nil
}

// labelled runs h with the pprof labels server and op (the phase the
// driver last announced), so that one profile of both servers can be cut
// by server and operation (go tool pprof -tagfocus). Goroutines a request
// starts inherit them; the connections' reading and writing outside the
// handler, and the servers' background goroutines, have server alone.
func labelled(server string, phase *atomic.Pointer[string], h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pprof.Do(r.Context(), pprof.Labels("server", server, "op", *phase.Load()), func(context.Context) { h.ServeHTTP(w, r) })
	})
}

// --- PocketBase ---

// startPocketBase serves PocketBase on dataDir, with collections
// "records" (the records read) and "writes" (those created), each with a
// name (unique), a type and a value as JSON, that authenticated users may
// list, view and create in, and a user whose token the load uses. With
// logs, its log settings are its defaults (request logs kept 5 days in
// auxiliary.db); without, logs.maxDays is 0 (none kept).
func startPocketBase(dataDir string, logs bool, wrap func(string, http.Handler) http.Handler) (targetInfo, core.App, error) {
	app := pocketbase.NewWithConfig(pocketbase.Config{DefaultDataDir: dataDir, HideStartBanner: true})
	if err := app.Bootstrap(); err != nil {
		return targetInfo{}, nil, err
	}
	if err := app.RunAllMigrations(); err != nil {
		return targetInfo{}, nil, err
	}
	if !logs {
		settings := app.Settings()
		settings.Logs.MaxDays = 0
		if err := app.Save(settings); err != nil {
			return targetInfo{}, nil, err
		}
	}
	for _, name := range []string{"records", "writes"} {
		col := core.NewBaseCollection(name)
		col.Fields.Add(&core.TextField{Name: "name", Required: true}, &core.TextField{Name: "type"}, &core.JSONField{Name: "value"})
		col.AddIndex("idx_"+name+"_name", true, "name", "")
		rule := types.Pointer("@request.auth.id != ''")
		col.ListRule, col.ViewRule, col.CreateRule = rule, rule, rule
		if err := app.Save(col); err != nil {
			return targetInfo{}, nil, err
		}
	}
	users, err := app.FindCollectionByNameOrId("users")
	if err != nil {
		return targetInfo{}, nil, err
	}
	u := core.NewRecord(users)
	u.SetEmail("load@example.com")
	u.SetPassword("load-password-123")
	if err := app.Save(u); err != nil {
		return targetInfo{}, nil, err
	}
	token, err := u.NewAuthToken()
	if err != nil {
		return targetInfo{}, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return targetInfo{}, nil, err
	}
	app.OnServe().BindFunc(func(e *core.ServeEvent) error {
		e.Listener = ln
		e.InstallerFunc = nil // no superuser installer link: no one opens it
		if err := e.Next(); err != nil {
			return err
		}
		e.Server.Handler = wrap("pocketbase", e.Server.Handler)
		return nil
	})
	go func() {
		if err := apis.Serve(app, apis.ServeConfig{HttpAddr: ln.Addr().String()}); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "pocketbase:", err)
			os.Exit(1)
		}
	}()
	base := "http://" + ln.Addr().String()
	if err := waitUp(base + "/api/health"); err != nil {
		return targetInfo{}, nil, err
	}
	return targetInfo{Name: "pocketbase", Base: base, Token: token}, app, nil
}

// --- hds ---

// startHDS serves hds on an SQLite database at path, opened with opts,
// with one user. With logs, hds logs a JSON line per request to logPath
// through a bufferedFile (returned; nil without logs).
func startHDS(path, logPath string, logs bool, wrap func(string, http.Handler) http.Handler, opts ...sqlite.Option) (targetInfo, *bufferedFile, error) {
	s, err := sqlite.Open(context.Background(), path, opts...)
	if err != nil {
		return targetInfo{}, nil, err
	}
	s.SetQuotas(store.NoQuotas)
	hash, err := bcrypt.GenerateFromPassword([]byte("load-password"), bcrypt.DefaultCost)
	if err != nil {
		return targetInfo{}, nil, err
	}
	if _, err := s.CreateUser(context.Background(), &store.User{Username: "load", PasswordHash: hash, Active: true}); err != nil {
		return targetInfo{}, nil, err
	}
	log := slog.New(slog.DiscardHandler)
	var bf *bufferedFile
	if logs {
		f, err := os.Create(logPath)
		if err != nil {
			return targetInfo{}, nil, err
		}
		bf = newBufferedFile(f, logFlushInterval)
		log = slog.New(slog.NewJSONHandler(bf, nil))
	}
	h := hds.New(hds.WithStore(s), hds.WithUsers(s), hds.WithSecurity(hds.Security{JWTSecret: "pbbench-secret-0123456789abcdef!!"}),
		hds.WithRateLimit(1<<40, 1<<40), hds.WithLogger(log))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return targetInfo{}, nil, err
	}
	srv := &http.Server{Handler: wrap("hds", h), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // runs until the process ends
	base := "http://" + ln.Addr().String()
	c := newClient(1)
	body, _ := json.Marshal(map[string]string{"username": "load", "password": "load-password"})
	status, b, err := c.do(http.MethodPost, base+"/api/v1/auth/login", "", body)
	if err != nil || status != http.StatusOK {
		return targetInfo{}, nil, fmt.Errorf("login: %d %v %s", status, err, b)
	}
	var out struct {
		Data struct{ Token string } `json:"data"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return targetInfo{}, nil, err
	}
	for _, p := range []string{"/api/v1/projects/bench", "/api/v1/projects/bench/collections/c", hdsCluster + "k", hdsCluster + "writes"} {
		status, b, err := c.do(http.MethodPost, base+p, out.Data.Token, nil)
		if err != nil || status != http.StatusCreated {
			return targetInfo{}, nil, fmt.Errorf("POST %s: %d %v %s", p, status, err, b)
		}
	}
	return targetInfo{Name: "hds", Base: base, Token: out.Data.Token}, bf, nil
}

// logFlushInterval and logBufferSize are those of the example server's
// logWriter (example/logwriter.go).
const (
	logFlushInterval = 100 * time.Millisecond
	logBufferSize    = 32 << 10
)

// bufferedFile is the example server's logWriter in a few lines (package
// main cannot be imported): a bufio.Writer of logBufferSize over the
// file, written out when full, every interval and on Close. slog hands
// each record to one Write, so lines stay whole and in order.
type bufferedFile struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

func newBufferedFile(f *os.File, interval time.Duration) *bufferedFile {
	b := &bufferedFile{f: f, w: bufio.NewWriterSize(f, logBufferSize), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-b.stop:
				return
			case <-t.C:
				b.mu.Lock()
				b.w.Flush() //nolint:errcheck // the next flush or Close reports it
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// Write implements io.Writer.
func (b *bufferedFile) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Write(p)
}

// Close stops the periodic flush, writes out what is left and closes the
// file.
func (b *bufferedFile) Close() error {
	close(b.stop)
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.w.Flush(); err != nil {
		return err
	}
	return b.f.Close()
}

// startTo starts start (a CPU profile, an execution trace) writing to a
// new file at path, which it returns (nil when path is empty: nothing
// started); the caller closes it once start's writing is stopped.
func startTo(path string, start func(io.Writer) error) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
