package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestREADMEWalkthrough follows README.md as a reader does, so that it
// cannot drift from what hds does: the README's first command, `go run
// ./example`, in an empty directory (the example built once, as the
// README builds hds-example; on a free port rather than 8080), then
// every sh block of the README, in order, in bash with set -euo
// pipefail, the shell variables of one block carried to the next, the
// password the server printed typed in where a block reads it. An error
// answer fails the block (curl gets --fail-with-body), except for a
// command followed by a comment that says what it prints: a comment
// that starts with a number, a quote or "{", or that is one word, is
// checked (a number: the whole output; JSON: white space aside).
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
	first := regexp.MustCompile(`(?m)^    (\S.*)$`).FindStringSubmatch(text)
	if first == nil || first[1] != "go run ./example" {
		t.Fatalf("README.md: the first command is %q, want go run ./example", first)
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "hds-example")
	build := exec.Command("go", "build", "-o", exe, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// The first command, in a directory of its own, as a reader runs it.
	var stdout, stderr syncBuffer
	server := exec.Command(exe)
	server.Dir = dir
	server.Env = append(cleanEnv(), "HDS_ADDR=127.0.0.1:0")
	server.Stdout, server.Stderr = &stdout, &stderr
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = server.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- server.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = server.Process.Kill()
			<-done
		}
	})
	started := regexp.MustCompile(`(?s)hds listening on (\S+)\n.*user "admin" was created with the password:\n\s+(\S+)\n`)
	var base, password string
	for deadline := time.Now().Add(time.Minute); base == ""; time.Sleep(20 * time.Millisecond) {
		if m := started.FindStringSubmatch(stdout.String()); m != nil {
			base, password = m[1], m[2]
		} else if time.Now().After(deadline) {
			t.Fatalf("the server did not start, or printed no password: %s %s", stdout.String(), stderr.String())
		}
	}

	blocks := shBlocks(text, 0)
	if len(blocks) < 7 {
		t.Fatalf("README.md: %d sh blocks, want the walk-through's", len(blocks))
	}
	if !strings.Contains(blocks[0].code, "H=http://127.0.0.1:8080\n") || !strings.Contains(blocks[0].code, "read -rsp") {
		t.Fatal("README.md: the first sh block does not set H=http://127.0.0.1:8080 and read the password")
	}
	blocks[0].code = strings.Replace(blocks[0].code, "H=http://127.0.0.1:8080\n", "H="+base+"\n", 1)
	vars := shVariables(blocks)
	for _, b := range blocks {
		script := walkPrelude + checked(b) + "\ndeclare -p " + strings.Join(vars, " ") + " > state 2>/dev/null || true\n"
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = dir
		cmd.Env = cleanEnv()
		cmd.Stdin = strings.NewReader(password + "\n") // typed where a block reads it
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("README.md block at line %d: %v\n%s\nthe server's log:\n%s", b.line, err, out, stderr.String())
		}
	}
}

// walkPrelude starts every block: strict mode, the state of the blocks
// before, curl failing on an error answer (but where the README says
// what a command prints: then the check decides), and the check of a
// printed result.
const walkPrelude = `set -euo pipefail
if [ -f state ]; then . ./state; fi
curl() {
  if [ -n "${__said:-}" ]; then command curl "$@"; else command curl --fail-with-body "$@"; fi
}
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

// continued is the last line of a command of several lines with a
// comment after it.
var continued = regexp.MustCompile(`^(\s*\S.*?)\s{2,}# (.+)$`)

// checked returns the block with each command whose comment says what it
// prints turned into a check of it. A command of several lines (each but
// the last ending in a backslash) is checked by the comment of its last
// line, unless it starts inside a quoted text of lines before.
func checked(b shBlock) string {
	lines := strings.Split(b.code, "\n")
	var out []string
	quotes := 0 // single quotes so far: odd inside a quoted text
	for i := 0; i < len(lines); i++ {
		from := i
		for i < len(lines)-1 && strings.HasSuffix(lines[i], `\`) {
			i++
		}
		command := lines[from : i+1]
		inQuote := quotes%2 == 1
		for _, l := range command {
			quotes += strings.Count(l, "'")
		}
		m := expectation.FindStringSubmatch(lines[i])
		if i > from {
			m = continued.FindStringSubmatch(lines[i])
		}
		if m == nil || inQuote {
			out = append(out, command...)
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
			out = append(out, command...) // prose
			continue
		}
		cmd = strings.Join(append(slices.Clone(command[:len(command)-1]), cmd), "\n")
		out = append(out, fmt.Sprintf("__out=$(__said=1; %s); __check \"$__out\" '%s' %s %d", cmd,
			strings.ReplaceAll(want, "'", `'\''`), mode, b.line+i))
	}
	return strings.Join(out, "\n")
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
