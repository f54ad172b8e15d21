package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
)

// The commands diff and promote (docs/api.md#compare-and-promote): a
// client of GET P/diff and POST P/promote, in the style of export and
// import. With -from-snapshot NAME a snapshot takes FROM's place
// (docs/api.md#snapshots-and-rollback-v13): diff shows what a rollback
// would change, promote -delete is the rollback.

const diffUsage = `diff [-url URL] [-reveal] [-unchanged] P FROM TO   compare two collections (C) or clusters (C/K) of P
diff [-url URL] [-reveal] [-unchanged] -from-snapshot NAME P TO   what rolling TO back to snapshot NAME would change
`

const promoteUsage = `promote [-url URL] [-delete] [-dry-run] [-if-revision N] [-record NAME]... P FROM TO   make TO hold what FROM holds
promote [-url URL] [-delete] [-dry-run] [-if-revision N] [-record NAME]... -from-snapshot NAME P TO   put TO back as snapshot NAME holds it (with -delete: exactly)
`

// diffAnswer is the answer of GET P/diff.
type diffAnswer struct {
	Revision int64 `json:"revision"`
	Items    []struct {
		Cluster string     `json:"cluster"`
		Record  string     `json:"record"`
		Change  string     `json:"change"`
		From    *diffValue `json:"from"`
		To      *diffValue `json:"to"`
	} `json:"items"`
	Summary struct {
		Added     int `json:"added"`
		Removed   int `json:"removed"`
		Changed   int `json:"changed"`
		Unchanged int `json:"unchanged"`
	} `json:"summary"`
}

// diffValue is one side of an item.
type diffValue struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// String is "TYPE value", the value as compact JSON.
func (v *diffValue) String() string {
	if v == nil {
		return "-"
	}
	var b bytes.Buffer
	if json.Compact(&b, v.Value) != nil {
		b.Reset()
		b.Write(v.Value)
	}
	return v.Type + " " + b.String()
}

// compareArgs checks the arguments P FROM TO of diff and promote, or P
// TO with -from-snapshot (fromSnapshot not ""), and returns the fields
// naming the two sides in a query or body: from (or from_snapshot) and
// to.
func compareArgs(fs *flag.FlagSet, fromSnapshot string) (map[string]string, error) {
	if fromSnapshot != "" {
		if fs.NArg() != 2 || fs.Arg(0) == "" || fs.Arg(1) == "" {
			return nil, usagef("%s -from-snapshot takes exactly two arguments: the project and TO (COLLECTION or COLLECTION/CLUSTER)", fs.Name())
		}
		return map[string]string{"from_snapshot": fromSnapshot, "to": fs.Arg(1)}, nil
	}
	if fs.NArg() != 3 || fs.Arg(0) == "" || fs.Arg(1) == "" || fs.Arg(2) == "" {
		return nil, usagef("%s takes exactly three arguments: the project, FROM and TO (COLLECTION or COLLECTION/CLUSTER)", fs.Name())
	}
	return map[string]string{"from": fs.Arg(1), "to": fs.Arg(2)}, nil
}

// fromSnapshotFlag adds -from-snapshot to the flags of diff or promote.
func fromSnapshotFlag(fs *flag.FlagSet) *string {
	return fs.String("from-snapshot", "", "compare from the snapshot `NAME` instead of FROM (then give only P and TO)")
}

// runDiff runs "diff [-url URL] [-reveal] [-unchanged] P FROM TO" (or
// "-from-snapshot NAME P TO"): one
// line per item ("changed app/host: STRING "a" -> STRING "b""), then the
// counts by name and the revision compared.
func runDiff(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	urlFlag := clientFlags(fs)
	reveal := fs.Bool("reveal", false, "show credential values in plain text (needs the reader role; audited)")
	unchanged := fs.Bool("unchanged", false, "also list the unchanged records")
	fromSnapshot := fromSnapshotFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	sides, err := compareArgs(fs, *fromSnapshot)
	if err != nil {
		return err
	}
	c, err := newAPIClient(e, *urlFlag)
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	query := url.Values{}
	for k, v := range sides {
		query.Set(k, v)
	}
	if *reveal {
		query.Set("reveal", "true")
	}
	if *unchanged {
		query.Set("unchanged", "true")
	}
	path := projectPath(fs.Arg(0)) + "/diff"
	resp, err := c.do(ctx, "GET", path, query, nil)
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	defer resp.Body.Close()
	var answer struct {
		Data *diffAnswer `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || answer.Data == nil {
		return fmt.Errorf("diff: GET %s: the answer is not a comparison", path)
	}
	d := answer.Data
	for _, it := range d.Items {
		switch it.Change {
		case "added":
			fmt.Fprintf(e.stdout, "added %s/%s: %s\n", it.Cluster, it.Record, it.From)
		case "removed":
			fmt.Fprintf(e.stdout, "removed %s/%s: %s\n", it.Cluster, it.Record, it.To)
		default:
			fmt.Fprintf(e.stdout, "%s %s/%s: %s -> %s\n", it.Change, it.Cluster, it.Record, it.From, it.To)
		}
	}
	fmt.Fprintf(e.stdout, "added: %d\nremoved: %d\nchanged: %d\nunchanged: %d\nrevision: %d\n",
		d.Summary.Added, d.Summary.Removed, d.Summary.Changed, d.Summary.Unchanged, d.Revision)
	return nil
}

// runPromote runs "promote [-url URL] [-delete] [-dry-run] [-if-revision N]
// [-record NAME]... P FROM TO" (or "-from-snapshot NAME P TO"): POST
// P/promote, and the summary printed as import prints it, then the name
// of the automatic snapshot the promote took (the one to undo it with).
func runPromote(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("promote", flag.ContinueOnError)
	urlFlag := clientFlags(fs)
	del := fs.Bool("delete", false, "also delete the records only TO holds")
	dryRun := fs.Bool("dry-run", false, "change nothing: print what the promote would do")
	ifRevision := fs.Int64("if-revision", 0, "apply only when the project is still at this `revision` (the one diff printed)")
	var records []string
	fs.Func("record", "promote only the record `NAME` (two clusters only; repeat for more)", func(s string) error {
		records = append(records, s)
		return nil
	})
	fromSnapshot := fromSnapshotFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	sides, err := compareArgs(fs, *fromSnapshot)
	if err != nil {
		return err
	}
	if *ifRevision < 0 {
		return usagef("promote: -if-revision must be a positive revision, got %d", *ifRevision)
	}
	c, err := newAPIClient(e, *urlFlag)
	if err != nil {
		return fmt.Errorf("promote: %w", err)
	}
	body := map[string]any{"delete": *del, "dry_run": *dryRun}
	for k, v := range sides {
		body[k] = v
	}
	if records != nil {
		body["records"] = records
	}
	if *ifRevision > 0 {
		body["if_revision"] = *ifRevision
	}
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("promote: %w", err)
	}
	path := projectPath(fs.Arg(0)) + "/promote"
	return postForSummary(ctx, e, c, "promote", path, nil, bytes.NewReader(b), "a promote summary", *dryRun)
}
