package main

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeMetricsCountsBackups: a backup made over HTTP counts in
// hds_backups_total{outcome="succeeded"} (the backups' outcome reaches
// the metrics through backups.Dir.Outcome), and nothing counts as failed.
func TestServeMetricsCountsBackups(t *testing.T) {
	cfg, _ := sqliteConfig(t, `"metrics": {"addr": "127.0.0.1:0"}`)
	s := start(t, []string{"-config", cfg}, nil)
	m := metricsLine.FindStringSubmatch(s.stdout.String())
	require.NotNil(t, m, "stdout names the metrics URL:\n%s", s.stdout.String())
	families, _ := scrape(t, m[1])
	before, ok := value(families["hds_backups_total"], map[string]string{"outcome": "succeeded"})
	require.True(t, ok, "hds_backups_total{outcome=succeeded} is there from the first scrape")
	assert.Zero(t, before)

	alice := login(t, s.url, "alice", testPassword)
	mustCall(t, "POST", s.url+"/api/v1/backups", alice, nil, http.StatusCreated)

	families, _ = scrape(t, m[1])
	got, _ := value(families["hds_backups_total"], map[string]string{"outcome": "succeeded"})
	failed, _ := value(families["hds_backups_total"], map[string]string{"outcome": "failed"})
	assert.Equal(t, 1.0, got, "one backup made")
	assert.Zero(t, failed)
}
