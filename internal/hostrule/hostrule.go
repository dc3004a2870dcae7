// Package hostrule parses the host rules of a sandbox's network allowlist
// ("example.com", "*.example.com", an IP address, "localhost", each with an
// optional ":port") and matches hosts against them. tasks checks the rules
// a plan names with it; internal/proc's proxy enforces them. It imports the
// standard library only, so the plan file's package stays a leaf.
package hostrule

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Rule is one entry of an allowlist: a host name (or, with wildcard, the
// names under it), an IP address, and optionally one port.
type Rule struct {
	Host     string // lower case, without the "*." of a wildcard; an IP as netip formats it
	Wildcard bool   // "*.example.com": every name under example.com, not example.com itself
	Literal  bool   // host is an IP address or "localhost": loopback is what was asked for
	Port     int    // 0: any port
}

// Check returns nil when rule is an allowlist entry the proxy
// understands: "example.com", "*.example.com" (the names under
// example.com, not example.com itself), an IP address ("127.0.0.1",
// "[::1]"), "localhost", each optionally followed by ":port". Otherwise
// the error says what is wrong with it.
func Check(rule string) error {
	_, err := Parse(rule)
	return err
}

// Parse returns the rule that rule names (see Check for the forms).
func Parse(rule string) (Rule, error) {
	const want = `want a host name ("example.com"), "*.example.com", an IP address, or one of them with ":port"`
	s := strings.ToLower(strings.TrimSpace(rule))
	if s == "" {
		return Rule{}, fmt.Errorf("host %q is empty; %s", rule, want)
	}
	if strings.Contains(s, "://") || strings.ContainsAny(s, "/?#@ \t") {
		return Rule{}, fmt.Errorf("host %q is not a host; %s (no scheme or path)", rule, want)
	}
	var r Rule
	host := s
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Rule{}, fmt.Errorf("host %q has port %q; want a number from 1 to 65535", rule, p)
		}
		host, r.Port = h, n
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		host = s[1 : len(s)-1]
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		r.Host, r.Literal = ip.Unmap().String(), true
		return r, nil
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		r.Wildcard, host = true, rest
	}
	host = strings.TrimSuffix(host, ".") // the root's dot: "example.com." is example.com
	if !validName(host) {
		return Rule{}, fmt.Errorf("host %q is not a valid host name; %s", rule, want)
	}
	r.Host, r.Literal = host, host == "localhost"
	return r, nil
}

// validName reports whether s is a DNS name: dot-separated labels of
// letters, digits, '-' and '_', none empty or longer than 63 bytes.
func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for l := range strings.SplitSeq(s, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, c := range []byte(l) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// List is a parsed, canonical list of rules.
type List []Rule

// ParseList parses rules; key is the canonical form (sorted, without
// duplicates) under which equal lists share one proxy.
func ParseList(rules []string) (List, string, error) {
	var list List
	var keys []string
	for _, s := range rules {
		r, err := Parse(s)
		if err != nil {
			return nil, "", err
		}
		list = append(list, r)
		keys = append(keys, r.String())
	}
	slices.Sort(keys)
	return list, strings.Join(slices.Compact(keys), ","), nil
}

// String is the rule's canonical form, which Parse reads back.
func (r Rule) String() string {
	h := r.Host
	if r.Wildcard {
		h = "*." + h
	}
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if r.Port != 0 {
		h += ":" + strconv.Itoa(r.Port)
	}
	return h
}

// Match returns the rule allowing host (a name or an IP address, any case)
// on port, and whether there is one. A rule naming an IP address or
// "localhost" wins over a name rule, since only it lets the connection go
// to loopback.
func (a List) Match(host string, port int) (Rule, bool) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		host = ip.Unmap().String()
	}
	var found Rule
	ok := false
	for _, r := range a {
		if r.Port != 0 && r.Port != port {
			continue
		}
		hit := host == r.Host
		if r.Wildcard {
			hit = strings.HasSuffix(host, "."+r.Host)
		}
		if hit && (!ok || r.Literal) {
			found, ok = r, true
		}
	}
	return found, ok
}

// AllowedAddr reports whether the proxy may connect to ip for a request
// rule allowed. A name rule never reaches this machine's loopback, an
// unspecified, link-local (cloud metadata at 169.254.169.254) or multicast
// address, whatever the name resolves to: otherwise an allowlisted name an
// attacker controls could be pointed at the host's own services. Only a
// rule naming the address itself, or "localhost", reaches them.
func AllowedAddr(rule Rule, ip netip.Addr) bool {
	if rule.Literal {
		return true
	}
	ip = ip.Unmap()
	return !(ip.IsLoopback() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsMulticast() || ip.IsInterfaceLocalMulticast())
}
