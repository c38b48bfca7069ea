// Package coll is the kernel that the collective strategies (twophase,
// segment, tam) share: the Job that describes one rank's part of a
// collective call and its validation, the ranks' access ranges, the
// Slicer that cuts an access into pieces per file window, the k-way
// Merger of sorted request lists and the compact encoding those lists
// travel in, reusable buffers, the Pipeline that runs rounds' file I/O
// behind the exchange, and the broadcast of the file size for reads. What
// differs between strategies (who aggregates which bytes, in which
// rounds, over which messages) stays in their own packages.
package coll
