package tasks

import (
	"path/filepath"
	"strings"

	"github.com/statgraph/statgraph/internal/hostrule"
)

// sandboxKeys are the members of a sandbox object.
var sandboxKeys = []string{"network", "read", "hide"}

// sandbox decodes the sandbox field: {"network": false | true | [hosts],
// "read": [paths], "hide": [paths]}.
func (d *decoder) sandbox(obj *node, id string) SandboxSettings {
	const want = `want an object such as {"network": ["proxy.golang.org"], "read": ["~/.m2"], "hide": ["~/notes"]}`
	v := obj.get("sandbox")
	if v == nil || v.kind == kindNull {
		return SandboxSettings{}
	}
	if v.kind != kindObject {
		d.add(v.off, id, `"sandbox" is %s; %s`, describe(v), want)
		return SandboxSettings{}
	}
	d.uniqueKeys(v, id)
	for _, m := range v.members {
		if !contains(sandboxKeys, m.key) {
			d.add(m.keyOff, id, "unknown sandbox field %q (known: %s)", m.key, strings.Join(sandboxKeys, ", "))
		}
	}
	var s SandboxSettings
	switch n := v.get("network"); {
	case n == nil || n.kind == kindNull:
	case n.kind == kindBool:
		s.Network = d.boolean(v, "network", id)
	case n.kind == kindArray:
		s.Hosts = []string{}
		for i, e := range n.elems {
			if e.kind != kindString {
				d.add(e.off, id, `sandbox.network[%d] is %s; want a host such as "proxy.golang.org"`, i, describe(e))
			} else if err := hostrule.Check(e.str); err != nil {
				d.add(e.off, id, "sandbox.network[%d]: %v", i, err)
			} else {
				s.Hosts = append(s.Hosts, e.str)
			}
		}
	default:
		d.add(n.off, id, `"sandbox.network" is %s; want false (closed), true (the host's network) or an array of hosts such as ["proxy.golang.org", "*.npmjs.org"]`, describe(n))
	}
	s.Read = d.sandboxPaths(v, "read", id)
	s.Hide = d.sandboxPaths(v, "hide", id)
	return s
}

// sandboxPaths decodes sandbox.read or sandbox.hide: absolute paths, or
// paths under the user's home written "~/...".
func (d *decoder) sandboxPaths(v *node, key, id string) []string {
	if _, ok := d.strList(v, key, id, false); !ok {
		return nil
	}
	var out []string
	for i, e := range v.get(key).elems {
		if e.kind != kindString {
			continue // reported by strList
		}
		p := e.str
		if rest, home := strings.CutPrefix(p, "~/"); home {
			p = "/" + rest
		}
		switch {
		case !filepath.IsAbs(p) || strings.ContainsRune(p, 0):
			d.add(e.off, id, `sandbox.%s[%d] %q is not an absolute path; give one such as "/opt/sdk" or "~/.m2" (under your home)`, key, i, e.str)
		case filepath.Clean(p) == "/":
			d.add(e.off, id, `sandbox.%s[%d] %q is the whole filesystem (or home); name the directories themselves, such as "~/.m2"`, key, i, e.str)
		default:
			out = append(out, e.str)
		}
	}
	return out
}
