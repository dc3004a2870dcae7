package tasks

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that every problem it reports
// has a position inside the input, that its JSON syntax agrees with
// encoding/json, and that an accepted file renders to the same JSON values.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	bad, _ := filepath.Glob(filepath.Join("testdata", "bad", "*.json"))
	for _, path := range append(seeds, bad...) {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "")
	}
	f.Add([]byte(`{"feature": {"tasks": [{"id": "a", "title": "x"}]}}`), "feature")
	f.Add([]byte(`{"tasks": [{"id": 1, "title": "\u00e9\n", "dependencies": [1.5, "2"]}]}`), "")

	f.Fuzz(func(t *testing.T, data []byte, tag string) {
		file, err := Parse("tasks.json", data, tag)
		body := bytes.TrimPrefix(data, utf8BOM)
		if err != nil {
			var verr *ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("got %T; want *ValidationError", err)
			}
			if len(verr.Problems) == 0 {
				t.Fatal("a ValidationError with no problems")
			}
			lines := bytes.Split(body, []byte("\n"))
			for _, p := range verr.Problems {
				if p.Line < 1 || p.Col < 1 || p.Line > len(lines) || p.Col > len(lines[p.Line-1])+1 {
					t.Fatalf("problem outside the input: %s", p)
				}
			}
		}
		if _, serr := parseTree(body); (serr == nil) != json.Valid(body) && !(serr != nil && strings.Contains(serr.msg, "nested more than")) {
			t.Fatalf("parseTree error %v but json.Valid %v", serr, json.Valid(body))
		}
		if file == nil {
			return
		}
		var out bytes.Buffer
		render(&out, file.root, file.indent, 0)
		var want, got any
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatalf("accepted input that encoding/json rejects: %v", err)
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("rendered invalid JSON: %v\n%s", err, out.Bytes())
		}
		wantJSON, _ := json.Marshal(want)
		gotJSON, _ := json.Marshal(got)
		if !bytes.Equal(wantJSON, gotJSON) {
			t.Fatalf("render changed the document:\n%s\nwant\n%s", gotJSON, wantJSON)
		}
		_ = file.Units()
	})
}
