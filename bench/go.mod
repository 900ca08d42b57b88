module github.com/notifykit/notify/bench

go 1.26.8

replace github.com/notifykit/notify => ../

require (
	github.com/nikoksr/notify v1.3.0
	github.com/notifykit/notify v0.0.0-00010101000000-000000000000
)

require golang.org/x/sync v0.24.0 // indirect
