package e2e_test

// Issue 4: what each store really holds of a CREDENTIAL record, and what
// the server does with a sealed value moved behind its back.

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

func TestCredentialsSealedAtRest(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		oldKey, newKey := testKey, []byte(strings.Repeat("N", 32))
		c := newServer(t, kind, hds.WithCredentialKey(oldKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		R := func(name string) string { return pathR("web", "prod", "k", name) }
		at := func(name string) store.Path {
			return store.Path{Project: "web", Collection: "prod", Cluster: "k", Record: name}
		}
		c.addRecord(alice, K, "one", "CREDENTIAL", `"plain-marker-1"`)
		c.addRecord(alice, K, "many", "[]CREDENTIAL", `["plain-marker-2","plain-marker-3"]`)
		c.addRecord(alice, K, "two", "CREDENTIAL", `"plain-marker-4"`)

		// The store never sees the plain text.
		for _, name := range []string{"one", "many", "two"} {
			r, err := c.store.FindRecord(t.Context(), at(name))
			require.NoError(t, err, "store: find %s", name)
			assert.NotContains(t, string(r.Value), "plain-marker", "the store holds the plain text of %s", name)
		}
		recs, _, err := c.store.FindRecords(t.Context(), at(""), store.RecordQuery{ListQuery: store.NewListQuery()})
		require.NoError(t, err, "store: find records")
		for _, r := range recs {
			assert.NotContains(t, string(r.Value), "plain-marker", "the store lists the plain text of %s", r.Name)
		}

		// A sealed value moved to another record does not open there.
		one, err := c.store.FindRecord(t.Context(), at("one"))
		require.NoError(t, err, "store: find one")
		_, err = c.store.UpdateRecord(t.Context(), at("two"), store.Write{}, func(r *store.Record) error {
			r.Value = one.Value
			return nil
		})
		require.NoError(t, err, "store: move one's sealed value onto two")
		r := request("GET", R("two")+"?reveal=true", "", alice)
		status, _, env := c.send(r)
		assert.NotEqual(t, http.StatusOK, status, "a sealed value moved to another record opened: %s", env.raw)
		assert.NotContains(t, string(env.raw), "plain-marker-1", "a sealed value moved to another record opened")
		c.mustDo("GET", R("two"), "", alice, http.StatusOK) // masked, no need to open

		// Keys rotate: a new primary key with the old one still opens.
		rotated := c.attach(hds.WithCredentialKey(newKey, oldKey))
		var got recordJSON
		rotated.mustDo("GET", R("one")+"?reveal=true", "", alice, http.StatusOK).decode(t, &got)
		assert.Equal(t, `"plain-marker-1"`, string(got.Value), "after rotation: the plain text of one")
		rotated.mustDo("GET", R("many")+"?reveal=true", "", alice, http.StatusOK).decode(t, &got)
		assert.Equal(t, `["plain-marker-2","plain-marker-3"]`, compact(t, got.Value), "after rotation: the plain text of many")
		rotated.addRecord(alice, K, "three", "CREDENTIAL", `"plain-marker-5"`)
		// Only the key that sealed a value (or a ring holding it) opens it.
		newOnly := c.attach(hds.WithCredentialKey(newKey))
		newOnly.mustDo("GET", R("three")+"?reveal=true", "", alice, http.StatusOK)
		status, _, env = newOnly.send(request("GET", R("one")+"?reveal=true", "", alice))
		assert.NotEqual(t, http.StatusOK, status, "a value sealed by a key not in the ring opened: %s", env.raw)
		assert.NotContains(t, string(env.raw), "plain-marker-1", "a value sealed by a key not in the ring opened")
		status, _, env = c.send(request("GET", R("three")+"?reveal=true", "", alice))
		assert.NotEqual(t, http.StatusOK, status, "a value sealed by the new key opened with the old ring: %s", env.raw)
		assert.NotContains(t, string(env.raw), "plain-marker-5", "a value sealed by the new key opened with the old ring")
	})
}

// Below the API: what each store holds.

