package tasks

// limits.go decodes the settings that bound a task against a hostile or
// broken model or agent: "timeout" (the task's deadline), "request_timeout"
// (each model request) and the "limits" object of caps.

import (
	"strings"
	"time"
)

// Limits caps what one attempt may cost. In JSON, in a task or in
// defaults:
//
//	"limits": {"response_bytes": 4194304, "conversation_bytes": 1048576,
//	           "tool_calls_per_turn": 64, "write_bytes": 52428800, "write_files": 2000,
//	           "file_bytes": 104857600, "processes": 2048, "memory_bytes": 8589934592,
//	           "tmp_bytes": 1073741824, "open_files": 4096}
//
// A zero (or absent) field means the built-in default: 4 MiB for one model
// response, 1 MiB of conversation kept (older tool results are elided past
// it), 64 tool calls run per turn (those three bound the LLM executor),
// 50 MiB and 2,000 files written per attempt, and 100 MiB for one file.
// The last three bound every executor: the LLM executor's writes, and the
// attempt's commit whoever wrote the files (an agent CLI too), which is
// refused, naming the file, past them. processes, memory_bytes, tmp_bytes
// and open_files bound each sandboxed command (check or agent CLI) and
// everything it starts: their defaults are proc.Defaults (2,048
// processes, min(8 GiB, half the RAM), a 1 GiB /tmp, 4,096 open files).
// A task's field overrides the defaults object's, field by field.
type Limits struct {
	ResponseBytes     int
	ConversationBytes int
	ToolCallsPerTurn  int
	WriteBytes        int
	WriteFiles        int
	FileBytes         int
	Processes         int
	MemoryBytes       int
	TmpBytes          int
	OpenFiles         int
}

// limitKeys are the members of a limits object.
var limitKeys = []string{"response_bytes", "conversation_bytes", "tool_calls_per_turn", "write_bytes", "write_files", "file_bytes",
	"processes", "memory_bytes", "tmp_bytes", "open_files"}

// limits decodes the "limits" object of obj.
func (d *decoder) limits(obj *node, id string) Limits {
	v := obj.get("limits")
	if v == nil || v.kind == kindNull {
		return Limits{}
	}
	if v.kind != kindObject {
		d.add(v.off, id, `"limits" is %s; want an object with any of %s`, describe(v), strings.Join(limitKeys, ", "))
		return Limits{}
	}
	d.uniqueKeys(v, id)
	for _, m := range v.members {
		if !contains(limitKeys, m.key) {
			d.add(m.keyOff, id, "limits: unknown field %q (known: %s)", m.key, strings.Join(limitKeys, ", "))
		}
	}
	get := func(key string) int {
		if n := d.count(v, key, id); n != nil {
			return *n
		}
		return 0
	}
	return Limits{
		ResponseBytes:     get("response_bytes"),
		ConversationBytes: get("conversation_bytes"),
		ToolCallsPerTurn:  get("tool_calls_per_turn"),
		WriteBytes:        get("write_bytes"),
		WriteFiles:        get("write_files"),
		FileBytes:         get("file_bytes"),
		Processes:         get("processes"),
		MemoryBytes:       get("memory_bytes"),
		TmpBytes:          get("tmp_bytes"),
		OpenFiles:         get("open_files"),
	}
}

// merge returns l with every zero field taken from base.
func (l Limits) merge(base Limits) Limits {
	pick := func(a, b int) int {
		if a == 0 {
			return b
		}
		return a
	}
	return Limits{
		ResponseBytes:     pick(l.ResponseBytes, base.ResponseBytes),
		ConversationBytes: pick(l.ConversationBytes, base.ConversationBytes),
		ToolCallsPerTurn:  pick(l.ToolCallsPerTurn, base.ToolCallsPerTurn),
		WriteBytes:        pick(l.WriteBytes, base.WriteBytes),
		WriteFiles:        pick(l.WriteFiles, base.WriteFiles),
		FileBytes:         pick(l.FileBytes, base.FileBytes),
		Processes:         pick(l.Processes, base.Processes),
		MemoryBytes:       pick(l.MemoryBytes, base.MemoryBytes),
		TmpBytes:          pick(l.TmpBytes, base.TmpBytes),
		OpenFiles:         pick(l.OpenFiles, base.OpenFiles),
	}
}

// duration decodes the field key of obj as a positive Go duration such as
// "90s" or "10m"; absent or null is 0.
func (d *decoder) duration(obj *node, key, id string) time.Duration {
	s := d.str(obj, key, id)
	if s == "" {
		return 0
	}
	dur, err := time.ParseDuration(s)
	if err != nil || dur <= 0 {
		d.add(obj.get(key).off, id, `%q is %q; want a positive duration such as "90s" or "10m"`, key, s)
		return 0
	}
	return dur
}
