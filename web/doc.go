// Package web serves statgraph's web UI and its JSON API over a
// control.Control: the page (plain HTML, CSS and JavaScript embedded in the
// binary), the API under /api/ that the page and scripts use, and a
// Server-Sent Events stream of the plan's changes.
//
// Access: a Handler made with a token requires it on every request, page,
// API and event stream alike, as "Authorization: Bearer TOKEN" or in an
// HttpOnly, SameSite=Strict cookie. The cookie is set by opening the page
// once through LoginURL (/?token=TOKEN, as Jupyter does): the server sets
// it and redirects to the same page without the token, so the token leaves
// the address bar and the browser's history. Tokens are compared in
// constant time. A loopback address is no exception: every program on the
// machine (a check, an agent CLI, another user) can reach loopback.
// Without a token (statgraph serve --no-token), only requests whose Host
// is a loopback name or address are served (so a web page elsewhere cannot
// reach the API through DNS rebinding); the caller binds a loopback
// address then (statgraph serve enforces both).
// Every request that changes something must be a POST with a JSON body
// (Content-Type application/json) and, when it carries an Origin, one
// matching its Host, so a cross-site form cannot post to it.
//
// The API's requests and answers are listed in docs/web-and-mcp.md.
package web
