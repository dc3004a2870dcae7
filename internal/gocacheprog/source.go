package gocacheprog

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
)

//go:embed serve.go
var serve []byte

// mainGo is the program's main: `gocacheprog UPPER LOWER...`.
const mainGo = `package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "gocacheprog UPPER LOWER... is run by go commands inside statgraph's sandbox (GOCACHEPROG), not by hand")
		os.Exit(2)
	}
	if err := Serve(os.Stdin, os.Stdout, os.Args[1], os.Args[2:]...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`

// Source returns the files of the cache program as a module of its own
// (go.mod, serve.go as package main, main.go) and a name for its binary
// that changes with them, "gocacheprog-<hash>", so that a program built
// from an older statgraph is never taken for this one's.
func Source() (files map[string][]byte, name string) {
	files = map[string][]byte{
		"go.mod":   []byte("module statgraph.invalid/gocacheprog\n\ngo 1.22\n"),
		"serve.go": bytes.Replace(serve, []byte("\npackage gocacheprog\n"), []byte("\npackage main\n"), 1),
		"main.go":  []byte(mainGo),
	}
	h := sha256.New()
	for _, n := range []string{"go.mod", "serve.go", "main.go"} {
		h.Write([]byte(n + "\x00"))
		h.Write(files[n])
		h.Write([]byte{0})
	}
	return files, "gocacheprog-" + hex.EncodeToString(h.Sum(nil)[:8])
}
