package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testCA is a throwaway certificate authority made by a test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte // the CA certificate, PEM
}

// newTestCA makes a CA.
func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "hds test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// leaf issues a server certificate for 127.0.0.1, ::1 and localhost with
// the serial number serial, valid for a day, and returns it and its key,
// PEM.
func (ca *testCA) leaf(t *testing.T, serial int64) (certPEM, keyPEM []byte) {
	t.Helper()
	return ca.leafUntil(t, serial, time.Now().Add(24*time.Hour))
}

// leafUntil is leaf valid until notAfter.
func (ca *testCA) leafUntil(t *testing.T, serial int64, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "hds test server"},
		NotBefore:    notAfter.Add(-48 * time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

// tlsFiles is a certificate and key file pair in a directory of its own.
type tlsFiles struct {
	dir, cert, key string
}

// newTLSFiles writes the leaf of ca with serial to a new pair of files.
func newTLSFiles(t *testing.T, ca *testCA, serial int64) tlsFiles {
	t.Helper()
	dir := t.TempDir()
	f := tlsFiles{dir: dir, cert: filepath.Join(dir, "tls.crt"), key: filepath.Join(dir, "tls.key")}
	certPEM, keyPEM := ca.leaf(t, serial)
	writeFile(t, f.cert, certPEM)
	writeFile(t, f.key, keyPEM)
	return f
}

// writeFile writes data to path, as a program renewing a certificate in
// place does (truncate and write).
func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, data, 0o600))
}

// pool is a pool holding the CA certificate.
func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// client is an HTTP client that trusts ca (and offers HTTP/2).
func (ca *testCA) client() *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: ca.pool()},
		ForceAttemptHTTP2: true,
	}}
}

// hostOf is the host:port of a URL.
func hostOf(t *testing.T, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	require.NoError(t, err)
	return u.Host
}

// servedSerial makes a new TLS connection to addr, trusting ca, and
// returns the serial number of the certificate it was given.
func servedSerial(t *testing.T, ca *testCA, addr string) int64 {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.pool()})
	require.NoError(t, err)
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