// TestCredRawContents: whatever form a credential comes in, the store
// holds no plain text of it, and the same secret never seals to the same
// stored value twice. History is off: a STRING typed into a CREDENTIAL
// leaves its plain STRING version in the history
// (docs/api.md#concurrency-control-and-record-history keeps every
// replaced state); history_test.go covers old credential versions.
func TestCredRawContents(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		cs := credNewServer(t, kind, hds.WithCredentialKey(testKey), hds.WithMaxVersions(0))
		alice, bob := cs.token("alice"), cs.token("bob")
		cs.tree(alice, "web", "prod", "k")
		cs.tree(bob, "bobs", "c", "k")
		K := pathK("web", "prod", "k")
		R := func(name string) string { return pathR("web", "prod", "k", name) }
		BR := func(name string) string { return pathR("bobs", "c", "k", name) }

		var secrets []string // every credential ever submitted
		sec := func(tag string) string {
			s := credSecret(tag)
			secrets = append(secrets, s)
			return s
		}
		type created struct {
			path   store.Path
			target string
			token  string
			typ    string
			want   string // the plain value, compact JSON
		}
		recs := map[string]*created{}
		add := func(name, owner string, env envelope, want string) {
			t.Helper()
			var r recordJSON
			env.decode(t, &r)
			c := &created{path: credAt("web", "prod", "k", r.ID), target: R(name), token: alice, typ: r.Type, want: want}
			if owner == "bob" {
				c.path, c.target, c.token = credAt("bobs", "c", "k", r.ID), BR(name), bob
			}
			recs[name] = c
		}

		// Created in every form.
		s1, s2, s3 := sec("body"), sec("path-body"), sec("query")
		add("b1", "alice", cs.mustDo("POST", K+"/records", credJSON(map[string]any{"name": "b1", "type": "CREDENTIAL", "value": s1}), alice, 201), credJSON(s1))
		add("b2", "alice", cs.mustDo("POST", R("b2"), credJSON(map[string]any{"type": "credential", "value": s2}), alice, 201), credJSON(s2))
		add("q1", "alice", cs.mustDo("POST", R("q1")+"?type=CREDENTIAL&value="+url.QueryEscape(s3), "", alice, 201), credJSON(s3))
		a := []string{sec("arr-body-0"), sec("arr-body-1"), sec("arr-body-2")}
		add("ab", "alice", cs.mustDo("POST", K+"/records", credJSON(map[string]any{"name": "ab", "type": "[]CREDENTIAL", "value": a}), alice, 201), credJSON(a))
		q := []string{sec("arr-query-0"), sec("arr-query-1")}
		add("aq", "alice", cs.mustDo("POST", R("aq")+"?type=%5B%5DCREDENTIAL&value="+url.QueryEscape(credJSON(q)), "", alice, 201), credJSON(q))
		sb := sec("bob")
		add("bb", "bob", cs.mustDo("POST", BR("bb")+"?type=CREDENTIAL&value="+url.QueryEscape(sb)+"&reveal=true", "", bob, 201), credJSON(sb))

		// Updated in both forms.
		u1, u2 := sec("update-body"), sec("update-query")
		cs.mustDo("PUT", R("b1"), credJSON(map[string]any{"value": u1}), alice, 200)
		recs["b1"].want = credJSON(u1)
		cs.mustDo("PUT", R("q1")+"?value="+url.QueryEscape(u2)+"&reveal=true", "", alice, 200)
		recs["q1"].want = credJSON(u2)
		ua := []string{sec("update-arr-0"), sec("update-arr-1")}
		cs.mustDo("PUT", R("ab")+"?reveal=false", credJSON(map[string]any{"value": ua}), alice, 200)
		recs["ab"].want = credJSON(ua)
		// A rename with a new value and a type change with a value.
		u3 := sec("update-rename")
		cs.mustDo("PUT", R("b2"), credJSON(map[string]any{"value": u3, "name": "b2r"}), alice, 200)
		recs["b2"].want, recs["b2"].target = credJSON(u3), R("b2r")
		u4 := []string{sec("update-retype")}
		cs.mustDo("PUT", R("aq")+"?type=[]CREDENTIAL&value="+url.QueryEscape(credJSON(u4)), "", alice, 200)
		recs["aq"].want = credJSON(u4)

		// STRING -> CREDENTIAL and []STRING -> []CREDENTIAL by the type alone:
		// the value that was plain text is sealed.
		p1, p2 := sec("was-plain-query"), sec("was-plain-body")
		pa := []string{sec("was-plain-arr-0"), sec("was-plain-arr-1")}
		add("tq", "alice", cs.mustDo("POST", R("tq")+"?type=STRING&value="+url.QueryEscape(p1), "", alice, 201), credJSON(p1))
		add("tb", "alice", cs.mustDo("POST", K+"/records", credJSON(map[string]any{"name": "tb", "type": "STRING", "value": p2}), alice, 201), credJSON(p2))
		add("ta", "alice", cs.mustDo("POST", K+"/records", credJSON(map[string]any{"name": "ta", "type": "[]STRING", "value": pa}), alice, 201), credJSON(pa))
		var typed recordJSON
		cs.mustDo("PUT", R("tq")+"?type=CREDENTIAL", "", alice, 200).decode(t, &typed)
		assert.Equal(t, "CREDENTIAL", typed.Type, "STRING -> CREDENTIAL by type alone: type")
		assert.Equal(t, `"********"`, string(typed.Value), "STRING -> CREDENTIAL by type alone: value")
		cs.mustDo("PUT", R("tb"), `{"type":"CREDENTIAL"}`, alice, 200)
		cs.mustDo("PUT", R("ta")+"?type=[]credential", "", alice, 200).decode(t, &typed)
		assert.Equal(t, "[]CREDENTIAL", typed.Type, "[]STRING -> []CREDENTIAL by type alone: type")
		assert.Equal(t, `["********","********"]`, compact(t, typed.Value), "[]STRING -> []CREDENTIAL by type alone: value")
		recs["tq"].typ, recs["tb"].typ, recs["ta"].typ = "CREDENTIAL", "CREDENTIAL", "[]CREDENTIAL"

		// A plain STRING, to show that the dump does see plain text.
		visible := credSecret("visible")
		cs.mustDo("POST", R("plain")+"?type=STRING&value="+url.QueryEscape(visible), "", alice, 201)

		// Every credential reads back through the API.
		for name, r := range recs {
			got := cs.credReveal(r.target, r.token)
			assert.Equal(t, r.want, compact(t, got.Value), "%s with reveal=true: value", name)
			assert.Equal(t, r.typ, got.Type, "%s with reveal=true: type", name)
		}

		// The record values, as the store holds them.
		for name, r := range recs {
			raw := cs.rawValue(t, r.path)
			assert.Empty(t, credFindLeaks([]string{raw}, secrets), "%s: the store holds the plain text of these secrets: %s", name, raw)
			if r.typ == "[]CREDENTIAL" {
				var elems, plain []string
				_ = json.Unmarshal([]byte(r.want), &plain)
				assert.NoError(t, json.Unmarshal([]byte(raw), &elems), "%s: stored %s, want an array of %d sealed elements", name, raw, len(plain))
				if assert.Len(t, elems, len(plain), "%s: stored %s, want an array of %d sealed elements", name, raw, len(plain)) {
					for i, e := range elems {
						assert.NotEmpty(t, e, "%s: element %d stored empty", name, i)
						assert.NotEqual(t, plain[i], e, "%s: element %d stored as its plain text", name, i)
						assert.NotEqual(t, "********", e, "%s: element %d stored as the mask", name, i)
					}
				}
			} else {
				var s string
				assert.NoError(t, json.Unmarshal([]byte(raw), &s), "%s: stored %s, want a sealed string", name, raw)
				assert.NotEmpty(t, s, "%s: stored %s, want a sealed string", name, raw)
				assert.NotEqual(t, "********", s, "%s: stored %s, want a sealed string", name, raw)
			}
		}
		// Everything the store holds.
		dump := cs.rawDump(t, credAt("web", "prod", "k", ""), credAt("bobs", "c", "k", ""))
		assert.Empty(t, credFindLeaks(dump, secrets), "the store's raw contents hold the plain text of these secrets")
		assert.NotEmpty(t, credFindLeaks(dump, []string{visible}), "the raw dump does not even show the plain STRING %q: the check is blind", visible)

		// The same secret twice: two records, and one record updated to the
		// same secret, and two equal elements of one array.
		same := sec("same")
		var d1, d2 recordJSON
		cs.mustDo("POST", R("d1")+"?type=CREDENTIAL&value="+url.QueryEscape(same), "", alice, 201).decode(t, &d1)
		cs.mustDo("POST", K+"/records", credJSON(map[string]any{"name": "d2", "type": "CREDENTIAL", "value": same}), alice, 201).decode(t, &d2)
		raw1 := cs.rawValue(t, credAt("web", "prod", "k", d1.ID))
		raw2 := cs.rawValue(t, credAt("web", "prod", "k", d2.ID))
		assert.NotEqual(t, raw1, raw2, "the same secret in two records is stored as the same value")
		cs.mustDo("PUT", R("d1")+"?value="+url.QueryEscape(same), "", alice, 200)
		assert.NotEqual(t, raw1, cs.rawValue(t, credAt("web", "prod", "k", d1.ID)), "a record updated to the same secret is stored as the same value")
		cs.mustDo("PUT", R("d1"), credJSON(map[string]any{"value": same}), alice, 200)
		var dup recordJSON
		cs.mustDo("POST", K+"/records", credJSON(map[string]any{"name": "dup", "type": "[]CREDENTIAL", "value": []string{same, same, same}}), alice, 201).decode(t, &dup)
		var elems []string
		require.NoError(t, json.Unmarshal([]byte(cs.rawValue(t, credAt("web", "prod", "k", dup.ID))), &elems), "stored []CREDENTIAL of 3")
		require.Len(t, elems, 3, "stored []CREDENTIAL of 3")
		assert.NotEqual(t, elems[0], elems[1], "equal elements of a []CREDENTIAL are stored as equal values: %q", elems)
		assert.NotEqual(t, elems[1], elems[2], "equal elements of a []CREDENTIAL are stored as equal values: %q", elems)
		assert.NotEqual(t, elems[0], elems[2], "equal elements of a []CREDENTIAL are stored as equal values: %q", elems)
		dump = cs.rawDump(t, credAt("web", "prod", "k", ""))
		assert.Empty(t, credFindLeaks(dump, []string{same}), "the store's raw contents hold the repeated secret")
		for _, name := range []string{"d1", "d2", "dup"} {
			got := cs.credReveal(R(name), alice)
			assert.Contains(t, string(got.Value), same, "%s reads back", name)
		}
	})
}

