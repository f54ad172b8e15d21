// Package console serves the browser console of docs/api.md#the-console:
// a few hand-written ES modules, a style sheet and an HTML page, embedded
// in the module (assets/) and served as they are, with no build step. The
// console talks to the API only through its public routes, from the same
// origin.
//
// Every answer carries a Content-Security-Policy that allows scripts,
// styles and connections from the console's own origin only (no inline
// script or style), X-Content-Type-Options: nosniff and a Referrer-Policy.
// Files are served with a strong ETag (a hash of their content, computed
// once at start) and Cache-Control: no-cache, so a browser revalidates
// each file on every load (a 304 without a body when it has not changed)
// and never runs a mix of old and new modules after an upgrade.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// Prefix is the path the console is served under, relative to where the
// hds handler is mounted. The path without its trailing slash redirects
// to it.
const Prefix = "/console/"

// ContentSecurityPolicy is sent with every answer of the console.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; " +
	"connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

//go:embed assets
var assets embed.FS

// contentTypes are the types of the files the console ships, by
// extension; the system's MIME tables are not consulted, so that every
// platform answers the same.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
}

// file is one asset, read once at start.
type file struct {
	body        []byte
	etag        string
	contentType string
}

// Handler serves the console's files. Its zero value is not usable: call
// New.
type Handler struct {
	files map[string]file // by path below Prefix, "" for the page
}

// New reads the embedded assets and returns their handler.
func New() *Handler {
	h := &Handler{files: make(map[string]file)}
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		ct, ok := contentTypes[path.Ext(p)]
		if !ok {
			ct = "application/octet-stream"
		}
		sum := sha256.Sum256(body)
		name := strings.TrimPrefix(p, "assets/")
		if name == "index.html" {
			name = ""
		}
		h.files[name] = file{body: body, etag: `"` + hex.EncodeToString(sum[:16]) + `"`, contentType: ct}
		return nil
	})
	if err != nil { // the assets are compiled in: this cannot happen
		panic("hds: console assets: " + err.Error())
	}
	return h
}

// ServeHTTP answers GET and HEAD for Prefix and the files beneath it;
// the path without its trailing slash redirects (relatively, so that it
// works under any mount prefix) to Prefix.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", ContentSecurityPolicy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("X-Frame-Options", "DENY")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	if p+"/" == Prefix {
		// A relative Location: the path seen here may be the mounted one
		// with its prefix stripped (http.Redirect would make it absolute).
		hdr.Set("Cache-Control", "no-cache")
		hdr.Set("Location", path.Base(Prefix)+"/")
		w.WriteHeader(http.StatusMovedPermanently)
		return
	}
	f, ok := h.files[strings.TrimPrefix(p, Prefix)]
	if !ok || !strings.HasPrefix(p, Prefix) {
		hdr.Set("Cache-Control", "no-cache")
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	hdr.Set("Content-Type", f.contentType)
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("ETag", f.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}