// waitServed waits until new connections to addr get the certificate of
// serial.
func waitServed(t *testing.T, ca *testCA, addr string, serial int64, logs *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for servedSerial(t, ca, addr) != serial {
		if time.Now().After(deadline) {
			t.Fatalf("new connections did not get the certificate %d within 30s; log:\n%s", serial, logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitLog waits until logs hold s.
func waitLog(t *testing.T, logs *syncBuffer, s string) {
	t.Helper()
	waitLogAfter(t, logs, 0, s)
}

// waitLogAfter waits until logs hold s after their first offset bytes.
func waitLogAfter(t *testing.T, logs *syncBuffer, offset int, s string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String()[offset:], s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the log after 30s:\n%s", s, logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// tlsConfigFile is a configuration serving HTTPS with f and the extra keys
// of tls (e.g. `"min_version": "1.3"`).
func tlsConfigFile(t *testing.T, f tlsFiles, tlsKeys string) string {
	t.Helper()
	extra := ""
	if tlsKeys != "" {
		extra = ", " + tlsKeys
	}
	return writeConfig(t, `{
  "security": {"jwt_secret": "`+testJWTSecret+`", "credential_key": "`+testKey+`"},
  "tls": {"cert_file": "`+f.cert+`", "key_file": "`+f.key+`"`+extra+`},
  "users": [{"username": "alice", "password": "`+testPassword+`"}]
}`)
}

// TestTLSServe: with tls.cert_file and tls.key_file the server serves
// HTTPS on addr, says https:// in its start-up lines, offers HTTP/2 by
// ALPN, refuses TLS below tls.min_version, and gives a plain HTTP
// request no answer of the API.
func TestTLSServe(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	f := newTLSFiles(t, ca, 1)
	s := start(t, []string{"-config", tlsConfigFile(t, f, "")}, map[string]string{"HDS_ADDR": "127.0.0.1:0"})
	require.True(t, strings.HasPrefix(s.url, "https://127.0.0.1:"), "the listening line: %s", s.stdout.String())
	assert.Contains(t, s.stdout.String(), "Console (in a browser): "+s.url+"/console/")
	assert.Contains(t, s.stdout.String(), "curl -s -X POST "+s.url+"/api/v1/auth/login")
	assert.NotContains(t, s.stdout.String(), "http://")
	addr := hostOf(t, s.url)

	resp, err := ca.client().Get(s.url + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 2, resp.ProtoMajor, "HTTP/2 negotiated by ALPN")
	assert.Equal(t, int64(1), resp.TLS.PeerCertificates[0].SerialNumber.Int64())
	token := loginWith(t, ca.client(), s.url, "alice", testPassword)
	status, _ := callWith(t, ca.client(), "POST", s.url+"/api/v1/projects/p", token, nil)
	assert.Equal(t, http.StatusCreated, status)

	// TLS 1.2 at least.
	for _, v := range []uint16{tls.VersionTLS10, tls.VersionTLS11} {
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.pool(), MinVersion: v, MaxVersion: v})
		if err == nil {
			conn.Close()
		}
		assert.Error(t, err, "TLS version %x accepted", v)
	}
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.pool(), MaxVersion: tls.VersionTLS12})
	require.NoError(t, err, "TLS 1.2")
	conn.Close()

	// Plain HTTP to the TLS port: Go's own 400, nothing of the API.
	plain, err := http.Get("http://" + addr + "/health")
	if err == nil {
		defer plain.Body.Close()
		assert.Equal(t, http.StatusBadRequest, plain.StatusCode)
		assert.Nil(t, plain.TLS)
	}
	// The log says which certificate it serves.
	waitLog(t, s.stderr, `msg="tls certificate loaded" subject="CN=hds test server" dns_names=localhost not_after=`)
}

// TestTLSMinVersion13: tls.min_version "1.3" refuses TLS 1.2; the
// environment names the files as well as the file does.
func TestTLSMinVersion13(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	f := newTLSFiles(t, ca, 1)
	path := writeConfig(t, `{"tls": {"min_version": "1.3"}}`)
	s := start(t, []string{"-config", path}, map[string]string{"HDS_ADDR": "127.0.0.1:0",
		"HDS_TLS_CERT_FILE": f.cert, "HDS_TLS_KEY_FILE": f.key})
	require.True(t, strings.HasPrefix(s.url, "https://"), s.url)
	addr := hostOf(t, s.url)
	_, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.pool(), MaxVersion: tls.VersionTLS12})
	assert.Error(t, err, "TLS 1.2 accepted with min_version 1.3")
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.pool(), MinVersion: tls.VersionTLS13})
	require.NoError(t, err)
	assert.Equal(t, uint16(tls.VersionTLS13), conn.ConnectionState().Version)
	conn.Close()
}

