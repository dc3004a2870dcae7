package queue

import (
	"net/url"
)

// Redact returns a connection URL without its password, for messages.
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
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
