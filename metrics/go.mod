module github.com/notifykit/notify/metrics

go 1.26.0

toolchain go1.27.3

// metrics builds from a checkout: the library is the one in this repository,
// not a published version. Releases tag this module with the library at
// the same commit and version (see the README's note on versioning).
replace github.com/notifykit/notify => ../

require (
	github.com/notifykit/notify v0.0.0-00010101000000-000000000000
	github.com/prometheus/client_golang v1.25.0
	github.com/prometheus/client_model v0.6.3
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/gabriel-vasile/mimetype v1.4.16 // indirect
	github.com/go-playground/locales v0.14.2 // indirect
	github.com/go-playground/universal-translator v0.18.2 // indirect
	github.com/go-playground/validator/v10 v10.30.1 // indirect
	github.com/leodido/go-urn v1.5.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/pandatix/go-abnf v0.5.3 // indirect
	github.com/prometheus/common v0.73.1 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
