module github.com/hds-go/hds

go 1.26.0

require (
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/stretchr/testify v1.12.1
	github.com/ulule/limiter/v3 v3.11.2
	golang.org/x/crypto v0.58.0
)

require (
	github.com/pkg/errors v0.9.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