// TestCredMovedCiphertext: a sealed value moved to another record, or an
// element of a []CREDENTIAL moved to another index, does not open; the
// API says 500 and nothing more, and still masks without reveal.
func TestCredMovedCiphertext(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		cs := credNewServer(t, kind, hds.WithCredentialKey(testKey))
		alice := cs.token("alice")
		cs.tree(alice, "web", "prod", "k")
		cs.mustDo("POST", pathK("web", "prod", "other"), "", alice, 201)
		K := pathK("web", "prod", "k")
		R := func(name string) string { return pathR("web", "prod", "k", name) }
		at := func(id string) store.Path { return credAt("web", "prod", "k", id) }

		s1, s2 := credSecret("one"), credSecret("two")
		a := []string{credSecret("arr-0"), credSecret("arr-1")}
		b := []string{credSecret("brr-0"), credSecret("brr-1")}
		one := cs.addRecord(alice, K, "one", "CREDENTIAL", credJSON(s1))
		two := cs.addRecord(alice, K, "two", "CREDENTIAL", credJSON(s2))
		arr := cs.addRecord(alice, K, "arr", "[]CREDENTIAL", credJSON(a))
		brr := cs.addRecord(alice, K, "brr", "[]CREDENTIAL", credJSON(b))
		swap := cs.addRecord(alice, K, "swap", "[]CREDENTIAL", credJSON(a))
		secrets := []string{s1, s2, a[0], a[1], b[0], b[1]}

		// They open where they were sealed.
		for _, name := range []string{"one", "two", "arr", "brr", "swap"} {
			cs.credReveal(R(name), alice)
		}
		cs.mustDo("GET", K+"/records?reveal=true", "", alice, 200)
		cs.mustDo("GET", K+"?reveal=true", "", alice, 200)

		rawOne := cs.rawValue(t, at(one.ID))
		rawTwo := cs.rawValue(t, at(two.ID))
		var ea, eb, es []string
		require.NoError(t, json.Unmarshal([]byte(cs.rawValue(t, at(arr.ID))), &ea), "stored arr")
		require.Len(t, ea, 2, "stored arr")
		require.NoError(t, json.Unmarshal([]byte(cs.rawValue(t, at(brr.ID))), &eb), "stored brr")
		require.Len(t, eb, 2, "stored brr")
		require.NoError(t, json.Unmarshal([]byte(cs.rawValue(t, at(swap.ID))), &es), "stored swap")
		require.Len(t, es, 2, "stored swap")
		// Every stored ciphertext, raw and as its JSON string.
		hidden := slices.Concat(secrets, ea, eb, es)
		for _, s := range []string{rawOne, rawTwo} {
			var v string
			_ = json.Unmarshal([]byte(s), &v)
			hidden = append(hidden, v)
		}

		// one's sealed value onto two; arr's element 0 onto brr's element 0;
		// swap's two elements swapped.
		cs.setRaw(t, at(two.ID), rawOne)
		cs.setRaw(t, at(brr.ID), credJSON([]string{ea[0], eb[1]}))
		cs.setRaw(t, at(swap.ID), credJSON([]string{es[1], es[0]}))

		for _, tt := range []struct{ name, mask string }{
			{"two", `"********"`},
			{"brr", `["********","********"]`},
			{"swap", `["********","********"]`},
		} {
			status, _, env := cs.do("GET", R(tt.name)+"?reveal=true", "", alice)
			credWant500(t, "GET "+tt.name+" (moved) with reveal=true", status, env, hidden...)
			// By id too.
			var got recordJSON
			cs.mustDo("GET", R(tt.name)+"?reveal=false", "", alice, http.StatusOK).decode(t, &got)
			assert.Equal(t, tt.mask, compact(t, got.Value), "GET %s (moved) without reveal", tt.name)
			env = cs.mustDo("GET", R(got.ID), "", alice, http.StatusOK)
			assert.Empty(t, credFindLeaks([]string{string(env.raw)}, hidden), "GET %s (moved) without reveal shows hidden values", tt.name)
			// A rename answers with the record: masked it works, revealed it
			// cannot open.
			status, _, env = cs.do("PUT", R(tt.name)+"?rename="+tt.name+"-x&reveal=true", "", alice)
			assert.NotEqual(t, http.StatusOK, status, "PUT %s (moved) with reveal=true: %s", tt.name, env.raw)
			assert.NotContains(t, string(env.raw), "cred-", "PUT %s (moved) with reveal=true", tt.name)
			if status == http.StatusInternalServerError {
				credWant500(t, "PUT "+tt.name+" (moved) with reveal=true", status, env, hidden...)
			}
		}

		// Lists and cluster data with reveal need every value: 500; without,
		// they are masked.
		for _, target := range []string{K + "/records?reveal=true", K + "?reveal=true", K + "/records?reveal=true&search=two"} {
			status, _, env := cs.do("GET", target, "", alice)
			credWant500(t, "GET "+target+" with a moved value", status, env, hidden...)
		}
		for _, target := range []string{K + "/records", K} {
			env := cs.mustDo("GET", target, "", alice, http.StatusOK)
			assert.Empty(t, credFindLeaks([]string{string(env.raw)}, hidden), "GET %s without reveal shows hidden values", target)
		}

		// The source records are untouched and still open.
		assert.Equal(t, credJSON(s1), string(cs.credReveal(R("one"), alice).Value), "one after its value was copied away")
		assert.Equal(t, credJSON(a), compact(t, cs.credReveal(R("arr"), alice).Value), "arr after its element was copied away")

		// A value moved to a record of the same name in another cluster
		// does not open either.
		moved := cs.addRecord(alice, pathK("web", "prod", "other"), "one", "CREDENTIAL", credJSON(credSecret("other")))
		cs.setRaw(t, credAt("web", "prod", "other", moved.ID), rawOne)
		status, _, env := cs.do("GET", pathR("web", "prod", "other", "one")+"?reveal=true", "", alice)
		credWant500(t, "a value moved to a namesake in another cluster", status, env, hidden...)

		// A server without any credential key masks, and cannot reveal.
		nokey := cs.attach()
		status, _, env = nokey.do("GET", R("one")+"?reveal=true", "", alice)
		credWant500(t, "reveal without a credential key", status, env, hidden...)
		var masked recordJSON
		nokey.mustDo("GET", R("one"), "", alice, http.StatusOK).decode(t, &masked)
		assert.Equal(t, `"********"`, string(masked.Value), "without a credential key, GET one: the mask")

		// A new value heals a record (by id: the rename above may or may
		// not have been kept).
		fresh := credSecret("fresh")
		cs.mustDo("PUT", R(two.ID), credJSON(map[string]any{"value": fresh}), alice, http.StatusOK)
		assert.Equal(t, credJSON(fresh), string(cs.credReveal(R(two.ID), alice).Value), "after a new value")
	})
}
