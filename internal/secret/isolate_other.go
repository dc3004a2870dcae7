//go:build !linux

package secret

import (
	"os"
	"strings"
)

// Isolate takes the variables of the process environment for which
// isSecret reports true out of the environment and keeps them for [Lookup]
// and [Scrub]. Outside Linux it only unsets them; it always returns nil.
func Isolate(isSecret func(name string) bool) error {
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if isSecret(name) {
			Register(name, value)
			_ = os.Unsetenv(name)
		}
	}
	return nil
}
