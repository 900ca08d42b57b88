package webpush

import "github.com/notifykit/notify/internal/netguard"

// NewGuarded is New whose default client's guard has configuration
// guard: a resolver, and the loopback addresses the tests allow, so that
// the guard's path is tested without DNS or a public address.
func NewGuarded(cfg Config, guard netguard.Config) (*Provider, error) { return newProvider(cfg, guard) }