// TestTLSStartErrors: a bad TLS configuration stops the start with one
// line naming the key or the file, before anything listens.
func TestTLSStartErrors(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	f := newTLSFiles(t, ca, 1)
	other := newTLSFiles(t, ca, 2)
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.pem")
	certPEM, _ := os.ReadFile(f.cert)
	keyPEM, _ := os.ReadFile(f.key)
	half := filepath.Join(dir, "half.crt")
	writeFile(t, half, certPEM[:len(certPEM)/2])
	chainHalf := filepath.Join(dir, "chain-half.crt")
	writeFile(t, chainHalf, append(append([]byte{}, certPEM...), ca.pem[:len(ca.pem)/2]...))
	notPEM := filepath.Join(dir, "not.pem")
	writeFile(t, notPEM, []byte("not a certificate\n"))
	for _, tc := range []struct {
		what   string
		config string // the tls object
		env    map[string]string
		want   string
	}{
		{what: "cert without key", config: `{"cert_file": "` + f.cert + `"}`,
			want: "tls.key_file (or HDS_TLS_KEY_FILE) is missing: tls.cert_file is set, and HTTPS needs both files of the pair"},
		{what: "key without cert", config: `{}`, env: map[string]string{"HDS_TLS_KEY_FILE": f.key},
			want: "tls.cert_file (or HDS_TLS_CERT_FILE) is missing: HDS_TLS_KEY_FILE is set, and HTTPS needs both files of the pair"},
		{what: "min_version", config: `{"cert_file": "` + f.cert + `", "key_file": "` + f.key + `", "min_version": "1.1"}`,
			want: `tls.min_version must be "1.2" or "1.3", got "1.1"`},
		{what: "min_version as a number", config: `{"min_version": "TLS1.3"}`,
			want: `tls.min_version must be "1.2" or "1.3", got "TLS1.3"`},
		{what: "allow_plain_http", config: `{}`, env: map[string]string{"HDS_ALLOW_PLAIN_HTTP": "yes"},
			want: `HDS_ALLOW_PLAIN_HTTP must be true or false, got "yes"`},
		{what: "cert unreadable", config: `{"cert_file": "` + missing + `", "key_file": "` + f.key + `"}`,
			want: "tls.cert_file: open " + missing + ": no such file or directory"},
		{what: "key unreadable", config: `{}`, env: map[string]string{"HDS_TLS_CERT_FILE": f.cert, "HDS_TLS_KEY_FILE": missing},
			want: "HDS_TLS_KEY_FILE: open " + missing + ": no such file or directory"},
		{what: "mismatched", config: `{"cert_file": "` + f.cert + `", "key_file": "` + other.key + `"}`,
			want: "tls.cert_file " + f.cert + " and tls.key_file " + other.key + " do not make a pair: tls: private key does not match public key"},
		{what: "cert half written", config: `{"cert_file": "` + half + `", "key_file": "` + f.key + `"}`,
			want: "tls.cert_file " + half + ": a PEM block is not complete (a file written half?)"},
		{what: "chain half written", config: `{"cert_file": "` + chainHalf + `", "key_file": "` + f.key + `"}`,
			want: "tls.cert_file " + chainHalf + ": a PEM block is not complete (a file written half?)"},
		{what: "cert not PEM", config: `{"cert_file": "` + notPEM + `", "key_file": "` + f.key + `"}`,
			want: "tls.cert_file " + notPEM + ": no CERTIFICATE PEM block"},
		{what: "key file holds a certificate", config: `{"cert_file": "` + f.cert + `", "key_file": "` + f.cert + `"}`,
			want: "tls.key_file " + f.cert + ": no PRIVATE KEY PEM block"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			env := map[string]string{"HDS_ADDR": "127.0.0.1:0"}
			for k, v := range tc.env {
				env[k] = v
			}
			path := writeConfig(t, `{"tls": `+tc.config+`}`)
			stdout, stderr, err := runOnce(t, []string{"-config", path}, env, "")
			require.Error(t, err)
			msg := strings.TrimPrefix(err.Error(), "config "+path+": ")
			assert.Equal(t, tc.want, msg)
			assert.NotContains(t, err.Error(), "\n", "one line")
			assert.NotContains(t, stdout, "hds listening")
			keyBody := string(keyPEM[len("-----BEGIN PRIVATE KEY-----\n"):][:40])
			assert.NotContains(t, err.Error()+stdout+stderr, keyBody, "the key was shown")
		})
	}
}

