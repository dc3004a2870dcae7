package hostrule

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		rule, err string
	}{
		{"example.com", ""}, {"*.Example.COM", ""}, {"proxy.golang.org:443", ""}, {"127.0.0.1:8080", ""},
		{"[::1]:11434", ""}, {"::1", ""}, {"localhost:11434", ""},
		{"", "is empty"}, {"https://example.com", "not a host"}, {"example.com/path", "not a host"},
		{"example.com:0", "port"}, {"example.com:http", "port"}, {"exa mple.com", "not a host"},
		{"*", "not a valid host name"}, {"-bad.com", "not a valid host name"}, {"a..b", "not a valid host name"},
	} {
		err := Check(tc.rule)
		if tc.err == "" {
			assert.NoError(t, err, tc.rule)
		} else if assert.Error(t, err, tc.rule) {
			assert.Contains(t, err.Error(), tc.err, tc.rule)
		}
	}
}

func TestAllowlistMatch(t *testing.T) {
	list, key, err := ParseList([]string{"Example.com", "*.golang.org", "api.host:8443", "127.0.0.1:8080", "example.com"})
	require.NoError(t, err)
	assert.Equal(t, "*.golang.org,127.0.0.1:8080,api.host:8443,example.com", key, "sorted, lower case, once each")
	for _, tc := range []struct {
		host string
		port int
		want bool
	}{
		{"example.com", 443, true}, {"EXAMPLE.com.", 80, true}, {"www.example.com", 443, false},
		{"proxy.golang.org", 443, true}, {"golang.org", 443, false}, {"evilgolang.org", 443, false},
		{"api.host", 8443, true}, {"api.host", 443, false},
		{"127.0.0.1", 8080, true}, {"127.0.0.1", 8081, false}, {"::ffff:127.0.0.1", 8080, true}, {"localhost", 8080, false},
	} {
		_, ok := list.Match(tc.host, tc.port)
		assert.Equal(t, tc.want, ok, "%s:%d", tc.host, tc.port)
	}
}

// TestAllowedAddr: a host name that resolves to loopback, link-local (the
// cloud metadata service) or an unspecified address is not followed there;
// a rule naming the address, or localhost, is.
func TestAllowedAddr(t *testing.T) {
	name, _ := Parse("example.com")
	literal, _ := Parse("127.0.0.1:8080")
	local, _ := Parse("localhost:11434")
	for _, tc := range []struct {
		rule Rule
		ip   string
		want bool
	}{
		{name, "93.184.215.14", true}, {name, "10.1.2.3", true}, {name, "127.0.0.1", false}, {name, "::1", false},
		{name, "169.254.169.254", false}, {name, "0.0.0.0", false}, {name, "::ffff:127.0.0.1", false},
		{literal, "127.0.0.1", true}, {local, "::1", true},
	} {
		assert.Equal(t, tc.want, AllowedAddr(tc.rule, netip.MustParseAddr(tc.ip)), "%s -> %s", tc.rule, tc.ip)
	}
}

// FuzzCheck: a rule Check accepts has a canonical form that parses
// to the same rule, and matches the host it names on its port.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"example.com", "*.golang.org", "127.0.0.1:8080", "[::1]:1", "localhost", "a:b:c", "*.", "x:65536"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(r.String())
		if err != nil || again != r {
			t.Fatalf("%q parses to %+v, whose form %q parses to %+v, %v", s, r, r.String(), again, err)
		}
		host, port := r.Host, r.Port
		if r.Wildcard {
			host = "sub." + host
		}
		if port == 0 {
			port = 443
		}
		if _, ok := (List{r}).Match(host, port); !ok {
			t.Fatalf("rule %q does not match %s:%d", s, host, port)
		}
	})
}
