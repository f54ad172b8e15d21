package e2e_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// GET K?types=true (docs/api.md#the-go-client): the cluster data with
// types, every record name mapped to its type name; the cluster tag is
// the same with or without it.

func TestClusterTypes(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		c.addRecord(alice, K, "port", "INTEGER", "5432")
		c.addRecord(alice, K, "ratio", "FLOAT", "0.5")
		c.addRecord(alice, K, "pw", "CREDENTIAL", `"s3cret"`)
		c.addRecord(alice, K, "hosts", "[]STRING", `["a","b"]`)
		c.addRecord(alice, K, "url", "STRING", `"http://${hosts}"`)
		c.addRecord(alice, K, "nothing", "NULL", "null")
		want := map[string]string{"port": "INTEGER", "ratio": "FLOAT", "pw": "CREDENTIAL", "hosts": "[]STRING", "url": "STRING", "nothing": "NULL"}

		var tags []string
		for _, q := range []string{"?types=true", "?types=true&reveal=true", "?types=true&resolve=true&reveal=true", "?types=false", ""} {
			status, h, env := c.do("GET", K+q, "", alice)
			require.Equal(t, http.StatusOK, status, "GET K%s", q)
			tags = append(tags, h.Get("ETag"))
			var got struct {
				Data  map[string]json.RawMessage `json:"data"`
				Types map[string]string          `json:"types"`
			}
			env.decode(t, &got)
			assert.Len(t, got.Data, len(want), "GET K%s: data", q)
			if q == "?types=false" || q == "" {
				var fields map[string]json.RawMessage
				env.decode(t, &fields)
				assert.NotContains(t, fields, "types", "GET K%s has no types", q)
				continue
			}
			assert.Equal(t, want, got.Types, "GET K%s: types", q)
		}
		// The tag with resolve=true covers what the references reach; the
		// others name the cluster's stored state: types changes neither.
		assert.Equal(t, tags[0], tags[1], "types=true, revealed")
		assert.Equal(t, tags[0], tags[3], "types=false")
		assert.Equal(t, tags[0], tags[4], "no types")
		res := c.raw(request("GET", K+"?resolve=true&reveal=true", "", alice))
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		resolvedTag := res.Header.Get("ETag")
		assert.Equal(t, resolvedTag, tags[2], "types=true with resolve=true")

		// An empty cluster has an empty types object.
		c.mustDo("POST", pathK("web", "prod", "empty"), "", alice, http.StatusCreated)
		env := c.mustDo("GET", pathK("web", "prod", "empty")+"?types=true", "", alice, http.StatusOK)
		var empty struct {
			Types map[string]string `json:"types"`
		}
		env.decode(t, &empty)
		assert.NotNil(t, empty.Types, "an empty cluster: types is {}")
		assert.Empty(t, empty.Types)
	})
}

func TestClusterTypesBadRequests(t *testing.T) {
	c := newServer(t, memoryKind)
	alice := c.token("alice")
	c.tree(alice, "web", "prod", "k")
	K := pathK("web", "prod", "k")
	for _, v := range []string{"yes", "1", "TRUE", "", "false%00"} {
		status, _, env := c.do("GET", K+"?types="+v, "", alice)
		wantError(t, "types="+v, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		wantDetails(t, "types="+v, env, "types must be true or false")
	}
	for _, q := range []string{"?types=true&types=true", "?types=true&types=false"} {
		status, _, env := c.do("GET", K+q, "", alice)
		wantError(t, q, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		wantDetails(t, q, env, "the query parameter types is given more than once")
	}
	// With the env form, types is checked all the same.
	status, _, env := c.do("GET", K+"?format=env&types=maybe", "", alice)
	wantError(t, "format=env&types=maybe", status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
}