// TestCheckPlainHTTPAddr: plain HTTP is for a loopback address or
// localhost; every other host (an empty one, 0.0.0.0 and :: included) is
// refused naming both ways out.
func TestCheckPlainHTTPAddr(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"127.0.0.1:8080", "127.1.2.3:0", "[::1]:8080", "localhost:8080", "LocalHost:1", "[::ffff:127.0.0.1]:80"} {
		assert.NoError(t, checkPlainHTTPAddr(addr), addr)
	}
	for _, addr := range []string{":8080", "0.0.0.0:8080", "[::]:8080", "192.0.2.1:80", "10.0.0.1:80", "hds.example.com:80", "[fe80::1]:80"} {
		err := checkPlainHTTPAddr(addr)
		if assert.Error(t, err, addr) {
			assert.Equal(t, `addr "`+addr+`" is not a loopback address, and plain HTTP is served only on loopback: `+
				"give tls.cert_file and tls.key_file to serve HTTPS, or set tls.allow_plain_http: true "+
				"(HDS_ALLOW_PLAIN_HTTP=true) behind a proxy that terminates TLS", err.Error())
		}
	}
	// Not HOST:PORT: net.Listen says so, after the checks that come first.
	assert.NoError(t, checkPlainHTTPAddr("8080"))
}

// TestPlainHTTPOnlyOnLoopback: without TLS a server on every interface
// starts only with tls.allow_plain_http (or HDS_ALLOW_PLAIN_HTTP) true.
func TestPlainHTTPOnlyOnLoopback(t *testing.T) {
	t.Parallel()
	refusal := "is not a loopback address, and plain HTTP is served only on loopback"
	for _, tc := range []struct {
		what, config string
		env          map[string]string
	}{
		{"0.0.0.0", `{}`, map[string]string{"HDS_ADDR": "0.0.0.0:0"}},
		{"empty host", `{"addr": ":0"}`, nil},
		{"the environment says false", `{"addr": ":0", "tls": {"allow_plain_http": true}}`, map[string]string{"HDS_ALLOW_PLAIN_HTTP": "false"}},
		{"the file says false", `{"tls": {"allow_plain_http": false}}`, map[string]string{"HDS_ADDR": "[::]:0"}},
	} {
		t.Run("refused: "+tc.what, func(t *testing.T) {
			stdout, _, err := runOnce(t, []string{"-config", writeConfig(t, tc.config)}, tc.env, "")
			require.Error(t, err)
			assert.Contains(t, err.Error(), refusal)
			assert.NotContains(t, stdout, "hds listening")
		})
	}
	for _, tc := range []struct {
		what, config string
		env          map[string]string
	}{
		{"the file says true", `{"addr": "0.0.0.0:0", "tls": {"allow_plain_http": true}}`, nil},
		{"the environment says true", `{"addr": ":0"}`, map[string]string{"HDS_ALLOW_PLAIN_HTTP": "true"}},
	} {
		t.Run("allowed: "+tc.what, func(t *testing.T) {
			s := start(t, []string{"-config", writeConfig(t, tc.config)}, tc.env)
			require.True(t, strings.HasPrefix(s.url, "http://localhost:"), s.url)
			resp, err := http.Get(s.url + "/health")
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
		})
	}
}

