/* Helpers shared by the C benchmarks (collperf.c, callcost.c, pieces.c): hint strings,
 * size arguments, and the timing reduction. Header-only, so that each
 * program is one `mpicc file.c` away. */
#ifndef CBENCH_COMMON_H
#define CBENCH_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* parse_size reads a byte count with an optional k, m or g suffix (powers
 * of 1024). It returns -1 on anything else. */
static inline long long parse_size(const char *s)
{
	char *end;
	long long v = strtoll(s, &end, 10);
	if (end == s || v < 0)
		return -1;
	switch (*end) {
	case '\0':
		return v;
	case 'k': case 'K':
		v <<= 10;
		break;
	case 'm': case 'M':
		v <<= 20;
		break;
	case 'g': case 'G':
		v <<= 30;
		break;
	default:
		return -1;
	}
	return end[1] == '\0' ? v : -1;
}

/* make_info turns "key=val,key=val" into an MPI_Info (MPI_INFO_NULL for an
 * empty or NULL string). It returns -1 on a malformed pair. */
static inline int make_info(const char *hints, MPI_Info *info)
{
	*info = MPI_INFO_NULL;
	if (hints == NULL || *hints == '\0')
		return 0;
	char *copy = strdup(hints), *save = NULL;
	MPI_Info_create(info);
	for (char *kv = strtok_r(copy, ",", &save); kv != NULL; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		if (eq == NULL || eq == kv || eq[1] == '\0') {
			free(copy);
			MPI_Info_free(info);
			return -1;
		}
		*eq = '\0';
		MPI_Info_set(*info, kv, eq + 1);
	}
	free(copy);
	return 0;
}

/* max_time is the longest of the ranks' own times for a phase: coll_perf's
 * measure. Where ranks share cores and do not synchronize, it rewards ranks
 * that run their whole phase in turn (each times only its own turn), so the
 * programs report span_time and print this one beside it. */
static inline double max_time(double t)
{
	double m;
	MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return m;
}

/* span_time is a phase's time from the first rank's start to the last rank's
 * end, as IOR measures: what the application waits for. MPI_Wtime is one
 * clock on one node; across nodes it is as good as the clocks' sync. */
static inline double span_time(double t0, double t1)
{
	double lo, hi;
	MPI_Allreduce(&t0, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
	MPI_Allreduce(&t1, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return hi - lo;
}

/* report_error prints an MPI error with its context on stderr. */
static inline void report_error(int rank, const char *what, int err)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;
	MPI_Error_string(err, msg, &len);
	fprintf(stderr, "rank %d: %s: %s\n", rank, what, msg);
}

/* any_failed is true on every rank when one rank's flag is set. */
static inline int any_failed(int bad)
{
	int all;
	MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return all;
}

#define MIB (1024.0 * 1024.0)

/* CHECK aborts the job when an MPI call fails, naming the call (what) and
 * the rank (a variable named rank in the caller's scope). */
#define CHECK(call, what)                                    \
	do {                                                     \
		int err_ = (call);                                   \
		if (err_ != MPI_SUCCESS) {                           \
			report_error(rank, what, err_);                  \
			MPI_Abort(MPI_COMM_WORLD, 3);                    \
		}                                                    \
	} while (0)

#endif
