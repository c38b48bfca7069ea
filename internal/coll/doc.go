// Package coll is the kernel that the collective strategies (twophase,
// segment, tam) share: the k-way merge of sorted request lists and the
// compact encoding those lists travel in. What differs between strategies
// (who aggregates which bytes, in which rounds, over which messages) stays
// in their own packages.
package coll
