// Package hints is collio's one declarative table of MPI-IO hints: every key
// collio understands, its kind, default, allowed values and whether all ranks
// must agree on it. It resolves the effective hints of a file from the table
// defaults, the system hints file (ROMIO_HINTS) and the caller's hints,
// validates them, checks that ranks agree, and prints them.
//
// Hint keys are the constants of this package; no other package spells a
// hint key as a raw string.
package hints
