package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// HTTPS for the standalone server (docs/api.md#serving-over-tls-v13):
// the certificate and key files of tls.cert_file and tls.key_file, loaded
// at start and again on SIGHUP or when either file changes, and served
// through tls.Config.GetCertificate from an atomically swapped pair, as
// Caddy, Traefik and Vault do: new connections get the new certificate,
// connections in flight go on, and a pair that fails to load leaves the
// previous one in use. Without TLS, plain HTTP is for loopback unless
// tls.allow_plain_http says otherwise.

// tlsPollInterval is how often the server looks at the certificate and key
// files for a change (the contract says within 15 seconds). The tests
// shorten it.
var tlsPollInterval = 5 * time.Second

// tlsServing is how the server serves: HTTPS with certs, or plain HTTP
// when certs is nil.
type tlsServing struct {
	certs  *certReloader // nil: plain HTTP
	config *tls.Config   // nil: plain HTTP
	logger *slog.Logger
}

// newTLSServing loads the pair of cfg.tls, or, without TLS, checks that
// plain HTTP may be served on cfg.addr. Its errors are one line naming
// the key or the file at fault.
func newTLSServing(cfg *config, logger *slog.Logger) (*tlsServing, error) {
	t := &tlsServing{logger: logger}
	s := cfg.tls
	if !s.enabled() {
		if s.allowPlainHTTP {
			return t, nil
		}
		return t, checkPlainHTTPAddr(cfg.addr)
	}
	r := &certReloader{certFile: s.certFile, keyFile: s.keyFile, certFrom: s.certFrom, keyFrom: s.keyFrom, logger: logger}
	cert, err := r.load()
	if err != nil {
		return nil, err
	}
	r.current.Store(cert)
	logPair(logger, "tls certificate loaded", cert)
	t.certs = r
	t.config = &tls.Config{MinVersion: s.minVersion, GetCertificate: r.getCertificate}
	return t, nil
}

// checkPlainHTTPAddr refuses plain HTTP on addr unless its host is a
// loopback address or localhost (an empty host, 0.0.0.0 and :: are every
// interface). An addr that is not HOST:PORT is left to net.Listen, which
// splits it the same way and refuses it when the server starts listening.
func checkPlainHTTPAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.Unmap().IsLoopback() {
		return nil
	}
	return fmt.Errorf("addr %q is not a loopback address, and plain HTTP is served only on loopback: "+
		"give tls.cert_file and tls.key_file to serve HTTPS, or set tls.allow_plain_http: true "+
		"(HDS_ALLOW_PLAIN_HTTP=true) behind a proxy that terminates TLS", addr)
}

// scheme is the scheme of the server's URLs.
func (t *tlsServing) scheme() string {
	if t.certs != nil {
		return "https"
	}
	return "http"
}

// serve serves srv on ln, over TLS when there is a certificate (HTTP/2
// offered by ALPN: ServeTLS adds "h2" to the protocols).
func (t *tlsServing) serve(srv *http.Server, ln net.Listener) error {
	if t.certs == nil {
		return srv.Serve(ln)
	}
	srv.TLSConfig = t.config
	return srv.ServeTLS(ln, "", "")
}

// follow handles SIGHUP until stop is called: with TLS it loads the pair
// again, and so does a change of either file (looked at every
// tlsPollInterval); without, SIGHUP is logged and ignored. Either way
// SIGHUP never stops the server.
func (t *tlsServing) follow(ctx context.Context) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var poll <-chan time.Time
		if t.certs != nil {
			ticker := time.NewTicker(tlsPollInterval)
			defer ticker.Stop()
			poll = ticker.C
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if t.certs == nil {
					t.logger.Info("SIGHUP ignored: the server serves plain HTTP, there is no certificate to reload")
					continue
				}
				t.certs.reload("SIGHUP", true)
			case <-poll:
				t.certs.reload("file change", false)
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		cancel()
		<-done
	}
}

// certReloader holds the pair in use and loads it again when asked.
type certReloader struct {
	certFile, keyFile, certFrom, keyFrom string
	logger                               *slog.Logger

	current atomic.Pointer[tls.Certificate]

	mu    sync.Mutex // serialises reloads: SIGHUP and the poll
	tried [sha256.Size]byte
}

// getCertificate is tls.Config.GetCertificate: the pair in use.
func (r *certReloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return r.current.Load(), nil
}

