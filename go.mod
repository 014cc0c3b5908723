module github.com/meridian-catalog/meridian

go 1.26

require (
	github.com/evanphx/json-patch/v5 v5.9.11
	github.com/go-chi/chi/v5 v5.5.0
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/google/uuid v1.6.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
	modernc.org/sqlite v1.61.1
)

replace github.com/google/pprof => github.com/google/pprof v0.0.0-20260802141513-ef3492d7dac3
