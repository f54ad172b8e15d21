package e2e_test

// Issue 4: no secret reaches the logs or the errors.

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

func TestLogsHoldNoSecrets(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		var logs syncBuffer
		logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c := newServer(t, kind, hds.WithCredentialKey(testKey), hds.WithLogger(logger))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		c.mustDo("POST", pathR("web", "prod", "k", "q")+"?type=CREDENTIAL&value=log-s3cret-1", "", alice, http.StatusCreated)
		c.mustDo("POST", K+"/records", `{"name":"b","type":"[]CREDENTIAL","value":["log-s3cret-2"]}`, alice, http.StatusCreated)
		c.mustDo("PUT", pathR("web", "prod", "k", "q")+"?value=log-s3cret-3&reveal=true", "", alice, http.StatusOK)
		c.mustDo("GET", K+"?reveal=true", "", alice, http.StatusOK)
		c.mustDo("GET", K+"/records?reveal=true", "", alice, http.StatusOK)
		c.do("POST", "/api/v1/auth/login", `{"username":"bob","password":"wrong-log-password"}`, "")
		c.do("PUT", pathR("web", "prod", "k", "q")+"?type=STRING", "", alice) // refused
		c.do("GET", K+"/records?value=log-s3cret-4", "", alice)
		refreshed := c.mustDo("POST", "/api/v1/auth/refresh", "", alice, http.StatusOK)

		out := logs.String()
		require.NotEmpty(t, out, "nothing was logged")
		secrets := []string{"log-s3cret", "alice-password", "wrong-log-password", alice, strings.Split(alice, ".")[2], "Bearer"}
		var tok struct {
			Token string `json:"token"`
		}
		refreshed.decode(t, &tok)
		secrets = append(secrets, tok.Token)
		for _, s := range secrets {
			assert.NotContains(t, out, s, "the log holds %.24q...", s)
		}
	})
}

