package queue

import (
	"net/url"
)

// Redact returns a connection URL with its password replaced by "xxxxx"
// (url.URL.Redacted), for messages. A string that is not a URL with a
// user (a key=value connection string) or that url.Parse rejects (a bad
// port, a bad %-escape) is returned as it is, password included: nothing
// tells where a password would be. A password given as a query parameter
// is not hidden either.
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	return u.Redacted()
}

// WithoutPassword returns a connection URL without its password, to keep
// on disk; a string that is not a URL with a password is returned as it is.
func WithoutPassword(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.User(u.User.Username())
	}
	return u.String()
}
