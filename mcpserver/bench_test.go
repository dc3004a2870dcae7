package mcpserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
)

// BenchmarkStatus compares the status tool, called through the SDK's
// client over an in-memory pipe, with the control.Tasks read it is built
// on (its floor), on a plan of 200 tasks: the ratio is what the protocol
// adds (encoding, schema validation, the pipe).
//
//	go test -run '^$' -bench Status -benchmem ./mcpserver
func BenchmarkStatus(b *testing.B) {
	var list []string
	for i := 1; i <= 200; i++ {
		list = append(list, fmt.Sprintf(`{"id": %d, "title": "task %d", "executor": {"command": ["true"]}, "test_cmd": "true"}`, i, i))
	}
	file := controltest.NewPlan(b, `{"tasks": [`+strings.Join(list, ",\n")+`]}`)
	ctl, err := control.Open(control.Options{File: file})
	if err != nil {
		b.Fatal(err)
	}
	defer ctl.Close()
	ctx := context.Background()
	b.Run("control.Tasks", func(b *testing.B) {
		for b.Loop() {
			if _, err := ctl.Tasks(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mcp-status", func(b *testing.B) {
		cs := serve(b, ctl)
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "status"})
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
}
