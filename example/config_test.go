package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// TestConfigV11Keys: every key of docs/api.md#14-the-standalone-server
// (v1.1) is read, with its default when left out.
func TestConfigV11Keys(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		cfg, err := loadConfig(writeConfig(t, `{}`), environ(nil))
		require.NoError(t, err, "loadConfig")
		assert.Equal(t, dbSettings{maxOpenConns: 4, timeout: 5 * time.Second}, cfg.db, "database.*")
		assert.Equal(t, serverSettings{maxConnections: 10000, idleTimeout: 60 * time.Second,
			readHeaderTimeout: 10 * time.Second, readTimeout: 30 * time.Second, writeTimeout: 30 * time.Second,
			maxHeaderBytes: 64 << 10}, cfg.server, "server.*")
		assert.False(t, cfg.requireIfMatch, "concurrency.require_if_match")
		assert.Equal(t, 10, cfg.historyMaxVersions, "history.max_versions")
		assert.Equal(t, 15*time.Second, cfg.eventsKeepalive, "events.keepalive")
		assert.Equal(t, 10, cfg.eventsMaxStreamsPerUser, "events.max_streams_per_user")
		assert.Equal(t, limitSettings{maxImportBytes: 16 << 20, maxRecordsPerCluster: 100_000,
			maxBytesPerProject: 256 << 20, maxProjectsPerUser: 1000, maxResolvedBytes: 16 << 20, maxWebhooksPerProject: 20,
			maxSnapshotsPerProject: 100}, cfg.limits, "limits.*")
		assert.True(t, cfg.consoleEnabled, "console.enabled")
		assert.Equal(t, hds.Webhooks{Enabled: true, Timeout: 10 * time.Second, MaxBackoff: time.Hour, MaxAttempts: 10,
			MaxPending: 10_000, KeepDeliveries: 7 * 24 * time.Hour},
			cfg.webhooks, "webhooks.*: on in the example, private addresses refused")
	})

	t.Run("every key set", func(t *testing.T) {
		cfg, err := loadConfig(writeConfig(t, `{
  "concurrency": {"require_if_match": true},
  "history": {"max_versions": 0},
  "events": {"keepalive": "5s", "max_streams_per_user": 3},
  "limits": {"max_import_bytes": 1048576, "max_records_per_cluster": 0, "max_bytes_per_project": 1073741824,
             "max_projects_per_user": 7, "max_resolved_bytes": 4096, "max_webhooks_per_project": 3},
  "console": {"enabled": false},
  "webhooks": {"enabled": false, "timeout": "3s", "max_backoff": "5m", "max_attempts": 4, "allow_private_addresses": true,
               "max_pending": 50, "keep_deliveries": "1d"},
  "database": {"max_open_conns": 8, "timeout": "2s"},
  "server": {"max_connections": 50, "idle_timeout": "30s", "read_header_timeout": "2s", "read_timeout": "1m",
             "write_timeout": "45s", "max_header_bytes": 8192}
}`), environ(nil))
		require.NoError(t, err, "loadConfig")
		assert.Equal(t, dbSettings{maxOpenConns: 8, timeout: 2 * time.Second}, cfg.db, "database.*")
		assert.Equal(t, serverSettings{maxConnections: 50, idleTimeout: 30 * time.Second,
			readHeaderTimeout: 2 * time.Second, readTimeout: time.Minute, writeTimeout: 45 * time.Second,
			maxHeaderBytes: 8192}, cfg.server, "server.*")
		assert.True(t, cfg.requireIfMatch, "concurrency.require_if_match")
		assert.Equal(t, 0, cfg.historyMaxVersions, "history.max_versions")
		assert.Equal(t, 5*time.Second, cfg.eventsKeepalive, "events.keepalive")
		assert.Equal(t, 3, cfg.eventsMaxStreamsPerUser, "events.max_streams_per_user")
		assert.Equal(t, limitSettings{maxImportBytes: 1 << 20, maxRecordsPerCluster: 0,
			maxBytesPerProject: 1 << 30, maxProjectsPerUser: 7, maxResolvedBytes: 4096, maxWebhooksPerProject: 3,
			maxSnapshotsPerProject: 100}, cfg.limits, "limits.*")
		assert.False(t, cfg.consoleEnabled, "console.enabled")
		assert.Equal(t, hds.Webhooks{Timeout: 3 * time.Second, MaxBackoff: 5 * time.Minute, MaxAttempts: 4,
			AllowPrivateAddresses: true, MaxPending: 50, KeepDeliveries: 24 * time.Hour}, cfg.webhooks, "webhooks.*")
	})

	for _, tt := range []struct{ name, config, want string }{
		{"unknown v1.1 key", `{"server": {"max_conns": 1}}`, `unknown field "server.max_conns"`},
		{"unknown section", `{"histroy": {}}`, `unknown field "histroy"`},
		{"require_if_match not a boolean", `{"concurrency": {"require_if_match": 1}}`, `field "concurrency.require_if_match" must be true or false`},
		{"console.enabled not a boolean", `{"console": {"enabled": "yes"}}`, `field "console.enabled" must be true or false`},
		{"negative max_versions", `{"history": {"max_versions": -1}}`, "history.max_versions must not be negative (0 means none), got -1"},
		{"zero streams", `{"events": {"max_streams_per_user": 0}}`, "events.max_streams_per_user must be a positive number, got 0"},
		{"bad keepalive", `{"events": {"keepalive": "often"}}`, `events.keepalive: invalid duration "often"`},
		{"zero keepalive", `{"events": {"keepalive": "0s"}}`, `events.keepalive must be longer than zero, got "0s"`},
		{"zero import limit", `{"limits": {"max_import_bytes": 0}}`, "limits.max_import_bytes must be a positive number, got 0"},
		{"zero resolved bytes", `{"limits": {"max_resolved_bytes": 0}}`, "limits.max_resolved_bytes must be a positive number, got 0"},
		{"negative resolved bytes", `{"limits": {"max_resolved_bytes": -1}}`, "limits.max_resolved_bytes must be a positive number, got -1"},
		{"negative quota", `{"limits": {"max_projects_per_user": -5}}`, "limits.max_projects_per_user must not be negative (0 means none), got -5"},
		{"fractional quota", `{"limits": {"max_bytes_per_project": 1.5}}`, `field "limits.max_bytes_per_project" must be a whole number`},
		{"zero pool", `{"database": {"max_open_conns": 0}}`, "database.max_open_conns must be a positive number, got 0"},
		{"bad database timeout", `{"database": {"timeout": "5"}}`, `database.timeout: invalid duration "5"`},
		{"zero connections", `{"server": {"max_connections": 0}}`, "server.max_connections must be a positive number, got 0"},
		{"zero header bytes", `{"server": {"max_header_bytes": 0}}`, "server.max_header_bytes must be a positive number, got 0"},
		{"negative idle timeout", `{"server": {"idle_timeout": "-1s"}}`, "server.idle_timeout: duration must not be negative"},
		{"webhooks.enabled not a boolean", `{"webhooks": {"enabled": 1}}`, `field "webhooks.enabled" must be true or false`},
		{"zero webhook attempts", `{"webhooks": {"max_attempts": 0}}`, "webhooks.max_attempts must be a positive number, got 0"},
		{"zero webhook timeout", `{"webhooks": {"timeout": "0s"}}`, `webhooks.timeout must be longer than zero, got "0s"`},
		{"bad webhook backoff", `{"webhooks": {"max_backoff": "soon"}}`, `webhooks.max_backoff: invalid duration "soon"`},
		{"zero max_pending", `{"webhooks": {"max_pending": 0}}`, "webhooks.max_pending must be a positive number, got 0"},
		{"zero keep_deliveries", `{"webhooks": {"keep_deliveries": "0s"}}`, `webhooks.keep_deliveries must be longer than zero, got "0s"`},
		{"negative webhooks quota", `{"limits": {"max_webhooks_per_project": -1}}`, "limits.max_webhooks_per_project must not be negative"},
		{"zero read header timeout", `{"server": {"read_header_timeout": "0s"}}`, `server.read_header_timeout must be longer than zero, got "0s"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadConfig(writeConfig(t, tt.config), environ(nil))
			require.Error(t, err, "loadConfig")
			assert.Contains(t, err.Error(), tt.want, "loadConfig's error")
		})
	}

	t.Run("every problem at once", func(t *testing.T) {
		_, err := loadConfig(writeConfig(t, `{"server": {"max_connections": 0}, "events": {"keepalive": "x"}}`), environ(nil))
		require.Error(t, err, "loadConfig")
		assert.Contains(t, err.Error(), "server.max_connections", "loadConfig's error")
		assert.Contains(t, err.Error(), "events.keepalive", "loadConfig's error")
	})
}
