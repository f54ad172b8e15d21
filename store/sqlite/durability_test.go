//go:build unix

package sqlite_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
)

// childEnv names the database file a re-executed test binary writes to
// before it is killed (TestKilledAfterWrite).
const childEnv = "HDS_SQLITE_KILL_CHILD"

// TestMain runs the child of TestKilledAfterWrite when the binary is
// re-executed as one.
func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		os.Exit(killChild(path))
	}
	os.Exit(m.Run())
}

// killChild takes the server lock, writes a project, a record and an
// update, reports each answered write on stdout, and waits to be killed.
func killChild(path string) int {
	ctx := context.Background()
	if _, err := sqlite.Lock(path); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p", Collection: "c", Cluster: "k", Record: "r"}
	if _, err := s.CreateProject(ctx, p); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	_, err = s.Apply(ctx, p, store.Batch{CreateParents: true, Ops: []store.Op{{Kind: store.OpCreate, Collection: "c", Cluster: "k",
		Record: "r", New: &store.Record{Type: store.Integer, Value: json.RawMessage("1")}}}})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	for i := 2; i <= 50; i++ {
		_, err := s.UpdateRecord(ctx, p, store.Write{MaxVersions: 10}, func(r *store.Record) error {
			r.Value = json.RawMessage(fmt.Sprint(i))
			return nil
		})
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		fmt.Println("answered", i) // the write is answered: it must survive
	}
	select {} // killed here
}

// TestKilledAfterWrite kills (SIGKILL) a process right after its last
// write was answered: reopened, the database holds every answered write,
// and the server lock died with the process.
func TestKilledAfterWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hds.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(out)
	last := ""
	for lines.Scan() {
		last = lines.Text()
		require.NotContains(t, last, "error")
		if last == "answered 50" {
			break
		}
	}
	require.Equal(t, "answered 50", last)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	release, err := sqlite.Lock(path)
	require.NoError(t, err, "the lock dies with its process")
	defer release()
	s := openAt(t, path)
	r, err := s.FindRecord(context.Background(), store.Path{Project: "p", Collection: "c", Cluster: "k", Record: "r"})
	require.NoError(t, err)
	assert.Equal(t, "50", string(r.Value))
	assert.Equal(t, int64(50), r.Version)
	versions, total, err := s.FindRecordVersions(context.Background(), store.Path{Project: "p", Collection: "c", Cluster: "k", Record: "r"}, store.NewListQuery())
	require.NoError(t, err)
	assert.Equal(t, 11, total)
	assert.Len(t, versions, 11)
}
