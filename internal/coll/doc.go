// Package coll is the contract of the collective strategies and the
// kernel they share. The contract: a Strategy (Write, Read over a Job),
// made for a file from its Setting by the New of its Registration, which
// also gives its Bid in the automatic choice and its AggregatorRule;
// strategy packages Register from init, and the file object finds them
// here without naming them. The kernel: the Job that describes one
// rank's part of a collective call and its validation, the ranks' access
// ranges, the Slicer that cuts an access into pieces per file window, the
// k-way Merger of sorted request lists and the compact encoding those
// lists travel in, reusable buffers, the Pipeline that runs rounds' file
// I/O behind the exchange, and the broadcast of the file size for reads.
// What differs between strategies (who aggregates which bytes, in which
// rounds, over which messages, from which hints) stays in their own
// packages.
package coll
