//go:build cgo

package mpitest_test

import (
	"testing"

	"github.com/collio/collio/internal/mpitest"
)

func TestMain(m *testing.M) { mpitest.Main(m) }
