package tasks

import (
	"regexp"
	"strings"
	"time"
)

// placeholderRE finds {name} tokens in executor arguments.
var placeholderRE = regexp.MustCompile(`\{[a-z_]+\}`)

// executorKeys are the fields of an executor object.
var executorKeys = []string{"command", "preset", "stdin", "timeout", "env"}

// executor decodes the executor field: "llm", a preset's name, or an
// object with a command or a preset and the optional stdin, timeout, env.
func (d *decoder) executor(obj *node, id string) Executor {
	want := `want "llm", a preset (` + strings.Join(ExecutorPresets, ", ") + `) or {"command": ["program", "arg", ...]}`
	v := obj.get("executor")
	if v == nil || v.kind == kindNull {
		return Executor{}
	}
	switch v.kind {
	case kindString:
		switch {
		case v.str == "llm":
		case contains(ExecutorPresets, v.str):
			return Executor{Preset: v.str}
		default:
			d.add(v.off, id, "unknown executor %q; %s", v.str, want)
		}
		return Executor{}
	case kindObject:
		return d.executorObject(v, id, want)
	default:
		d.add(v.off, id, "executor is %s; %s", describe(v), want)
		return Executor{}
	}
}

func (d *decoder) executorObject(v *node, id, want string) Executor {
	d.uniqueKeys(v, id)
	for _, m := range v.members {
		if !contains(executorKeys, m.key) {
			d.add(m.keyOff, id, "unknown executor field %q (known: %s)", m.key, strings.Join(executorKeys, ", "))
		}
	}
	var e Executor
	if p := v.get("preset"); p != nil {
		e.Preset = d.str(v, "preset", id)
		if p.kind == kindString && !contains(ExecutorPresets, e.Preset) {
			d.add(p.off, id, "unknown executor preset %q (known: %s)", e.Preset, strings.Join(ExecutorPresets, ", "))
			e.Preset = ""
		}
	}
	cmd := v.get("command")
	switch {
	case cmd != nil && e.Preset != "":
		d.add(v.off, id, `executor has both "command" and "preset"; give one of them`)
		return Executor{}
	case cmd == nil && e.Preset == "":
		if v.get("preset") == nil {
			d.add(v.off, id, "executor has no command array; %s", want)
		}
		return Executor{}
	case cmd != nil && cmd.kind != kindArray:
		d.add(v.off, id, "executor has no command array; %s", want)
		return Executor{}
	case cmd != nil:
		argv, _ := d.strList(v, "command", id, false)
		if len(argv) == 0 || argv[0] == "" {
			d.add(cmd.off, id, "executor command has no program; %s", want)
			return Executor{}
		}
		for i, a := range argv {
			for _, ph := range placeholderRE.FindAllString(a, -1) {
				if !contains(Placeholders, ph) {
					d.add(cmd.elems[i].off, id, "unknown placeholder %s in executor command (known: %s)", ph, strings.Join(Placeholders, ", "))
				}
			}
		}
		e.Command = argv
	}
	if b := d.boolean(v, "stdin", id); b != nil {
		e.Stdin = *b
	}
	if t := d.str(v, "timeout", id); t != "" {
		dur, err := time.ParseDuration(t)
		if err != nil || dur <= 0 {
			d.add(v.get("timeout").off, id, `executor timeout %q is not a positive duration such as "90s" or "45m"`, t)
		} else {
			e.Timeout = dur
		}
	}
	env, _ := d.strList(v, "env", id, false)
	for i, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); name == "" || strings.ContainsAny(name, " \t\n") {
			d.add(v.get("env").elems[i].off, id, "env[%d] %q is not a variable name, NAME* or NAME=VALUE", i, kv)
		}
	}
	e.Env = env
	return e
}
