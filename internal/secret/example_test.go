package secret_test

import (
	"encoding/base64"
	"fmt"

	"github.com/statgraph/statgraph/internal/secret"
)

func ExampleScrub() {
	secret.Register("OPENAI_API_KEY", "sk-example-0123456789")
	fmt.Println(secret.Scrub("export OPENAI_API_KEY=sk-example-0123456789"))
	// A test that base64-encodes a whole environment block.
	blob := base64.StdEncoding.EncodeToString([]byte("HOME=/root\x00OPENAI_API_KEY=sk-example-0123456789\x00"))
	fmt.Println(secret.Scrub(blob))
	// Short values and endpoint URLs are kept for Lookup but not scrubbed.
	secret.Register("OPENAI_BASE_URL", "http://localhost:11434/v1")
	fmt.Println(secret.Scrub("calling http://localhost:11434/v1"))
	// Output:
	// export OPENAI_API_KEY=[REDACTED]
	// SE9NRT0vcm9vdABPUEVOQUlfQVBJX0tFWT1[REDACTED]kA
	// calling http://localhost:11434/v1
}
