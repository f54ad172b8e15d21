package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
)

// The command snapshot (docs/api.md#snapshots-and-rollback-v13): a client
// of POST P/snapshots, GET P/snapshots and DELETE P/snapshots/{name}. A
// rollback is promote -from-snapshot (compare.go).

const snapshotUsage = `snapshot create [-url URL] [-description TEXT] P COLLECTION[/CLUSTER] NAME   keep a copy of a collection or cluster as it is now
snapshot list [-url URL] [-collection C] P   the snapshots of P, newest first
snapshot delete [-url URL] P NAME   delete a snapshot (admin)
`

// snapshotJSON is a snapshot as the API answers it.
type snapshotJSON struct {
	Name        string  `json:"name"`
	Collection  string  `json:"collection"`
	Cluster     *string `json:"cluster"`
	Description string  `json:"description"`
	Revision    int64   `json:"revision"`
	Records     int     `json:"records"`
	Automatic   bool    `json:"automatic"`
	CreatedAt   string  `json:"created_at"`
	CreatedBy   string  `json:"created_by"`
}

// of is what the snapshot was taken of: "COLLECTION" or "COLLECTION/CLUSTER".
func (s *snapshotJSON) of() string {
	if s.Cluster == nil {
		return s.Collection
	}
	return s.Collection + "/" + *s.Cluster
}

// snapshotsPageSize is how many snapshots snapshot list asks for at a time.
const snapshotsPageSize = 100

// runSnapshot runs "snapshot create|list|delete ...".
func runSnapshot(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("snapshot needs an action: create, list or delete")
	}
	switch args[0] {
	case "create":
		return runSnapshotCreate(ctx, e, args[1:])
	case "list":
		return runSnapshotList(ctx, e, args[1:])
	case "delete":
		return runSnapshotDelete(ctx, e, args[1:])
	}
	return usagef("unknown snapshot action %q: use create, list or delete", args[0])
}

// runSnapshotCreate runs "snapshot create [-url URL] [-description TEXT]
// P COLLECTION[/CLUSTER] NAME": POST P/snapshots, then one line saying
// what was kept.
func runSnapshotCreate(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("snapshot create", flag.ContinueOnError)
	urlFlag := clientFlags(fs)
	description := fs.String("description", "", "what the snapshot is for (`TEXT`, shown by snapshot list)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 3 || fs.Arg(0) == "" || fs.Arg(1) == "" || fs.Arg(2) == "" {
		return usagef("snapshot create takes exactly three arguments: the project, COLLECTION or COLLECTION/CLUSTER, and the snapshot's name")
	}
	col, clu, isCluster := strings.Cut(fs.Arg(1), "/")
	if col == "" || (isCluster && clu == "") {
		return usagef("snapshot create: %q is not COLLECTION or COLLECTION/CLUSTER", fs.Arg(1))
	}
	c, err := newAPIClient(e, *urlFlag)
	if err != nil {
		return fmt.Errorf("snapshot create: %w", err)
	}
	body := map[string]any{"name": fs.Arg(2), "collection": col}
	if isCluster {
		body["cluster"] = clu
	}
	if *description != "" {
		body["description"] = *description
	}
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("snapshot create: %w", err)
	}
	path := projectPath(fs.Arg(0)) + "/snapshots"
	resp, err := c.do(ctx, "POST", path, nil, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("snapshot create: %w", err)
	}
	defer resp.Body.Close()
	var answer struct {
		Data *snapshotJSON `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || answer.Data == nil {
		return fmt.Errorf("snapshot create: POST %s: the answer is not a snapshot", path)
	}
	s := answer.Data
	fmt.Fprintf(e.stdout, "snapshot %s: %d records of %s at revision %d\n", s.Name, s.Records, s.of(), s.Revision)
	return nil
}

// runSnapshotList runs "snapshot list [-url URL] [-collection C] P": every
// page of GET P/snapshots as a table, newest first.
func runSnapshotList(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("snapshot list", flag.ContinueOnError)
	urlFlag := clientFlags(fs)
	collection := fs.String("collection", "", "only the snapshots of the collection `C` (and of its clusters)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		return usagef("snapshot list takes exactly one argument, the project")
	}
	c, err := newAPIClient(e, *urlFlag)
	if err != nil {
		return fmt.Errorf("snapshot list: %w", err)
	}
	path := projectPath(fs.Arg(0)) + "/snapshots"
	var all []snapshotJSON
	for {
		query := url.Values{"limit": {strconv.Itoa(snapshotsPageSize)}, "offset": {strconv.Itoa(len(all))}}
		if *collection != "" {
			query.Set("collection", *collection)
		}
		page, total, err := snapshotsPage(ctx, c, path, query)
		if err != nil {
			return fmt.Errorf("snapshot list: %w", err)
		}
		all = append(all, page...)
		// A snapshot deleted meanwhile shortens the list: a short page ends it.
		if len(page) < snapshotsPageSize || len(all) >= total {
			break
		}
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tOF\tREVISION\tRECORDS\tCREATED\tBY\tDESCRIPTION")
	for _, s := range all {
		desc := s.Description
		if s.Automatic {
			desc = strings.TrimSpace("(automatic) " + desc)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", s.Name, s.of(), s.Revision, s.Records, s.CreatedAt, s.CreatedBy, oneLine(desc))
	}
	return tw.Flush()
}

// snapshotsPage reads one page of GET P/snapshots and the list's total.
func snapshotsPage(ctx context.Context, c *apiClient, path string, query url.Values) ([]snapshotJSON, int, error) {
	resp, err := c.do(ctx, "GET", path, query, nil)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	var answer struct {
		Data *struct {
			Items []snapshotJSON `json:"items"`
			Total int            `json:"total"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || answer.Data == nil {
		return nil, 0, fmt.Errorf("GET %s: the answer is not a list of snapshots", path)
	}
	return answer.Data.Items, answer.Data.Total, nil
}

// oneLine keeps a description on its row of the table: line breaks and
// tabs become spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

// runSnapshotDelete runs "snapshot delete [-url URL] P NAME": DELETE
// P/snapshots/{name}.
func runSnapshotDelete(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("snapshot delete", flag.ContinueOnError)
	urlFlag := clientFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 || fs.Arg(0) == "" || fs.Arg(1) == "" {
		return usagef("snapshot delete takes exactly two arguments: the project and the snapshot's name")
	}
	c, err := newAPIClient(e, *urlFlag)
	if err != nil {
		return fmt.Errorf("snapshot delete: %w", err)
	}
	path := projectPath(fs.Arg(0)) + "/snapshots/" + url.PathEscape(fs.Arg(1))
	resp, err := c.do(ctx, "DELETE", path, nil, nil)
	if err != nil {
		return fmt.Errorf("snapshot delete: %w", err)
	}
	resp.Body.Close()
	fmt.Fprintf(e.stdout, "snapshot %s deleted\n", fs.Arg(1))
	return nil
}
