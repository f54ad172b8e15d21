package e2e_test

// Issue 4: rotating the credential key.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// TestCredRotation: a new primary key with the old one listed reads what
// the old one sealed; RotateCredentials re-seals everything in batches,
// reports progress, can be run again at no cost and resumed, and then the
// old key can be dropped.
func TestCredRotation(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		k1, k2, k3 := credKey(t), credKey(t), credKey(t)
		cs := credNewServer(t, kind, hds.WithCredentialKey(k1))
		ctx := t.Context()
		alice, bob := cs.token("alice"), cs.token("bob")
		cs.tree(alice, "web", "prod", "k")
		cs.tree(bob, "bobs", "c", "k")

		type rec struct {
			target, token, want, id string
		}
		var recs []*rec
		add := func(token, kpath, name, typ string, value any) *rec {
			t.Helper()
			r := cs.addRecord(token, kpath, name, typ, credJSON(value))
			x := &rec{target: kpath + "/records/" + name, token: token, want: credJSON(value), id: r.ID}
			recs = append(recs, x)
			return x
		}
		K, BK := pathK("web", "prod", "k"), pathK("bobs", "c", "k")
		add(alice, K, "c1", "CREDENTIAL", credSecret("c1"))
		add(alice, K, "a1", "[]CREDENTIAL", []string{credSecret("a1-0"), credSecret("a1-1")})
		add(bob, BK, "b1", "CREDENTIAL", credSecret("b1"))
		add(alice, K, "c2", "CREDENTIAL", credSecret("c2"))
		add(bob, BK, "b2", "[]CREDENTIAL", []string{credSecret("b2-0")})
		plain := cs.addRecord(alice, K, "plain", "STRING", `"not a secret"`)

		readAll := func(what string, c *client) {
			t.Helper()
			for _, r := range recs {
				var got recordJSON
				status, _, env := c.do("GET", r.target+"?reveal=true", "", r.token)
				if !assert.Equal(t, http.StatusOK, status, "%s: GET %s with reveal=true: %s", what, r.target, env.raw) {
					continue
				}
				env.decode(t, &got)
				assert.Equal(t, r.want, compact(t, got.Value), "%s: %s reads", what, r.target)
			}
			c.mustDo("GET", K+"/records?reveal=true", "", alice, http.StatusOK)
			c.mustDo("GET", BK+"?reveal=true", "", bob, http.StatusOK)
		}
		cantRead := func(what string, c *client, r *rec) {
			t.Helper()
			status, _, env := c.do("GET", r.target+"?reveal=true", "", r.token)
			var plainText []string
			_ = json.Unmarshal([]byte(r.want), &plainText)
			if len(plainText) == 0 {
				var s string
				_ = json.Unmarshal([]byte(r.want), &s)
				plainText = []string{s}
			}
			credWant500(t, what+": "+r.target, status, env, plainText...)
		}

		// A new primary key, the old one listed: everything reads, and new
		// values are sealed by the new key.
		both := cs.attach(hds.WithCredentialKey(k2, k1))
		readAll("with K2 primary and K1 previous", both)
		n1 := &rec{target: K + "/records/n1", token: alice, want: credJSON(credSecret("n1"))}
		var created recordJSON
		both.mustDo("POST", K+"/records", fmt.Sprintf(`{"name":"n1","type":"CREDENTIAL","value":%s}`, n1.want), alice, 201).decode(t, &created)
		n1.id = created.ID
		recs = append(recs, n1)
		cantRead("a value sealed by K2, read with K1 alone", cs.client, n1)

		ids := make([]string, len(recs))
		underK2 := map[string]bool{n1.id: true}
		for i, r := range recs {
			ids[i] = r.id
		}
		slices.Sort(ids)

		// Rotation to K2, in batches of 2.
		var reports []hds.RotationProgress
		rot := hds.Rotation{Primary: k2, Previous: [][]byte{k1}, BatchSize: 2,
			Progress: func(p hds.RotationProgress) { reports = append(reports, p) }}
		got, err := hds.RotateCredentials(ctx, cs.store, rot)
		require.NoError(t, err, "RotateCredentials")
		want := hds.RotationProgress{Seen: len(ids), Resealed: len(ids) - 1, LastID: ids[len(ids)-1]}
		assert.Equal(t, want, got, "RotateCredentials")
		require.GreaterOrEqual(t, len(reports), 3, "progress reports over %d records in batches of 2: %+v", len(ids), reports)
		for i, p := range reports[:3] {
			n := 2 * (i + 1)
			resealed := 0
			for _, id := range ids[:n] {
				if !underK2[id] {
					resealed++
				}
			}
			assert.Equal(t, n, p.Seen, "progress report %d: Seen (%+v)", i, p)
			assert.Equal(t, resealed, p.Resealed, "progress report %d: Resealed (%+v)", i, p)
			assert.Equal(t, ids[n-1], p.LastID, "progress report %d: LastID (%+v)", i, p)
		}
		assert.Equal(t, want, reports[len(reports)-1], "last progress report")

		// K1 can go: K2 alone reads everything; K1 alone reads nothing.
		k2only := cs.attach(hds.WithCredentialKey(k2))
		readAll("after rotation, K2 alone", k2only)
		for _, r := range recs {
			cantRead("after rotation, K1 alone", cs.client, r)
		}
		var pl recordJSON
		k2only.mustDo("GET", pathR("web", "prod", "k", "plain"), "", alice, 200).decode(t, &pl)
		assert.Equal(t, plain.Version, pl.Version, "rotation touched a STRING record: %+v", pl)
		assert.Equal(t, `"not a secret"`, string(pl.Value), "rotation touched a STRING record: %+v", pl)

		// Again: nothing to do. With K2 alone: nothing to do either.
		reports = nil
		got, err = hds.RotateCredentials(ctx, cs.store, rot)
		assert.NoError(t, err, "a second rotation")
		assert.Zero(t, got.Resealed, "a second rotation: re-sealed (%+v)", got)
		assert.Equal(t, len(ids), got.Seen, "a second rotation: seen (%+v)", got)
		for _, p := range reports {
			assert.Zero(t, p.Resealed, "a second rotation reports re-sealing: %+v", p)
		}
		got, err = hds.RotateCredentials(ctx, cs.store, hds.Rotation{Primary: k2})
		assert.NoError(t, err, "a rotation with K2 alone")
		assert.Zero(t, got.Resealed, "a rotation with K2 alone: re-sealed (%+v)", got)
		assert.Equal(t, len(ids), got.Seen, "a rotation with K2 alone: seen (%+v)", got)
		readAll("after the repeated rotations, K2 alone", k2only)

		// Resuming: a rotation to K3 after the first batch's last id visits
		// only the records after it; its final check covers every record
		// and finds the first batch still under K2.
		after := ids[1]
		reports = nil
		got, err = hds.RotateCredentials(ctx, cs.store, hds.Rotation{Primary: k3, Previous: [][]byte{k2}, BatchSize: 2, After: after,
			Progress: func(p hds.RotationProgress) { reports = append(reports, p) }})
		require.ErrorIs(t, err, hds.ErrRotationIncomplete, "resumed rotation: ErrRotationIncomplete for the first batch")
		assert.Equal(t, hds.RotationProgress{Seen: len(ids) - 2, Resealed: len(ids) - 2, LastID: ids[len(ids)-1], Remaining: 2}, got, "resumed rotation")
		for _, p := range reports {
			assert.Greater(t, p.LastID, after, "resumed rotation reported an id not after %s: %+v", after, p)
		}
		k3only := cs.attach(hds.WithCredentialKey(k3))
		for _, r := range recs {
			if r.id <= after {
				cantRead("resumed rotation left the first batch under K2", k3only, r)
			} else {
				status, _, env := k3only.do("GET", r.target+"?reveal=true", "", r.token)
				assert.Equal(t, http.StatusOK, status, "after the resumed rotation, K3 alone: %s: %s", r.target, env.raw)
			}
		}
		got, err = hds.RotateCredentials(ctx, cs.store, hds.Rotation{Primary: k3, Previous: [][]byte{k2}, BatchSize: 2})
		assert.NoError(t, err, "the rotation from the start after the resumed one")
		assert.Equal(t, 2, got.Resealed, "the rotation from the start after the resumed one: re-sealed (%+v)", got)
		assert.Equal(t, len(ids), got.Seen, "the rotation from the start after the resumed one: seen (%+v)", got)
		readAll("after rotating to K3, K3 alone", k3only)

		// Keys must be 32 bytes.
		for _, bad := range []hds.Rotation{{Primary: k3[:16]}, {Primary: nil}, {Primary: k3, Previous: [][]byte{k2[:31]}}} {
			_, err := hds.RotateCredentials(ctx, cs.store, bad)
			if assert.Error(t, err, "RotateCredentials with a bad key") {
				assert.Empty(t, credFindLeaks([]string{err.Error()}, []string{string(k3), string(k2)}), "RotateCredentials error holds a key: %v", err)
			}
		}
	})
}

