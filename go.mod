module github.com/collio/collio

go 1.26.0

require (
	github.com/sbromberger/gompi v0.2.0
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.49.0
	pgregory.net/rapid v1.3.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