// load reads and checks the pair, remembering what it read so that the
// poll tries a pair once, not once a tick.
func (r *certReloader) load() (*tls.Certificate, error) {
	certPEM, certErr := os.ReadFile(r.certFile)
	keyPEM, keyErr := os.ReadFile(r.keyFile)
	r.tried = fingerprint(certPEM, certErr, keyPEM, keyErr)
	switch {
	case certErr != nil:
		return nil, fmt.Errorf("%s: %w", r.certFrom, certErr)
	case keyErr != nil:
		return nil, fmt.Errorf("%s: %w", r.keyFrom, keyErr)
	}
	return r.pair(certPEM, keyPEM)
}

// reload loads the pair again: always for SIGHUP, else only when either
// file is not what was tried last. A pair that fails to load is logged
// (tls reload failed) and the one in use stays.
func (r *certReloader) reload(trigger string, always bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	last := r.tried
	if !always {
		certPEM, certErr := os.ReadFile(r.certFile)
		keyPEM, keyErr := os.ReadFile(r.keyFile)
		if fingerprint(certPEM, certErr, keyPEM, keyErr) == last {
			return
		}
	}
	cert, err := r.load()
	if err != nil {
		r.logger.Error("tls reload failed", "trigger", trigger, "reason", err.Error(),
			"kept", "the certificate in use stays until a pair loads")
		return
	}
	r.current.Store(cert)
	logPair(r.logger, "tls certificate reloaded", cert, "trigger", trigger)
}

// pair checks the PEM of both files and makes the pair of them: every
// block complete (a file caught half written has a BEGIN line without its
// END), the certificates parseable, and the key the certificate's.
func (r *certReloader) pair(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	certs, err := pemBlocks(certPEM)
	if err == nil && !hasBlock(certs, func(t string) bool { return t == "CERTIFICATE" }) {
		err = errors.New("no CERTIFICATE PEM block")
	}
	for _, b := range certs {
		if err == nil && b.Type == "CERTIFICATE" {
			_, err = x509.ParseCertificate(b.Bytes)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.certFrom, r.certFile, err)
	}
	keys, err := pemBlocks(keyPEM)
	if err == nil && !hasBlock(keys, func(t string) bool { return strings.HasSuffix(t, "PRIVATE KEY") }) {
		err = errors.New("no PRIVATE KEY PEM block")
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.keyFrom, r.keyFile, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s %s and %s %s do not make a pair: %w", r.certFrom, r.certFile, r.keyFrom, r.keyFile, err)
	}
	return &cert, nil
}

// pemBlocks returns the PEM blocks of data, or an error when a block is
// not complete.
func pemBlocks(data []byte) ([]*pem.Block, error) {
	var blocks []*pem.Block
	for {
		b, rest := pem.Decode(data)
		if b == nil {
			if bytes.Contains(data, []byte("-----BEGIN")) {
				return nil, errors.New("a PEM block is not complete (a file written half?)")
			}
			return blocks, nil
		}
		blocks, data = append(blocks, b), rest
	}
}

// hasBlock reports whether a block's type is one that ok accepts.
func hasBlock(blocks []*pem.Block, ok func(string) bool) bool {
	for _, b := range blocks {
		if ok(b.Type) {
			return true
		}
	}
	return false
}

// fingerprint identifies what reading both files gave: their contents or
// the errors.
func fingerprint(certPEM []byte, certErr error, keyPEM []byte, keyErr error) [sha256.Size]byte {
	h := sha256.New()
	for _, part := range []struct {
		data []byte
		err  error
	}{{certPEM, certErr}, {keyPEM, keyErr}} {
		if part.err != nil {
			fmt.Fprintf(h, "error %d %s\n", len(part.err.Error()), part.err)
			continue
		}
		fmt.Fprintf(h, "data %d\n", len(part.data))
		h.Write(part.data)
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// logPair logs msg for a pair loaded, with attrs and the certificate's
// subject, names and end of validity (never the key): as a warning when
// the certificate has expired (it is served all the same: clients will
// refuse it, and the operator must hear why).
func logPair(logger *slog.Logger, msg string, cert *tls.Certificate, attrs ...any) {
	level := slog.LevelInfo
	if leaf := cert.Leaf; leaf != nil {
		attrs = append(attrs, "subject", leaf.Subject.String(), "dns_names", strings.Join(leaf.DNSNames, ","),
			"not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
		if time.Now().After(leaf.NotAfter) {
			level = slog.LevelWarn
			attrs = append(attrs, "warning", "the certificate has expired")
		}
	}
	logger.Log(context.Background(), level, msg, attrs...)
}