// TestTLSReloadOnFileChange: a change of the files is picked up for new
// connections while connections in flight keep theirs; a half-written or
// mismatched pair is logged as one line and the previous pair stays.
func TestTLSReloadOnFileChange(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	f := newTLSFiles(t, ca, 1)
	s := start(t, []string{"-config", tlsConfigFile(t, f, "")}, map[string]string{"HDS_ADDR": "127.0.0.1:0"})
	addr := hostOf(t, s.url)
	require.Equal(t, int64(1), servedSerial(t, ca, addr))
	// A connection opened before the renewal.
	old := ca.client()
	resp, err := old.Get(s.url + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 2, resp.ProtoMajor)

	cert2, key2 := ca.leaf(t, 2)
	writeFile(t, f.key, key2)
	writeFile(t, f.cert, cert2)
	waitServed(t, ca, addr, 2, s.stderr)
	waitLog(t, s.stderr, `msg="tls certificate reloaded" trigger="file change"`)
	// The connection in flight goes on, with its certificate.
	resp, err = old.Get(s.url + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, int64(1), resp.TLS.PeerCertificates[0].SerialNumber.Int64(), "the old connection was not kept")

	// Half written: the old pair stays. (The log is read after the
	// reload's line: a line the renewal above logged between its two
	// writes is before it.)
	cert3, key3 := ca.leaf(t, 3)
	logged := len(s.stderr.String())
	writeFile(t, f.cert, cert3[:len(cert3)/2])
	waitLogAfter(t, s.stderr, logged, `msg="tls reload failed" trigger="file change" reason="tls.cert_file `+f.cert+`: a PEM block is not complete`)
	assert.Equal(t, int64(2), servedSerial(t, ca, addr))
	// Complete, but not the key's certificate: the old pair stays.
	logged = len(s.stderr.String())
	writeFile(t, f.cert, cert3)
	waitLogAfter(t, s.stderr, logged, `do not make a pair: tls: private key does not match public key`)
	assert.Equal(t, int64(2), servedSerial(t, ca, addr))
	// Its key: the new pair.
	writeFile(t, f.key, key3)
	waitServed(t, ca, addr, 3, s.stderr)
	// The server never stopped.
	status, _ := callWith(t, ca.client(), "GET", s.url+"/health", "", nil)
	assert.Equal(t, http.StatusOK, status)
}

// exampleProcess is the example serving in a process of its own (the
// test binary as hds-test-example), for the tests that send it signals.
type exampleProcess struct {
	cmd            *exec.Cmd
	url            string
	stdout, stderr *syncBuffer
	exited         chan struct{} // closed once the process has been waited for
}

