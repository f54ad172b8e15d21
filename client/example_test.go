package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/client"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// exampleServer serves hds.New with the cluster webshop/prod/database
// and returns its URL and a token of its user. A program talks to a
// server of its own instead.
func exampleServer() (url, token string, stop func()) {
	st := memory.New()
	hash, _ := bcrypt.GenerateFromPassword([]byte("alice-password"), bcrypt.MinCost)
	st.CreateUser(context.Background(), &store.User{Username: "alice", PasswordHash: hash, Active: true})
	key := make([]byte, 32)
	srv := httptest.NewServer(hds.New(hds.WithStore(st), hds.WithUsers(st), hds.WithCredentialKey(key),
		hds.WithLogger(slog.New(slog.DiscardHandler))))
	send := func(method, path, body string) string {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return string(out)
	}
	login := send("POST", "/api/v1/auth/login", `{"username":"alice","password":"alice-password"}`)
	token = login[strings.Index(login, `"token":"`)+9:]
	token = token[:strings.IndexByte(token, '"')]
	k := "/api/v1/projects/webshop/collections/prod/clusters/database"
	send("POST", "/api/v1/projects/webshop", "")
	send("POST", "/api/v1/projects/webshop/collections/prod", "")
	send("POST", k, "")
	send("POST", k+"/records", `{"name":"host","type":"STRING","value":"db.internal"}`)
	send("POST", k+"/records", `{"name":"port","type":"INTEGER","value":5432}`)
	send("POST", k+"/records", `{"name":"password","type":"CREDENTIAL","value":"s3cret"}`)
	send("POST", k+"/records", `{"name":"timeout","type":"STRING","value":"30s"}`)
	send("POST", k+"/records", `{"name":"dsn","type":"STRING","value":"postgres://app:${password}@${host}:${port}/app"}`)
	exampleUpdate = func(name, typ, value string) {
		send("PUT", k+"/records/"+name, `{"type":"`+typ+`","value":`+value+`}`)
	}
	return srv.URL, token, srv.Close
}

// exampleUpdate changes a record of webshop/prod/database, as another
// program would.
var exampleUpdate func(name, typ, value string)

func Example() {
	url, token, stop := exampleServer()
	defer stop()
	ctx := context.Background()

	c, err := client.New(url, client.WithToken(token))
	if err != nil {
		fmt.Println(err)
		return
	}
	k, err := c.Cluster(ctx, "webshop", "prod", "database")
	if err != nil {
		fmt.Println(err)
		return
	}
	port := k.Records["port"]
	fmt.Printf("%s %T %v\n", port.Type, port.Value, port.Value)
	fmt.Println(k.Records["dsn"].Value)
	// Output:
	// INTEGER int64 5432
	// postgres://app:s3cret@db.internal:5432/app
}

func ExampleClient_Decode() {
	url, token, stop := exampleServer()
	defer stop()

	c, err := client.New(url, client.WithToken(token))
	if err != nil {
		fmt.Println(err)
		return
	}
	var cfg struct {
		Host     string        `hds:"host,required"`
		Port     int           `hds:"port"`
		Password string        `hds:"password"`
		Timeout  time.Duration `hds:"timeout"`
		Replicas int           `hds:"replicas"` // no such record: left alone
	}
	cfg.Replicas = 1
	if err := c.Decode(context.Background(), "webshop", "prod", "database", &cfg); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s:%d %s %d\n", cfg.Host, cfg.Port, cfg.Timeout, cfg.Replicas)

	var small struct {
		Port int8 `hds:"port"`
	}
	fmt.Println(c.Decode(context.Background(), "webshop", "prod", "database", &small))
	// Output:
	// db.internal:5432 30s 1
	// client: record "port" (INTEGER) into field Port (int8): the value overflows int8
}

func ExampleClient_Watch() {
	url, token, stop := exampleServer()
	defer stop()

	c, err := client.New(url, client.WithToken(token), client.WithDebounce(100*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	err = c.Watch(ctx, "webshop", "prod", "database", func(k *client.Cluster) {
		calls++
		fmt.Println("port", k.Records["port"].Value)
		if calls == 1 {
			go exampleUpdate("port", "INTEGER", "6432") // another program changes it
		} else {
			cancel() // enough for the example
		}
	})
	fmt.Println(err)
	// Output:
	// port 5432
	// port 6432
	// context canceled
}

func ExampleError() {
	url, token, stop := exampleServer()
	defer stop()

	c, err := client.New(url, client.WithToken(token))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = c.Cluster(context.Background(), "webshop", "prod", "cache")
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Code, e.Details)
	}
	// Output:
	// 404 RESOURCE_NOT_FOUND cluster "cache" not found
}

func ExampleNew() {
	_, err := client.New("http://hds.example.com")
	fmt.Println(err)
	_, err = client.New("http://hds.internal:8080", client.WithPlainHTTP())
	fmt.Println(err)
	// Output:
	// client: an http:// base URL to a host other than loopback sends the token in clear: use https://, or WithPlainHTTP() to allow it
	// <nil>
}
