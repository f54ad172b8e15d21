// Command dump writes the OpenAPI document that hds.New serves to the
// file named by its argument (go generate in internal/e2e/clients).
package main

import (
	"fmt"
	"os"

	"github.com/hds-go/hds/internal/e2e/clients"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: dump FILE")
		os.Exit(2)
	}
	doc, err := clients.Document()
	if err == nil {
		err = os.WriteFile(os.Args[1], doc, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dump:", err)
		os.Exit(1)
	}
}