// TestCredLogFullScenario: the log of a whole session (logins good and
// bad, credentials in every form, reveals, updates, a value that does not
// open, a bogus token) holds no secret, password, token or key.
func TestCredLogFullScenario(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		var logs syncBuffer
		key := credKey(t)
		cs := credNewServer(t, kind, hds.WithCredentialKey(key),
			hds.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
		var secrets []string
		sec := func(tag string) string {
			s := credSecret(tag)
			secrets = append(secrets, s)
			return s
		}
		alice := cs.login("alice", "alice-password")
		bob := cs.login("bob", "bob-password")
		cs.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		R := func(name string) string { return pathR("web", "prod", "k", name) }

		q1 := sec("query")
		cs.mustDo("POST", R("q")+"?type=CREDENTIAL&value="+url.QueryEscape(q1), "", alice, 201)
		b1 := sec("body")
		cs.mustDo("POST", K+"/records", credJSON(map[string]any{"name": "b", "type": "CREDENTIAL", "value": b1}), alice, 201)
		arr := []string{sec("arr-0"), sec("arr-1")}
		cs.mustDo("POST", R("a")+"?reveal=true", credJSON(map[string]any{"type": "[]CREDENTIAL", "value": arr}), alice, 201)
		aq := []string{sec("arr-query")}
		cs.mustDo("POST", R("aq")+"?type=[]CREDENTIAL&value="+url.QueryEscape(credJSON(aq)), "", alice, 201)
		for _, name := range []string{"q", "b", "a", "aq"} {
			cs.mustDo("GET", R(name)+"?reveal=true", "", alice, 200)
		}
		cs.mustDo("GET", K+"?reveal=true", "", alice, 200)
		cs.mustDo("GET", K+"/records?reveal=true", "", alice, 200)
		cs.mustDo("PUT", R("q")+"?value="+url.QueryEscape(sec("update-query"))+"&reveal=true", "", alice, 200)
		cs.mustDo("PUT", R("b"), credJSON(map[string]any{"value": sec("update-body")}), alice, 200)
		cs.mustDo("PUT", R("a"), credJSON(map[string]any{"value": []string{sec("update-arr")}, "name": "a2"}), alice, 200)
		// Refused values and searches that carry secrets.
		cs.do("POST", K+"/records", credJSON(map[string]any{"name": "bad", "type": "[]CREDENTIAL", "value": []any{sec("bad-elem"), 5}}), alice)
		cs.do("POST", R("bad2")+"?type=CREDENTIAL&value="+url.QueryEscape(sec("bad-null")+"\x00"), "", alice)
		cs.do("GET", K+"/records?value="+url.QueryEscape(q1), "", alice)
		cs.do("GET", K+"/records?valueContains="+url.QueryEscape(b1), "", alice)
		cs.do("PUT", R("b")+"?type=STRING", "", alice)
		// A value that does not open: a 500, logged with its cause.
		var bRec, qRec recordJSON
		cs.mustDo("GET", R("b"), "", alice, 200).decode(t, &bRec)
		cs.mustDo("GET", R("q"), "", alice, 200).decode(t, &qRec)
		cs.setRaw(t, credAt("web", "prod", "k", bRec.ID), cs.rawValue(t, credAt("web", "prod", "k", qRec.ID)))
		status, _, env := cs.do("GET", R("b")+"?reveal=true", "", alice)
		credWant500(t, "moved value", status, env, secrets...)
		// Bad logins, bogus tokens, a refresh.
		wrong := "wrong-password-" + randomID()
		cs.do("POST", "/api/v1/auth/login", credJSON(map[string]string{"username": "alice", "password": wrong}), "")
		cs.do("POST", "/api/v1/auth/login", credJSON(map[string]string{"username": "nobody-" + randomID(), "password": wrong + "-2"}), "")
		bogus := "bogus-token-" + randomID()
		cs.do("GET", "/api/v1/projects", "", bogus)
		cs.do("GET", R("q")+"?reveal=true", "", bogus)
		forged := hs256(t, with(claims(cs.ids["alice"]), map[string]any{"exp": 1}))
		cs.do("GET", "/api/v1/projects", "", forged)
		basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:alice-password"))
		r := request("GET", "/api/v1/projects", "", "")
		r.Header.Set("Authorization", basic)
		cs.send(r)
		var refreshed struct {
			Token string `json:"token"`
		}
		cs.mustDo("POST", "/api/v1/auth/refresh", "", alice, 200).decode(t, &refreshed)
		cs.mustDo("GET", "/api/v1/projects", "", bob, 200)
		cs.do("GET", pathP("web"), "", bob) // 403

		out := logs.String()
		require.GreaterOrEqual(t, strings.Count(out, "\n"), 30, "expected a log line per request, got:\n%s", out)
		assert.Contains(t, out, "status=500", "the 500 was not logged")
		forbidden := append([]string{}, secrets...)
		forbidden = append(forbidden, "alice-password", "bob-password", wrong, testSecret)
		for _, tok := range []string{alice, bob, refreshed.Token, bogus, forged} {
			forbidden = append(forbidden, tok, "Bearer "+tok)
			if parts := strings.Split(tok, "."); len(parts) == 3 {
				forbidden = append(forbidden, parts[2]) // the signature
			}
		}
		forbidden = append(forbidden, basic, string(key), base64.StdEncoding.EncodeToString(key),
			base64.RawURLEncoding.EncodeToString(key), hex.EncodeToString(key))
		leaks := credFindLeaks([]string{out}, forbidden)
		for _, l := range leaks {
			assert.Fail(t, "a secret in the log", "the log holds %.40q", l)
		}
		if len(leaks) > 0 {
			t.Logf("log:\n%s", out)
		}
		assert.NotContains(t, out, "Bearer", "the log mentions the Authorization header")
		assert.NotContains(t, out, "Authorization", "the log mentions the Authorization header")
	})
}

