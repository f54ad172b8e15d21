package client

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// The environment file of a cluster as a client made WithEnvFile reads
// it (docs/api.md#environment-files).

// maxEnvFile bounds the environment file read: a cluster holds at most
// a few MiB of values.
const maxEnvFile = 64 << 20

// errMalformedEnv is an environment file that is not as the API writes
// it. It never quotes the file: it holds values.
var errMalformedEnv = errors.New("the environment file is malformed")

// readEnvFile reads the environment file of resp, the 200 answer to GET
// path?format=env: its variables and the records it left out, with the
// cluster tag.
func readEnvFile(resp *http.Response, path string) (*Cluster, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxEnvFile+1))
	if err != nil {
		return nil, &RequestError{Method: "GET", Path: path, Err: unwrapURLError(err)}
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		return nil, &RequestError{Method: "GET", Path: path, Answered: true, Err: fmt.Errorf(
			"the server did not answer with an environment file (Content-Type %q): it may be older than API v1.1", ct)}
	}
	if len(body) > maxEnvFile {
		return nil, &RequestError{Method: "GET", Path: path, Answered: true,
			Err: fmt.Errorf("the environment file is longer than %d MiB", maxEnvFile>>20)}
	}
	vars, err := parseEnvFile(body)
	if err != nil {
		return nil, &RequestError{Method: "GET", Path: path, Answered: true, Err: err}
	}
	skipped, _ := strconv.Atoi(resp.Header.Get("X-Hds-Skipped-Records"))
	return &Cluster{Env: vars, Skipped: max(skipped, 0), Tag: resp.Header.Get("ETag")}, nil
}

// parseEnvFile reads an environment file as GET K?format=env writes it:
// lines NAME='value' in POSIX single quotes (a quote inside the value
// ends the quoted string, comes escaped as \' and a new one opens), each
// line ending with a newline. It returns NAME=value entries.
func parseEnvFile(b []byte) ([]string, error) {
	var vars []string
	for len(b) > 0 {
		eq := bytes.IndexByte(b, '=')
		if eq < 0 || !isEnvName(b[:eq]) {
			return nil, errMalformedEnv
		}
		entry := append([]byte(nil), b[:eq+1]...)
		b = b[eq+1:]
		for {
			if len(b) == 0 || b[0] != '\'' {
				return nil, errMalformedEnv
			}
			end := bytes.IndexByte(b[1:], '\'')
			if end < 0 {
				return nil, errMalformedEnv
			}
			entry = append(entry, b[1:1+end]...)
			b = b[end+2:]
			if !bytes.HasPrefix(b, []byte(`\'`)) {
				break
			}
			entry = append(entry, '\'')
			b = b[2:]
		}
		if len(b) == 0 || b[0] != '\n' {
			return nil, errMalformedEnv
		}
		b = b[1:]
		vars = append(vars, string(entry))
	}
	return vars, nil
}

// isEnvName reports whether name is [A-Za-z_][A-Za-z0-9_]*.
func isEnvName(name []byte) bool {
	for i, c := range name {
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return len(name) > 0
}