// TestCredRotationUnopenable: a value that no key of the ring opens, or
// that was moved from another record, stops the rotation with an error
// naming the record but not the value.
func TestCredRotationUnopenable(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		k1, k2, lostKey := credKey(t), credKey(t), credKey(t)
		ctx := t.Context()

		t.Run("unknown key", func(t *testing.T) {
			cs := credNewServer(t, kind, hds.WithCredentialKey(k1))
			alice := cs.token("alice")
			cs.tree(alice, "web", "prod", "k")
			K := pathK("web", "prod", "k")
			cs.addRecord(alice, K, "ok1", "CREDENTIAL", credJSON(credSecret("ok1")))
			lostSecret := credSecret("lost")
			lost := cs.attach(hds.WithCredentialKey(lostKey)).addRecord(alice, K, "lost", "[]CREDENTIAL", credJSON([]string{lostSecret}))
			cs.addRecord(alice, K, "ok2", "CREDENTIAL", credJSON(credSecret("ok2")))
			raw := cs.rawValue(t, credAt("web", "prod", "k", lost.ID))

			_, err := hds.RotateCredentials(ctx, cs.store, hds.Rotation{Primary: k2, Previous: [][]byte{k1}, BatchSize: 2})
			require.Error(t, err, "RotateCredentials over a value no key opens")
			assert.ErrorContains(t, err, lost.ID, "the error names the record")
			var sealed []string
			_ = json.Unmarshal([]byte(raw), &sealed)
			hidden := append([]string{lostSecret, raw, string(k1), string(k2), string(lostKey),
				base64.StdEncoding.EncodeToString(k1), base64.StdEncoding.EncodeToString(k2)}, sealed...)
			assert.Empty(t, credFindLeaks([]string{err.Error()}, hidden), "the error %q holds hidden values", err)
			// Once the record is dealt with, the rotation completes.
			cs.mustDo("DELETE", pathR("web", "prod", "k", "lost"), "", alice, http.StatusNoContent)
			_, err = hds.RotateCredentials(ctx, cs.store, hds.Rotation{Primary: k2, Previous: [][]byte{k1}, BatchSize: 2})
			require.NoError(t, err, "RotateCredentials after the lost record was deleted")
			k2only := cs.attach(hds.WithCredentialKey(k2))
			k2only.credRevealOK(t, pathR("web", "prod", "k", "ok1"), alice)
			k2only.credRevealOK(t, pathR("web", "prod", "k", "ok2"), alice)
		})

		t.Run("moved from another record", func(t *testing.T) {
			cs := credNewServer(t, kind, hds.WithCredentialKey(k1))
			alice := cs.token("alice")
			cs.tree(alice, "web", "prod", "k")
			K := pathK("web", "prod", "k")
			s1, s2 := credSecret("m1"), credSecret("m2")
			m1 := cs.addRecord(alice, K, "m1", "CREDENTIAL", credJSON(s1))
			m2 := cs.addRecord(alice, K, "m2", "CREDENTIAL", credJSON(s2))
			raw := cs.rawValue(t, credAt("web", "prod", "k", m1.ID))
			cs.setRaw(t, credAt("web", "prod", "k", m2.ID), raw)
			_, err := hds.RotateCredentials(ctx, cs.store, hds.Rotation{Primary: k2, Previous: [][]byte{k1}})
			require.Error(t, err, "RotateCredentials over a value moved from another record")
			assert.ErrorContains(t, err, m2.ID, "the error names the record")
			var v string
			_ = json.Unmarshal([]byte(raw), &v)
			assert.Empty(t, credFindLeaks([]string{err.Error()}, []string{s1, s2, v}), "the error %q holds hidden values", err)
		})
	})
}

// credRevealOK reads target with reveal=true and wants 200.
func (c *client) credRevealOK(t *testing.T, target, token string) {
	t.Helper()
	status, _, env := c.do("GET", target+"?reveal=true", "", token)
	assert.Equal(t, http.StatusOK, status, "GET %s with reveal=true: %s", target, env.raw)
}
