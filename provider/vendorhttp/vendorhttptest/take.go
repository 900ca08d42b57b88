package vendorhttptest

// TakeProxyError takes the status FailNextHTTP asked for, 0 when none,
// without answering: for a fake whose flow decides which request the
// fault falls on (when it records the request) before the point where it
// fires (after the latency), where its handler answers ProxyError(w,
// status). Proxied is TakeProxyError and ProxyError at once.
func (f *Faults) TakeProxyError() (status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	status = f.failHTTP
	f.failHTTP = 0
	return status
}
