module github.com/notifykit/notify

go 1.26.0

toolchain go1.27.3

require (
	github.com/SherClockHolmes/webpush-go v1.4.0
	github.com/emersion/go-sasl v0.0.0-20241020182733-b788ff22d5a6
	github.com/emersion/go-smtp v0.25.1
	github.com/go-playground/validator/v10 v10.30.1
	github.com/google/uuid v1.6.0
	github.com/toorop/go-dkim v0.0.0-20201103131630-e1cd1a0a5208
	github.com/xhit/go-simple-mail/v2 v2.16.0
	golang.org/x/net v0.62.0
	golang.org/x/oauth2 v0.38.0
)

require (
	cloud.google.com/go/compute/metadata v0.3.0 // indirect
	github.com/gabriel-vasile/mimetype v1.4.16 // indirect
	github.com/go-playground/locales v0.14.2 // indirect
	github.com/go-playground/universal-translator v0.18.2 // indirect
	github.com/go-test/deep v1.1.2 // indirect
	github.com/golang-jwt/jwt/v5 v5.2.1 // indirect
	github.com/leodido/go-urn v1.5.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
