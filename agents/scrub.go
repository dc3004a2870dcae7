package agents

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/statgraph/statgraph/internal/secret"
)

// node is the signature of the orchestrator's nodes.
type node = func(context.Context, TaskState) (TaskState, error)

// scrubbing wraps a node so that neither the state it returns (which is
// checkpointed, written back to tasks.json and shown) nor its error text
// holds a secret or an encoding of one (see package internal/secret).
func scrubbing(fn node) node {
	return func(ctx context.Context, s TaskState) (TaskState, error) {
		out, err := fn(ctx, s)
		return scrubState(out), secret.ScrubError(err)
	}
}

// scrubState returns s with every string in it scrubbed. It costs nothing
// when no secret is registered and one JSON encoding of s when none
// occurs; only a state that holds a secret is rebuilt. A secret with
// characters JSON escapes (quotes, backslashes, control characters) is
// not found in the encoding and is left to the scrubs upstream (command
// output, prompts).
func scrubState(s TaskState) TaskState {
	if !secret.Active() {
		return s
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil || !secret.Contains(buf.Bytes()) {
		return s
	}
	var tree any
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return s
	}
	b, err := json.Marshal(scrubTree(tree))
	if err != nil {
		return s
	}
	var out TaskState
	if err := json.Unmarshal(b, &out); err != nil {
		return s
	}
	return out
}

// scrubTree scrubs every string of a decoded JSON value in place.
func scrubTree(v any) any {
	switch v := v.(type) {
	case string:
		return secret.Scrub(v)
	case []any:
		for i := range v {
			v[i] = scrubTree(v[i])
		}
	case map[string]any:
		for k, e := range v {
			v[k] = scrubTree(e)
		}
	}
	return v
}
