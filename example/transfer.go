package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
)

const exportUsage = `export [-url URL] [-reveal] P > file.json   print project P's export document
`

const importUsage = `import [-url URL] [-replace] [-dry-run] P < file.json   import an export document into P
`

// runExport runs "export [-url URL] [-reveal] P": GET P/export, the bare
// document copied to stdout as it arrives.
func runExport(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	urlFlag := clientFlags(fs)
	reveal := fs.Bool("reveal", false, "export credential values in plain text (needs the reader role; audited)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		return usagef("export takes exactly one argument, the project")
	}
	c, err := newAPIClient(e, *urlFlag)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	var query url.Values
	if *reveal {
		query = url.Values{"reveal": {"true"}}
	}
	path := projectPath(fs.Arg(0)) + "/export"
	resp, err := c.do(ctx, "GET", path, query, nil)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(e.stdout, resp.Body); err != nil {
		return fmt.Errorf("export: GET %s: %w", path, err)
	}
	return nil
}

// importSummary is the answer of POST P/import
// (docs/api.md#batch-export-and-import).
type importSummary struct {
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Deleted   int `json:"deleted"`
	Unchanged int `json:"unchanged"`
	Changes   []struct {
		Action     string `json:"action"`
		Collection string `json:"collection"`
		Cluster    string `json:"cluster"`
		Record     string `json:"record"`
	} `json:"changes"`
	Revision *int64 `json:"revision"`
	// Snapshot is the automatic snapshot a promote took before it changed
	// anything (docs/api.md#snapshots-and-rollback-v13); import has none.
	Snapshot *string `json:"snapshot"`
}

// runImport runs "import [-url URL] [-replace] [-dry-run] P": the export
// document on stdin goes to POST P/import, and the summary is printed:
// each count by name, then with -dry-run every change that would be made.
func runImport(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	urlFlag := clientFlags(fs)
	replace := fs.Bool("replace", false, "also delete what the document lacks (mode=replace; default merge)")
	dryRun := fs.Bool("dry-run", false, "change nothing: print what the import would do")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		return usagef("import takes exactly one argument, the project")
	}
	c, err := newAPIClient(e, *urlFlag)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	doc, err := io.ReadAll(e.stdin)
	if err != nil {
		return fmt.Errorf("import: read the document from stdin: %w", err)
	}
	if len(bytes.TrimSpace(doc)) == 0 {
		return errors.New("import: stdin is empty: give the export document on stdin (import P < file.json)")
	}
	mode := "merge"
	if *replace {
		mode = "replace"
	}
	query := url.Values{"mode": {mode}, "dry_run": {strconv.FormatBool(*dryRun)}}
	path := projectPath(fs.Arg(0)) + "/import"
	return postForSummary(ctx, e, c, "import", path, query, bytes.NewReader(doc), "an import summary", *dryRun)
}

// postForSummary POSTs body to path and prints the answer, the summary
// that import and promote both answer with (importSummary): its counts,
// then with dryRun what would change, else the revision it made and the
// automatic snapshot a promote took. cmd
// names the command in errors; what names the summary expected.
func postForSummary(ctx context.Context, e *env, c *apiClient, cmd, path string, query url.Values, body io.Reader, what string, dryRun bool) error {
	resp, err := c.do(ctx, "POST", path, query, body)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	defer resp.Body.Close()
	var answer struct {
		Data *importSummary `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || answer.Data == nil {
		return fmt.Errorf("%s: POST %s: the answer is not %s", cmd, path, what)
	}
	s := answer.Data
	fmt.Fprintf(e.stdout, "created: %d\nupdated: %d\ndeleted: %d\nunchanged: %d\n", s.Created, s.Updated, s.Deleted, s.Unchanged)
	if dryRun {
		for _, ch := range s.Changes {
			fmt.Fprintf(e.stdout, "would %s %s/%s/%s\n", ch.Action, ch.Collection, ch.Cluster, ch.Record)
		}
		fmt.Fprintln(e.stdout, "dry run: nothing was changed")
	} else if s.Revision != nil {
		fmt.Fprintf(e.stdout, "revision: %d\n", *s.Revision)
	}
	if !dryRun && s.Snapshot != nil && *s.Snapshot != "" {
		fmt.Fprintf(e.stdout, "snapshot: %s (promote -from-snapshot %s -delete undoes it)\n", *s.Snapshot, *s.Snapshot)
	}
	return nil
}
