// Package secret keeps the process's secrets (API keys and other
// credentials handed to statgraph at start-up) and removes them from
// everything that leaves the process: command output, prompts, feedback,
// logs, checkpoints, tasks.json and commits.
//
// There is one process-wide set. [Register] adds a named value (the
// environment variables statgraph was started with that look like
// credentials); [Add] adds an unnamed one (a key passed in a
// configuration). [Lookup] returns a named value without the value having
// to stay in the process environment. [Scrub] and [ScrubBytes] replace
// every registered value, and every encoding of it a program can print
// without knowing it is a secret, with [Marker]:
//
//   - the value itself and the value reversed;
//   - hexadecimal, lower and upper case;
//   - URL-encoded, with query escaping and path escaping;
//   - base64 in the standard and URL alphabets, padded or raw, at each of
//     the three byte alignments, so the value is also found inside a longer
//     base64 blob (such as a whole /proc/<pid>/environ encoded at once);
//   - any of the encoded forms wrapped over several lines, as base64, openssl
//     and xxd -p print them.
//
// [Set.NewStream] does the same for a stream of any length (a file being
// committed) holding a few MiB of it at a time.
//
// Values shorter than [MinLen] bytes are kept for Lookup but never
// scrubbed: replacing every "1234" in every output would destroy it and
// protect nothing. Values of names ending in _URL (OPENAI_BASE_URL) are
// endpoints, not credentials, and are kept for Lookup only as well.
//
// [Isolate] moves secret-looking variables out of the process environment
// at start-up (see its doc for why os.Unsetenv is not enough on Linux).
//
// The package imports nothing else of the module, so every package but the
// library statgraph/ (which stays free of the module) can use it.
package secret
