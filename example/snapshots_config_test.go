package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// TestSnapshotsConfig: snapshots.keep_automatic and
// limits.max_snapshots_per_project (docs/api.md#snapshots-and-rollback-v13):
// their defaults, 0 (none kept; no bound), and negatives refused.
func TestSnapshotsConfig(t *testing.T) {
	cfg, err := loadConfig(writeConfig(t, `{}`), environ(nil))
	require.NoError(t, err)
	assert.Equal(t, 20, cfg.keepAutomaticSnapshots)
	assert.Equal(t, 100, cfg.quotas().MaxSnapshotsPerProject)

	cfg, err = loadConfig(writeConfig(t, `{"snapshots":{"keep_automatic":0},"limits":{"max_snapshots_per_project":0}}`), environ(nil))
	require.NoError(t, err)
	assert.Zero(t, cfg.keepAutomaticSnapshots)
	assert.Equal(t, store.Unlimited, cfg.quotas().MaxSnapshotsPerProject, "0 is no bound")

	cfg, err = loadConfig(writeConfig(t, `{"snapshots":{"keep_automatic":3},"limits":{"max_snapshots_per_project":7}}`), environ(nil))
	require.NoError(t, err)
	assert.Equal(t, 3, cfg.keepAutomaticSnapshots)
	assert.Equal(t, 7, cfg.quotas().MaxSnapshotsPerProject)

	for _, bad := range []string{`{"snapshots":{"keep_automatic":-1}}`, `{"limits":{"max_snapshots_per_project":-1}}`,
		`{"snapshots":{"keep":1}}`} {
		_, err := loadConfig(writeConfig(t, bad), environ(nil))
		assert.Error(t, err, bad)
	}
}