// TestCredNoSecretInErrors: a refused credential value is never echoed in
// the error, and a type change that would expose a secret fails without
// showing it.
func TestCredNoSecretInErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		cs := credNewServer(t, kind, hds.WithCredentialKey(testKey))
		alice := cs.token("alice")
		cs.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		R := func(name string) string { return pathR("web", "prod", "k", name) }

		m1, m2 := credSecret("m1"), credSecret("m2")
		number := "987654321987"
		markers := []string{m1, m2, number}
		for _, tt := range []struct {
			what, method, target, body string
		}{
			{"[]CREDENTIAL with a number (body)", "POST", K + "/records", `{"name":"x","type":"[]CREDENTIAL","value":["` + m1 + `",` + number + `]}`},
			{"[]CREDENTIAL with an empty element (body)", "POST", K + "/records", `{"name":"x","type":"[]CREDENTIAL","value":["` + m1 + `",""]}`},
			{"[]CREDENTIAL with null (body)", "POST", R("x"), `{"type":"[]CREDENTIAL","value":["` + m1 + `",null,"` + m2 + `"]}`},
			{"[]CREDENTIAL with a nested array (body)", "POST", R("x"), `{"type":"[]CREDENTIAL","value":["` + m1 + `",["` + m2 + `"]]}`},
			{"[]CREDENTIAL with U+0000 (body)", "POST", R("x"), `{"type":"[]CREDENTIAL","value":["` + m1 + `","` + m2 + `\u0000"]}`},
			{"[]CREDENTIAL given a string (body)", "POST", R("x"), `{"type":"[]CREDENTIAL","value":"` + m1 + `"}`},
			{"[]CREDENTIAL given an object (body)", "POST", R("x"), `{"type":"[]CREDENTIAL","value":{"k":"` + m1 + `"}}`},
			{"[]CREDENTIAL with an empty element (query)", "POST", R("x") + "?type=[]CREDENTIAL&value=" + url.QueryEscape(`["`+m1+`",""]`), ""},
			{"[]CREDENTIAL with a number (query)", "POST", R("x") + "?type=[]CREDENTIAL&value=" + url.QueryEscape(`["`+m1+`",`+number+`]`), ""},
			{"[]CREDENTIAL not JSON (query)", "POST", R("x") + "?type=[]CREDENTIAL&value=" + url.QueryEscape(m1), ""},
			{"[]CREDENTIAL broken JSON (query)", "POST", R("x") + "?type=[]CREDENTIAL&value=" + url.QueryEscape(`["`+m1), ""},
			{"CREDENTIAL empty (body)", "POST", K + "/records", `{"name":"x","type":"CREDENTIAL","value":""}`},
			{"CREDENTIAL empty (query)", "POST", R("x") + "?type=CREDENTIAL&value=", ""},
			{"CREDENTIAL left out (body)", "POST", R("x"), `{"type":"CREDENTIAL"}`},
			{"CREDENTIAL a number (body)", "POST", R("x"), `{"type":"CREDENTIAL","value":` + number + `}`},
			{"CREDENTIAL an array (body)", "POST", R("x"), `{"type":"CREDENTIAL","value":["` + m1 + `"]}`},
			{"CREDENTIAL with U+0000 (body)", "POST", R("x"), `{"type":"CREDENTIAL","value":"` + m1 + `\u0000` + m2 + `"}`},
			{"CREDENTIAL with U+0000 (query)", "POST", R("x") + "?type=CREDENTIAL&value=" + url.QueryEscape(m1+"\x00"+m2), ""},
			{"CREDENTIAL invalid UTF-8 (query)", "POST", R("x") + "?type=CREDENTIAL&value=" + url.QueryEscape(m1+"\xff"), ""},
		} {
			status, _, env := cs.do(tt.method, tt.target, tt.body, alice)
			wantError(t, tt.what, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "")
			assert.Empty(t, credFindLeaks([]string{string(env.raw)}, markers), "%s: the error echoes a marker: %s", tt.what, env.raw)
		}
		var l listJSON[recordJSON]
		cs.mustDo("GET", K+"/records", "", alice, 200).decode(t, &l)
		assert.Zero(t, l.Total, "refused credentials were stored: %+v", l.Items)

		// Updates of existing credentials: refused values and type changes
		// show neither the new nor the current value, sealed or not.
		cur, curArr := credSecret("current"), []string{credSecret("current-0"), credSecret("current-1")}
		c := cs.addRecord(alice, K, "c", "CREDENTIAL", credJSON(cur))
		ca := cs.addRecord(alice, K, "ca", "[]CREDENTIAL", credJSON(curArr))
		rawC := cs.rawValue(t, credAt("web", "prod", "k", c.ID))
		rawCA := cs.rawValue(t, credAt("web", "prod", "k", ca.ID))
		var sealedC string
		var sealedCA []string
		_ = json.Unmarshal([]byte(rawC), &sealedC)
		_ = json.Unmarshal([]byte(rawCA), &sealedCA)
		hidden := append([]string{cur, curArr[0], curArr[1], m1, m2, number, sealedC, rawC, rawCA}, sealedCA...)
		for _, tt := range []struct {
			what, target, body string
		}{
			{"CREDENTIAL -> []CREDENTIAL without a value (query)", R("c") + "?type=[]CREDENTIAL", ""},
			{"CREDENTIAL -> []CREDENTIAL without a value (body)", R("c"), `{"type":"[]credential"}`},
			{"[]CREDENTIAL -> CREDENTIAL without a value (query)", R("ca") + "?type=CREDENTIAL", ""},
			{"[]CREDENTIAL -> CREDENTIAL without a value (body)", R("ca"), `{"type":"CREDENTIAL"}`},
			{"CREDENTIAL -> STRING without a value", R("c") + "?type=STRING", ""},
			{"CREDENTIAL -> []STRING without a value", R("c"), `{"type":"[]STRING"}`},
			{"CREDENTIAL -> UUID without a value", R("c") + "?type=UUID&reveal=true", ""},
			{"[]CREDENTIAL -> []STRING without a value", R("ca") + "?type=[]STRING", ""},
			{"[]CREDENTIAL -> STRING without a value", R("ca"), `{"type":"STRING"}`},
			{"CREDENTIAL -> []CREDENTIAL with a bad value", R("c"), `{"type":"[]CREDENTIAL","value":["` + m1 + `",` + number + `]}`},
			{"CREDENTIAL, an empty value", R("c") + "?value=&reveal=true", ""},
			{"CREDENTIAL, a value with U+0000", R("c"), `{"value":"` + m1 + `\u0000"}`},
			{"[]CREDENTIAL, a bad element", R("ca") + "?value=" + url.QueryEscape(`["`+m1+`",""]`), ""},
			{"[]CREDENTIAL, a rename with a bad element", R("ca"), `{"name":"ca2","value":["` + m2 + `",` + number + `]}`},
		} {
			status, _, env := cs.do("PUT", tt.target, tt.body, alice)
			wantError(t, tt.what, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "")
			assert.Empty(t, credFindLeaks([]string{string(env.raw)}, hidden), "%s: the error shows hidden values: %s", tt.what, env.raw)
			assert.NotContains(t, string(env.raw), "hds1:", "%s: the error shows a sealed value", tt.what)
		}
		// Nothing changed.
		for _, tt := range []struct{ name, typ, want string }{{"c", "CREDENTIAL", credJSON(cur)}, {"ca", "[]CREDENTIAL", credJSON(curArr)}} {
			got := cs.credReveal(R(tt.name), alice)
			assert.Equal(t, tt.typ, got.Type, "%s after refused updates: type", tt.name)
			assert.Equal(t, tt.want, compact(t, got.Value), "%s after refused updates: value", tt.name)
			assert.EqualValues(t, 1, got.Version, "%s after refused updates: version", tt.name)
		}
	})
}
