package main

import (
	"strings"
	"testing"
)

// TestLoadConfigConcurrencyAndHistory reads concurrency.require_if_match
// and history.max_versions
// (docs/api.md#concurrency-control-and-record-history), with their
// defaults.
func TestLoadConfigConcurrencyAndHistory(t *testing.T) {
	for _, tt := range []struct {
		name, config string
		require      bool
		keep         int
	}{
		{"defaults", `{}`, false, 10},
		{"set", `{"concurrency": {"require_if_match": true}, "history": {"max_versions": 3}}`, true, 3},
		{"no history", `{"history": {"max_versions": 0}}`, false, 0},
	} {
		cfg, err := loadConfig(writeConfig(t, tt.config), environ(nil))
		if err != nil {
			t.Fatalf("%s: loadConfig: %v", tt.name, err)
		}
		if cfg.requireIfMatch != tt.require || cfg.historyMaxVersions != tt.keep {
			t.Errorf("%s: require_if_match %v, max_versions %d; want %v, %d", tt.name, cfg.requireIfMatch, cfg.historyMaxVersions, tt.require, tt.keep)
		}
	}
	for config, want := range map[string]string{
		`{"history": {"max_versions": -1}}`:             "history.max_versions must not be negative",
		`{"concurrency": {"require_if_match": "yes"}}`:  "concurrency.require_if_match",
		`{"history": {"max_version": 1}}`:               `unknown field "history.max_version"`,
		`{"concurrency": {"require_if_matches": true}}`: `unknown field "concurrency.require_if_matches"`,
	} {
		_, err := loadConfig(writeConfig(t, config), environ(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", config, err, want)
		}
	}
}