// startProcess starts the example with the HDS_ variables env (and no
// other) in a directory of its own and waits until it listens.
func startProcess(t *testing.T, env map[string]string) *exampleProcess {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	p := &exampleProcess{cmd: exec.Command(exe, "hds-test-example", "serve"), stdout: &syncBuffer{}, stderr: &syncBuffer{},
		exited: make(chan struct{})}
	p.cmd.Dir = t.TempDir()
	p.cmd.Env = append(cleanEnv(), "HDS_DATABASE_URL=memory:", "HDS_ADDR=127.0.0.1:0")
	for k, v := range env {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	require.NoError(t, p.cmd.Start())
	go func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	})
	deadline := time.Now().Add(time.Minute)
	for {
		if m := listeningLine.FindStringSubmatch(p.stdout.String()); m != nil {
			p.url = m[1]
			return p
		}
		select {
		case <-p.exited:
			t.Fatalf("the example exited before listening: %s\nstderr:\n%s", p.cmd.ProcessState, p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no listening line after a minute\nstdout:\n%s\nstderr:\n%s", p.stdout.String(), p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop sends SIGTERM and requires a clean exit.
func (p *exampleProcess) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		t.Fatalf("the example did not stop within a minute of SIGTERM:\n%s", p.stderr.String())
	}
	assert.Equal(t, 0, p.cmd.ProcessState.ExitCode(), "stderr:\n%s", p.stderr.String())
}

// TestTLSReloadOnSIGHUP: SIGHUP loads the pair again (new connections get
// the new certificate); a bad pair on SIGHUP is logged and the old one
// stays; the server never stops for it.
func TestTLSReloadOnSIGHUP(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	f := newTLSFiles(t, ca, 1)
	p := startProcess(t, map[string]string{"HDS_TLS_CERT_FILE": f.cert, "HDS_TLS_KEY_FILE": f.key})
	require.True(t, strings.HasPrefix(p.url, "https://"), p.url)
	addr := hostOf(t, p.url)
	require.Equal(t, int64(1), servedSerial(t, ca, addr))

	cert2, key2 := ca.leaf(t, 2)
	writeFile(t, f.key, key2)
	writeFile(t, f.cert, cert2)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	// The process's own poll (every 5 s) may see the change first; the
	// line of the reload SIGHUP made is what says SIGHUP worked.
	waitLog(t, p.stderr, `msg="tls certificate reloaded" trigger=SIGHUP`)
	assert.Equal(t, int64(2), servedSerial(t, ca, addr))

	cert3, _ := ca.leaf(t, 3)
	writeFile(t, f.cert, cert3) // without its key
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	waitLog(t, p.stderr, `msg="tls reload failed" trigger=SIGHUP reason="HDS_TLS_CERT_FILE `+f.cert+` and HDS_TLS_KEY_FILE `+f.key+
		` do not make a pair: tls: private key does not match public key"`)
	assert.Equal(t, int64(2), servedSerial(t, ca, addr))
	status, _ := callWith(t, ca.client(), "GET", p.url+"/health", "", nil)
	assert.Equal(t, http.StatusOK, status)
	p.stop(t)
}

// TestSIGHUPWithoutTLS: without TLS, SIGHUP is logged and ignored.
func TestSIGHUPWithoutTLS(t *testing.T) {
	t.Parallel()
	p := startProcess(t, nil)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	waitLog(t, p.stderr, `msg="SIGHUP ignored: the server serves plain HTTP, there is no certificate to reload"`)
	status, _ := call(t, "GET", p.url+"/health", "", nil)
	assert.Equal(t, http.StatusOK, status)
	p.stop(t)
}

// TestConfigTLSKeys: the tls.* keys of docs/api.md#serving-over-tls-v13,
// their defaults, and their environment variables winning over the file.
func TestConfigTLSKeys(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(writeConfig(t, `{}`), environ(nil))
	require.NoError(t, err)
	assert.Equal(t, tlsSettings{certFrom: "tls.cert_file", keyFrom: "tls.key_file", minVersion: tls.VersionTLS12}, cfg.tls,
		"defaults: no TLS, 1.2, no plain HTTP off loopback")
	assert.False(t, cfg.tls.enabled())

	file := writeConfig(t, `{"tls": {"cert_file": "/c.pem", "key_file": "/k.pem", "min_version": "1.3", "allow_plain_http": true}}`)
	cfg, err = loadConfig(file, environ(nil))
	require.NoError(t, err)
	assert.Equal(t, tlsSettings{certFile: "/c.pem", keyFile: "/k.pem", certFrom: "tls.cert_file", keyFrom: "tls.key_file",
		minVersion: tls.VersionTLS13, allowPlainHTTP: true}, cfg.tls)
	assert.True(t, cfg.tls.enabled())

	cfg, err = loadConfig(file, environ(map[string]string{"HDS_TLS_CERT_FILE": "/e/c.pem", "HDS_TLS_KEY_FILE": "/e/k.pem",
		"HDS_ALLOW_PLAIN_HTTP": "false"}))
	require.NoError(t, err)
	assert.Equal(t, tlsSettings{certFile: "/e/c.pem", keyFile: "/e/k.pem", certFrom: "HDS_TLS_CERT_FILE", keyFrom: "HDS_TLS_KEY_FILE",
		minVersion: tls.VersionTLS13}, cfg.tls)

	cfg, err = loadConfig(writeConfig(t, `{"tls": {"min_version": ""}}`), environ(map[string]string{"HDS_ALLOW_PLAIN_HTTP": "true"}))
	require.NoError(t, err)
	assert.Equal(t, uint16(tls.VersionTLS12), cfg.tls.minVersion, "an empty min_version is 1.2")
	assert.True(t, cfg.tls.allowPlainHTTP)

	for config, want := range map[string]string{
		`{"tls": {"certfile": "/c.pem"}}`:            `unknown field "tls.certfile"`,
		`{"tls": {"allow_plain_http": "yes"}}`:       `field "tls.allow_plain_http" must be true or false`,
		`{"tls": {"min_version": 1.3}}`:              `field "tls.min_version"`,
		`{"tls": {"cert_file": "", "key_file": ""}}`: "",
	} {
		_, err := loadConfig(writeConfig(t, config), environ(nil))
		if want == "" {
			assert.NoError(t, err, config)
			continue
		}
		if assert.Error(t, err, config) {
			assert.Contains(t, err.Error(), want, config)
		}
	}
}

// TestTLSExpiredCertificateWarned: an expired certificate is served (the
// contract refuses only files that do not load) but logged as a warning
// saying so; a valid one is logged at info.
func TestTLSExpiredCertificateWarned(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	f := newTLSFiles(t, ca, 1)
	expiredCert, expiredKey := ca.leafUntil(t, 2, time.Now().Add(-time.Hour))
	expired := tlsFiles{cert: filepath.Join(f.dir, "expired.crt"), key: filepath.Join(f.dir, "expired.key")}
	writeFile(t, expired.cert, expiredCert)
	writeFile(t, expired.key, expiredKey)
	for _, tc := range []struct {
		files tlsFiles
		want  string
	}{
		{f, `level=INFO msg="tls certificate loaded" subject="CN=hds test server"`},
		{expired, `level=WARN msg="tls certificate loaded" subject="CN=hds test server"`},
	} {
		var logs syncBuffer
		cfg := &config{addr: "0.0.0.0:8443", tls: tlsSettings{certFile: tc.files.cert, keyFile: tc.files.key,
			certFrom: "tls.cert_file", keyFrom: "tls.key_file", minVersion: tls.VersionTLS12}}
		serving, err := newTLSServing(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
		require.NoError(t, err)
		assert.Equal(t, "https", serving.scheme())
		assert.Contains(t, logs.String(), tc.want)
		assert.Equal(t, strings.Contains(tc.want, "WARN"), strings.Contains(logs.String(), `warning="the certificate has expired"`), logs.String())
	}
}

// TestCertReloaderTriesAPairOnce: the poll tries a pair of files once (a
// bad pair is logged once, not on every look), SIGHUP tries it always,
// and a pair that loads is what the next handshake gets.
func TestCertReloaderTriesAPairOnce(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	f := newTLSFiles(t, ca, 1)
	var logs syncBuffer
	cfg := &config{addr: "127.0.0.1:0", tls: tlsSettings{certFile: f.cert, keyFile: f.key,
		certFrom: "tls.cert_file", keyFrom: "tls.key_file", minVersion: tls.VersionTLS12}}
	serving, err := newTLSServing(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	r := serving.certs
	served := func() int64 {
		cert, err := serving.config.GetCertificate(&tls.ClientHelloInfo{})
		require.NoError(t, err)
		return cert.Leaf.SerialNumber.Int64()
	}
	require.Equal(t, int64(1), served())

	r.reload("file change", false)
	assert.NotContains(t, logs.String(), "reload", "files unchanged: nothing tried")

	cert2, key2 := ca.leaf(t, 2)
	writeFile(t, f.cert, cert2[:len(cert2)/2])
	for range 3 {
		r.reload("file change", false)
	}
	assert.Equal(t, 1, strings.Count(logs.String(), `msg="tls reload failed" trigger="file change"`), logs.String())
	r.reload("SIGHUP", true)
	assert.Equal(t, 1, strings.Count(logs.String(), `msg="tls reload failed" trigger=SIGHUP`), logs.String())
	assert.Equal(t, int64(1), served(), "the pair in use stays")

	writeFile(t, f.cert, cert2)
	r.reload("file change", false) // the key is still the old one
	assert.Contains(t, logs.String(), "do not make a pair")
	assert.Equal(t, int64(1), served())
	writeFile(t, f.key, key2)
	r.reload("file change", false)
	assert.Contains(t, logs.String(), `msg="tls certificate reloaded" trigger="file change"`)
	assert.Equal(t, int64(2), served())

	r.reload("SIGHUP", true) // unchanged files: loaded all the same
	assert.Contains(t, logs.String(), `msg="tls certificate reloaded" trigger=SIGHUP`)
	assert.Equal(t, int64(2), served())
}
