module github.com/progrium/darwinkit

go 1.18

require github.com/go-test/deep v1.1.0