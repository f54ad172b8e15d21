package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// TestConfigQuotas: the quotas of limits.* reach the store the example
// serves (docs/api.md#8-limits-rate-limits-and-quotas).
func TestConfigQuotas(t *testing.T) {
	cfg, err := loadConfig(writeConfig(t, `{"limits": {"max_projects_per_user": 1, "max_records_per_cluster": 1,
		"max_bytes_per_project": 0}}`), environ(nil))
	require.NoError(t, err, "loadConfig")
	st, _, closeFn, err := openStore(t.Context(), cfg)
	require.NoError(t, err, "openStore")
	defer closeFn()
	ctx := t.Context()
	p := store.Path{Caller: store.Caller{UserID: "u"}, Project: "p", Collection: "c", Cluster: "k", Record: "a"}
	_, err = st.CreateProject(ctx, p)
	require.NoError(t, err)
	_, err = st.CreateProject(ctx, store.Path{Caller: store.Caller{UserID: "u"}, Project: "q"})
	var qe *store.QuotaError
	if assert.ErrorAs(t, err, &qe, "a 2nd project") {
		assert.Equal(t, store.QuotaProjectsPerUser, qe.Quota)
	}
	_, err = st.CreateCollection(ctx, p)
	require.NoError(t, err)
	_, err = st.CreateCluster(ctx, p)
	require.NoError(t, err)
	_, err = st.CreateRecord(ctx, p, &store.Record{Type: store.Integer, Value: json.RawMessage("1")}, store.Write{})
	require.NoError(t, err)
	p.Record = "b"
	_, err = st.CreateRecord(ctx, p, &store.Record{Type: store.Integer, Value: json.RawMessage("1")}, store.Write{})
	if assert.ErrorAs(t, err, &qe, "a 2nd record") {
		assert.Equal(t, store.QuotaRecordsPerCluster, qe.Quota)
	}
}

// TestConfigQuotaZeroMeansNone: a limits.* quota set to 0 means no bound
// (docs/api.md#8-limits-rate-limits-and-quotas), although a store.Quotas field left 0 takes its
// default: the store the example opens enforces store.Unlimited there,
// the configured bound elsewhere.
func TestConfigQuotaZeroMeansNone(t *testing.T) {
	cfg, err := loadConfig(writeConfig(t, `{"limits": {"max_records_per_cluster": 0, "max_bytes_per_project": 0,
		"max_projects_per_user": 7}}`), environ(nil))
	require.NoError(t, err, "loadConfig")
	st, _, closeFn, err := openStore(t.Context(), cfg)
	require.NoError(t, err, "openStore")
	defer closeFn()
	mem, ok := st.(*memory.Store)
	require.True(t, ok, "the configuration names the in-memory store, got %T", st)
	assert.Equal(t, store.Quotas{MaxRecordsPerCluster: store.Unlimited, MaxBytesPerProject: store.Unlimited, MaxProjectsPerUser: 7,
		MaxWebhooksPerProject: 20, MaxSnapshotsPerProject: 100}, mem.Quotas(), "the quotas in force")

	cfg, err = loadConfig(writeConfig(t, `{}`), environ(nil))
	require.NoError(t, err, "loadConfig")
	assert.Equal(t, store.DefaultQuotas, cfg.quotas(), "limits.* left out")
}

// TestConfigWebhooksQuotaZero: limits.max_webhooks_per_project 0 is no
// bound, as for every quota of limits.* (docs/api.md#22-webhooks: "0
// none", read as section 8 reads it): a 21st webhook is created.
func TestConfigWebhooksQuotaZero(t *testing.T) {
	cfg, err := loadConfig(writeConfig(t, `{"limits": {"max_webhooks_per_project": 0}}`), environ(nil))
	require.NoError(t, err, "loadConfig")
	st, _, closeFn, err := openStore(t.Context(), cfg)
	require.NoError(t, err, "openStore")
	defer closeFn()
	mem, ok := st.(*memory.Store)
	require.True(t, ok, "the in-memory store, got %T", st)
	assert.Equal(t, store.Unlimited, mem.Quotas().MaxWebhooksPerProject, "no bound")
	p := store.Path{Project: "web", Need: store.RightAdmin}
	_, err = mem.CreateProject(t.Context(), p)
	require.NoError(t, err)
	for i := range store.DefaultQuotas.MaxWebhooksPerProject + 1 {
		_, err = mem.CreateWebhook(t.Context(), p, &store.Webhook{URL: fmt.Sprintf("https://hooks.example/%d", i), Secret: []byte("0123456789abcdef")})
		require.NoError(t, err, "webhook %d", i+1)
	}
}
