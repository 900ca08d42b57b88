module github.com/notifykit/notify/phone/world

go 1.26.0

toolchain go1.27.3

// world builds from a checkout: the library is the one in this repository,
// not a published version. Releases tag this module with the library at
// the same commit and version (see the README's note on versioning).
replace github.com/notifykit/notify => ../..

require (
	github.com/notifykit/notify v0.0.0-00010101000000-000000000000
	github.com/nyaruka/phonenumbers v1.8.1
)

require (
	github.com/gabriel-vasile/mimetype v1.4.16 // indirect
	github.com/go-playground/locales v0.14.2 // indirect
	github.com/go-playground/universal-translator v0.18.2 // indirect
	github.com/go-playground/validator/v10 v10.30.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/leodido/go-urn v1.5.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
