//go:build cgo

package mpirunner_test

import (
	"testing"

	"github.com/collio/collio/internal/mpirunner"
)

func TestMain(m *testing.M) { mpirunner.Main(m) }
