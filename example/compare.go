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
// import.

const diffUsage = `diff [-url URL] [-reveal] [-unchanged] P FROM TO   compare two collections (C) or clusters (C/K) of P
`

const promoteUsage = `promote [-url URL] [-delete] [-dry-run] [-if-revision N] [-record NAME]... P FROM TO   make TO hold what FROM holds
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

// compareArgs checks the arguments P FROM TO of diff and promote.
func compareArgs(fs *flag.FlagSet) error {
	if fs.NArg() != 3 || fs.Arg(0) == "" || fs.Arg(1) == "" || fs.Arg(2) == "" {
		return usagef("%s takes exactly three arguments: the project, FROM and TO (COLLECTION or COLLECTION/CLUSTER)", fs.Name())
	}
	return nil
}

// runDiff runs "diff [-url URL] [-reveal] [-unchanged] P FROM TO": one
// line per item ("changed app/host: STRING "a" -> STRING "b""), then the
// counts by name and the revision compared.
func runDiff(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	urlFlag := clientFlags(fs)
	reveal := fs.Bool("reveal", false, "show credential values in plain text (needs the reader role; audited)")
	unchanged := fs.Bool("unchanged", false, "also list the unchanged records")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := compareArgs(fs); err != nil {
		return err
	}
	c, err := newAPIClient(e, *urlFlag)
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	query := url.Values{"from": {fs.Arg(1)}, "to": {fs.Arg(2)}}
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
// [-record NAME]... P FROM TO": POST P/promote, and the summary printed as
// import prints it.
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
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := compareArgs(fs); err != nil {
		return err
	}
	if *ifRevision < 0 {
		return usagef("promote: -if-revision must be a positive revision, got %d", *ifRevision)
	}
	c, err := newAPIClient(e, *urlFlag)
	if err != nil {
		return fmt.Errorf("promote: %w", err)
	}
	body := map[string]any{"from": fs.Arg(1), "to": fs.Arg(2), "delete": *del, "dry_run": *dryRun}
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
