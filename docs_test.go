package hds_test

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// apiAnchorRE finds a reference to a heading of docs/api.md, as comments
// and test messages cite it (the file's path, '#', the heading's anchor)
// and as README.md links to it.
var apiAnchorRE = regexp.MustCompile(`docs/api\.md#([A-Za-z0-9_-]*)`)

// TestDocsAPIAnchors checks that every anchor of docs/api.md cited in the Go
// files of the repository (every module: the walk goes into
// internal/e2e), in README.md and in docs/design.md, and every #anchor
// link inside docs/api.md itself, names a heading docs/api.md has, so
// that a reference stays true when headings are renumbered or renamed.
func TestDocsAPIAnchors(t *testing.T) {
	anchors := headingAnchors(t, "docs/api.md")
	if len(anchors) == 0 {
		t.Fatal("docs/api.md: no headings found")
	}
	check := func(file string, line int, anchor string) {
		if !anchors[anchor] {
			t.Errorf("%s:%d: anchor %q names no heading of docs/api.md", file, line, anchor)
		}
	}
	cited := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		eachLine(t, path, func(n int, text string) {
			for _, m := range apiAnchorRE.FindAllStringSubmatch(text, -1) {
				cited++
				check(path, n, m[1])
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited == 0 {
		t.Fatal("no anchor of docs/api.md cited in any .go file: the walk is broken")
	}
	// Markdown links: README.md links to docs/api.md by its path,
	// docs/design.md would as a sibling (api.md) and docs/api.md links
	// within itself (#anchor).
	links := []struct {
		file string
		re   *regexp.Regexp
	}{
		{"README.md", apiAnchorRE},
		{"docs/design.md", regexp.MustCompile(`\]\((?:\./)?api\.md#([^)\s]*)\)`)},
		{"docs/api.md", regexp.MustCompile(`\]\(#([^)\s]*)\)`)},
	}
	for _, l := range links {
		eachLine(t, l.file, func(n int, text string) {
			for _, m := range l.re.FindAllStringSubmatch(text, -1) {
				check(l.file, n, m[1])
			}
		})
	}
}

// headingAnchors returns the anchors GitHub gives the headings of the
// Markdown file name: a heading's text lower-cased, its spaces made '-',
// every character but letters, marks, numbers, '-' and connector
// punctuation such as '_' dropped, and the n-th
// repeat of an anchor suffixed "-n". Lines inside code fences are no
// headings.
func headingAnchors(t *testing.T, name string) map[string]bool {
	t.Helper()
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	eachLine(t, name, func(_ int, text string) {
		if strings.HasPrefix(strings.TrimSpace(text), "```") {
			fenced = !fenced
			return
		}
		if fenced {
			return
		}
		level := len(text) - len(strings.TrimLeft(text, "#"))
		if level == 0 || level > 6 || !strings.HasPrefix(text[level:], " ") {
			return
		}
		a := githubAnchor(strings.TrimSpace(text[level:]))
		if n := seen[a]; n > 0 {
			seen[a]++
			a += "-" + strconv.Itoa(n)
		} else {
			seen[a] = 1
		}
		anchors[a] = true
	})
	return anchors
}

// githubAnchor is the anchor GitHub makes of a heading's text.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || unicode.Is(unicode.Pc, r) || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// eachLine calls f with every line of the file name and its number.
func eachLine(t *testing.T, name string, f func(n int, text string)) {
	t.Helper()
	file, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	s := bufio.NewScanner(file)
	s.Buffer(nil, 1<<20)
	for n := 1; s.Scan(); n++ {
		f(n, s.Text())
	}
	if err := s.Err(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// mdLinkRE finds the target of a Markdown link or image: ](TARGET).
var mdLinkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks checks every relative link of README.md and of the
// pages of docs/ (links to files of the repository, and #anchors of
// Markdown pages, their own included): the file exists, and the anchor
// names a heading of it, so that moving a section from one page to
// another cannot leave a link behind.
func TestDocsLinks(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{"README.md"}, pages...)
	anchorsOf := map[string]map[string]bool{}
	links := 0
	for _, page := range pages {
		fenced := false
		eachLine(t, page, func(n int, text string) {
			if strings.HasPrefix(strings.TrimSpace(text), "```") {
				fenced = !fenced
			}
			if fenced {
				return
			}
			for _, m := range mdLinkRE.FindAllStringSubmatch(text, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				file, anchor, _ := strings.Cut(target, "#")
				path := page
				if file != "" {
					path = filepath.Join(filepath.Dir(page), file)
					if _, err := os.Stat(path); err != nil {
						t.Errorf("%s:%d: link %q: %v", page, n, target, err)
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(path, ".md") {
					continue
				}
				if anchorsOf[path] == nil {
					anchorsOf[path] = headingAnchors(t, path)
				}
				if !anchorsOf[path][anchor] {
					t.Errorf("%s:%d: link %q: no heading of %s has the anchor %q", page, n, target, path, anchor)
				}
			}
		})
	}
	if links < 20 {
		t.Fatalf("%d relative links found: the search is broken", links)
	}
}
