package tasks_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/statgraph/statgraph/tasks"
)

func TestEnvAllowed(t *testing.T) {
	allow := []string{"MY_VAR", "AIDER_*"}
	for _, c := range []struct {
		entry string
		want  bool
	}{
		{"MY_VAR", true},
		{"MY_VAR=x", true},
		{"AIDER_MODEL", true},
		{"AIDER_MODEL=gpt", true},
		{"AIDER_*", true},
		{"AIDER_X*", true},
		{"AIDER*", false},
		{"MY_*", false},
		{"MY_VAR*", false},
		{"*", false},
		{"OPENAI_API_KEY", false},
		{"OPENAI_BASE_URL=https://elsewhere", false},
		{"MY_VARX", false},
	} {
		if got := tasks.EnvAllowed(c.entry, allow); got != c.want {
			t.Errorf("EnvAllowed(%q, %q) = %v; want %v", c.entry, allow, got, c.want)
		}
	}
	if !tasks.EnvAllowed("*", []string{"*"}) || !tasks.EnvAllowed("ANY=1", []string{"*"}) {
		t.Error(`--allow-env "*" allows everything`)
	}
	if tasks.EnvAllowed("A", nil) {
		t.Error("nothing allowed: A is refused")
	}
	if got := tasks.EnvOutside([]string{"MY_VAR", "*", "AIDER_X", "HOME"}, allow); strings.Join(got, ",") != "*,HOME" {
		t.Errorf("EnvOutside = %q; want [* HOME]", got)
	}
}

func TestCheckNew(t *testing.T) {
	for _, c := range []struct {
		obj  string
		want error
	}{
		{`{"title": "ok", "test_cmd": "go test ./...", "executor": {"command": ["a"], "env": ["MY_VAR"]}}`, nil},
		{`{"title": "` + strings.Repeat("t", tasks.MaxTitleBytes+1) + `"}`, tasks.ErrTooLarge},
		{`{"title": "x", "details": "` + strings.Repeat("d", tasks.MaxTextBytes+1) + `"}`, tasks.ErrTooLarge},
		{`{"title": "x", "details": "` + strings.Repeat("d", tasks.MaxNewTaskBytes) + `"}`, tasks.ErrTooLarge},
		{`{"title": "x", "checks": [{"name": "a", "cmd": ["` + strings.Repeat("c", tasks.MaxTextBytes+1) + `"]}]}`, tasks.ErrTooLarge},
		{`{"title": "x", "updatedAt": "now"}`, tasks.ErrRefusedTask},
		{`{"title": "x", "subtasks": [{"id": 1, "title": "s", "executor": {"command": ["a"], "env": ["*"]}}]}`, tasks.ErrRefusedTask},
		{`{"title": "x", "executor": {"command": ["a"], "env": ["OPENAI_API_KEY"]}}`, tasks.ErrRefusedTask},
		{`[1]`, tasks.ErrBadTask},
	} {
		err := tasks.CheckNew([]byte(c.obj), []string{"MY_VAR"})
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("CheckNew(%.60s) = %v; want %v", c.obj, err, c.want)
		}
	}
}
