package secret

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"unicode"
)

// MaxCredentialFile is the most of a file [AddCredentials] reads values
// from; the rest is ignored (credential files are small, and statgraph's
// memory stays bounded whatever a file holds).
const MaxCredentialFile = 1 << 20

// AddCredentials adds to the set [Scrub] removes the values in data, the
// contents of a credential or configuration file (an agent CLI's
// auth.json, a .env file), that look like secrets, and returns how many
// it found (values already known included). data may be JSON (every string
// value is looked at with the key it is under) or lines of KEY=VALUE,
// key: value or key = "value" (.env, YAML, TOML, INI, .netrc's "password
// x"). A value is taken when
//
//   - its key names a credential (holds token, secret, pass, pwd, auth,
//     credential, session, cookie, private, salt, signature or dsn, or
//     ends in key: apiKey, AWS_SECRET_ACCESS_KEY) and the value is not a
//     plain URL or an absolute path; or
//   - whatever its key, it looks like a token: at least 20 characters
//     without spaces, of letters, digits and -_.+/=~: only, with upper and
//     lower case letters and digits (sk-ant-…, ghp_…, JWTs, base64), or
//     at least 32 hexadecimal digits; or
//   - it is a URL with a password (postgres://user:pw@host): the password
//     and the URL.
//
// Values shorter than [MinLen] are never scrubbed (see Add). Only the
// first [MaxCredentialFile] bytes are read. It is safe for concurrent use.
func AddCredentials(data []byte) int {
	vals := CredentialValues(data)
	for _, v := range vals {
		Add(v)
	}
	return len(vals)
}

// CredentialValues returns the values AddCredentials would add, in the
// order found, without adding them.
func CredentialValues(data []byte) []string {
	if len(data) > MaxCredentialFile {
		data = data[:MaxCredentialFile]
	}
	var c collector
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if t := bytes.TrimSpace(data); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		var tree any
		dec := json.NewDecoder(bytes.NewReader(t))
		dec.UseNumber()
		if dec.Decode(&tree) == nil {
			c.walk("", tree)
			return c.out
		}
	}
	for line := range strings.Lines(string(data)) {
		c.line(line)
	}
	return c.out
}

// collector gathers values without duplicates.
type collector struct{ out []string }

func (c *collector) add(v string) {
	if len(v) < MinLen {
		return
	}
	for _, o := range c.out {
		if o == v {
			return
		}
	}
	c.out = append(c.out, v)
}

// walk looks at every string of a decoded JSON value; key is the name the
// value is under ("" in an array).
func (c *collector) walk(key string, v any) {
	switch v := v.(type) {
	case string:
		c.value(key, v)
	case []any:
		for _, e := range v {
			c.walk(key, e)
		}
	case map[string]any:
		for k, e := range v {
			c.walk(k, e)
		}
	}
}

// line looks at one line of a KEY=VALUE style file.
func (c *collector) line(l string) {
	l = strings.TrimSpace(l)
	if l == "" || l[0] == '#' || l[0] == ';' || strings.HasPrefix(l, "//") {
		return
	}
	l = strings.TrimSpace(strings.TrimPrefix(l, "export "))
	if u, err := url.Parse(l); err == nil && u.Scheme != "" && u.Host != "" {
		c.value("", l) // .git-credentials: https://user:token@host
		return
	}
	if i := strings.IndexAny(l, "=:"); i > 0 && !strings.ContainsAny(strings.TrimSpace(l[:i]), " \t") {
		c.value(unquote(strings.TrimSpace(l[:i])), unquote(strings.TrimSpace(l[i+1:])))
		return
	}
	// Space-separated words (.netrc: machine h login u password p).
	words := strings.Fields(l)
	for i, w := range words {
		if credentialKey(w) && i+1 < len(words) {
			c.value(w, words[i+1])
		} else {
			c.value("", w)
		}
	}
}

// value takes v, found under key, when it looks like a secret.
func (c *collector) value(key, v string) {
	if strings.ContainsAny(v, "\r\n") {
		return
	}
	if u, err := url.Parse(v); err == nil && u.Scheme != "" && u.Host != "" {
		if pw, ok := u.User.Password(); ok && pw != "" {
			c.add(pw)
			c.add(v)
		}
		return // a URL is an endpoint, not a credential
	}
	if credentialKey(key) && !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "~/") && !strings.HasPrefix(v, "./") {
		c.add(v)
		return
	}
	if looksLikeToken(v) {
		c.add(v)
	}
}

// credentialKey reports whether a key names a credential.
func credentialKey(k string) bool {
	k = strings.ToLower(strings.NewReplacer("_", "", "-", "", ".", "").Replace(k))
	if k == "" {
		return false
	}
	for _, w := range []string{"token", "secret", "pass", "pwd", "auth", "credential", "session", "cookie", "private", "salt", "signature", "dsn"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return strings.HasSuffix(k, "key")
}

// looksLikeToken reports whether v looks like a generated credential.
func looksLikeToken(v string) bool {
	if len(v) < 20 || strings.HasPrefix(v, "/") || strings.Contains(v, "://") {
		return false
	}
	var upper, lower, digit, nonHex bool
	for _, r := range v {
		switch {
		case unicode.IsUpper(r) && r < 128:
			upper = true
			nonHex = nonHex || r > 'F'
		case unicode.IsLower(r) && r < 128:
			lower = true
			nonHex = nonHex || r > 'f'
		case '0' <= r && r <= '9':
			digit = true
		case strings.ContainsRune("-_.+/=~:", r):
			nonHex = true
		default:
			return false
		}
	}
	return upper && lower && digit || !nonHex && len(v) >= 32 && digit
}

// unquote removes one pair of surrounding quotes and a trailing comma.
func unquote(s string) string {
	s = strings.TrimSuffix(s, ",")
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}
