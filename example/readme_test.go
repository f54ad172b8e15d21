package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestREADMEWalkthrough runs the walk-through of README.md against a
// started server, so that it cannot drift from what hds does: the
// server is the example's own run with the configuration the README
// shows (on a free port), the client commands a built binary in the
// working directory, and every sh block runs, in order, in bash with
// set -euo pipefail, the shell variables of one block carried to the
// next. A command followed by a comment that starts with a number, a
// quote or "{", or that is one word, must print that (a number: the
// whole output; JSON: white space aside).
func TestREADMEWalkthrough(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("HDS_REQUIRE_WALKTHROUGH") == "1" {
				t.Fatalf("the README walk-through needs %s: %v", tool, err)
			}
			t.Skipf("the README walk-through needs %s (set HDS_REQUIRE_WALKTHROUGH=1 to fail instead): %v", tool, err)
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	config := regexp.MustCompile(`(?s)cat > walkthrough\.json <<'EOF'\n(.*?)\nEOF\n`).FindStringSubmatch(text)
	if config == nil {
		t.Fatal("README.md: no walkthrough.json")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "walkthrough.json"), []byte(config[1]), 0o600); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "hds-example"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// The server: the example's run, as ./hds-example -config walkthrough.json.
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"example", "-config", filepath.Join(dir, "walkthrough.json")},
			environ(map[string]string{"HDS_ADDR": "127.0.0.1:0"}), strings.NewReader(""), &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	listening := regexp.MustCompile(`hds listening on (\S+)`)
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; time.Sleep(20 * time.Millisecond) {
		if m := listening.FindStringSubmatch(stdout.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the server did not start: %s %s", stdout.String(), stderr.String())
		}
	}

	// The walk-through: from its heading to the next part that is not it.
	start, end := strings.Index(text, "\n## A walk-through with curl\n"), strings.Index(text, "\n## Mounting hds in a host application\n")
	if start < 0 || end < start {
		t.Fatal("README.md: the walk-through's headings moved")
	}
	blocks := shBlocks(text[:end], strings.Count(text[:start], "\n"))
	if len(blocks) < 7 {
		t.Fatalf("README.md: %d sh blocks, want the walk-through's", len(blocks))
	}
	if !strings.Contains(blocks[0].code, "H=http://127.0.0.1:8080\n") {
		t.Fatal("README.md: the first sh block does not set H=http://127.0.0.1:8080")
	}
	blocks[0].code = strings.Replace(blocks[0].code, "H=http://127.0.0.1:8080\n", "H="+base+"\n", 1)
	vars := shVariables(blocks)
	for _, b := range blocks {
		script := walkPrelude + checked(b) + "\ndeclare -p " + strings.Join(vars, " ") + " > state 2>/dev/null || true\n"
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = dir
		cmd.Env = cleanEnv()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("README.md block at line %d: %v\n%s", b.line, err, out)
		}
	}
}

// walkPrelude starts every block: strict mode, the state of the blocks
// before, and the check of a printed result.
const walkPrelude = `set -euo pipefail
if [ -f state ]; then . ./state; fi
__check() { # got want mode line
  local got=$1 want=$2
  if [ "$3" = json ]; then got=$(printf %s "$got" | tr -d ' \n\t'); want=$(printf %s "$want" | tr -d ' \n\t'); fi
  if [ "$got" != "$want" ]; then printf 'README.md line %s: printed [%s], the README says [%s]\n' "$4" "$1" "$2" >&2; exit 1; fi
}
`

// shBlock is one sh block of the README and the line of its first line.
type shBlock struct {
	code string
	line int
}

// shBlocks returns the sh blocks of text from its line from on, in order.
func shBlocks(text string, from int) []shBlock {
	var out []shBlock
	lines := strings.Split(text, "\n")
	for i := from; i < len(lines); i++ {
		if lines[i] != "```sh" {
			continue
		}
		b := shBlock{line: i + 2}
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			b.code += lines[i] + "\n"
		}
		out = append(out, b)
	}
	return out
}

// shVariables lists the upper-case shell variables the blocks set.
func shVariables(blocks []shBlock) []string {
	seen := map[string]bool{}
	var out []string
	for _, b := range blocks {
		for _, m := range regexp.MustCompile(`\b([A-Z][A-Z0-9_]*)=`).FindAllStringSubmatch(b.code, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				out = append(out, m[1])
			}
		}
	}
	return out
}

// expectation is a command with a comment after it on one line.
var expectation = regexp.MustCompile(`^(\S.*?)\s{2,}# (.+)$`)

// checked returns the block with each command whose comment says what it
// prints turned into a check of it.
func checked(b shBlock) string {
	lines := strings.Split(b.code, "\n")
	for i, line := range lines {
		if strings.HasSuffix(line, `\`) || i > 0 && strings.HasSuffix(lines[i-1], `\`) {
			continue // a command of several lines
		}
		m := expectation.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		cmd, comment := m[1], m[2]
		var want, mode string
		switch c := comment[0]; {
		case c >= '0' && c <= '9':
			want, mode = strings.TrimRight(strings.Fields(comment)[0], ":;"), "text"
		case c == '{' || c == '"':
			want, mode = comment, "json"
		case !strings.Contains(comment, " "):
			want, mode = comment, "text"
		default:
			continue // prose
		}
		lines[i] = fmt.Sprintf("__out=$(%s); __check \"$__out\" '%s' %s %d", cmd,
			strings.ReplaceAll(want, "'", `'\''`), mode, b.line+i)
	}
	return strings.Join(lines, "\n")
}

// cleanEnv is the environment of the blocks: the test's, without the
// HDS_ variables the walk-through sets itself.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HDS_") {
			out = append(out, kv)
		}
	}
	return out
}
