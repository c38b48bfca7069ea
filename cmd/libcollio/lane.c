/* The fast lane: see shim.h and adio.Lane. One lane per handle slot. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

struct lane {
	int armed[COLLIO_LANES];
	int busy; /* calls inside collio_lane_serve: take waits for them */
	int fd;
	long long base[COLLIO_LANES], etsize[COLLIO_LANES], calls_left[COLLIO_LANES]; /* calls_left < 0: no limit */
	MPI_Datatype dt[COLLIO_LANES];
	long long dtsize[COLLIO_LANES];
	struct collio_lane_calls done[COLLIO_LANES];
};

#define SLOTS (1 << 16)
#define SLOT_BYTES 64 /* handles.go's slotBytes */
static struct lane *lanes[SLOTS];
static pthread_mutex_t lanes_mu = PTHREAD_MUTEX_INITIALIZER;

/* COLLIO_FAST_LANE=0 sends every transfer through Go. */
int collio_lane_enabled(void)
{
	static int enabled = -1;
	if (enabled < 0)
		enabled = collioGoEnvInt((char *)"COLLIO_FAST_LANE") != 0;
	return enabled;
}

static struct lane **slot_of(uintptr_t h)
{
	uintptr_t base = (uintptr_t)collio_handle_base();
	if (base == 0 || h < base || (h - base) / SLOT_BYTES >= SLOTS)
		return NULL;
	return &lanes[(h - base) / SLOT_BYTES];
}

void collio_lane_arm(uintptr_t h, int kind, int fd, long long base, long long etsize, long long calls,
		     MPI_Datatype dt, long long dtsize)
{
	struct lane **p = slot_of(h);
	if (p == NULL)
		return;
	struct lane *l = __atomic_load_n(p, __ATOMIC_ACQUIRE);
	if (l == NULL) {
		/* Lanes outlive their files: a slot's lane serves the next file
		 * in that slot once Go arms it. */
		pthread_mutex_lock(&lanes_mu);
		l = *p;
		if (l == NULL && (l = calloc(1, sizeof *l)) != NULL)
			__atomic_store_n(p, l, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&lanes_mu);
		if (l == NULL)
			return;
	}
	l->fd = fd;
	l->base[kind] = base;
	l->etsize[kind] = etsize;
	l->calls_left[kind] = calls;
	l->dt[kind] = dt;
	l->dtsize[kind] = dtsize;
	__atomic_store_n(&l->armed[kind], 1, __ATOMIC_RELEASE);
}

static long long take(long long *x) { return __atomic_exchange_n(x, 0, __ATOMIC_ACQ_REL); }

void collio_lane_take(uintptr_t h, struct collio_lane_calls *out)
{
	memset(out, 0, COLLIO_LANES * sizeof *out);
	struct lane **p = slot_of(h);
	struct lane *l = p != NULL ? __atomic_load_n(p, __ATOMIC_ACQUIRE) : NULL;
	if (l == NULL)
		return;
	for (int d = 0; d < COLLIO_LANES; d++)
		__atomic_store_n(&l->armed[d], 0, __ATOMIC_SEQ_CST);
	/* A call already past its check finishes before Go goes on (and
	 * perhaps closes the descriptor): only a program using the file on
	 * another thread meanwhile, which MPI forbids for close, waits here. */
	while (__atomic_load_n(&l->busy, __ATOMIC_SEQ_CST) > 0)
		sched_yield();
	for (int d = 0; d < COLLIO_LANES; d++) {
		out[d].calls = take(&l->done[d].calls);
		out[d].bytes = take(&l->done[d].bytes);
		out[d].moved = take(&l->done[d].moved);
		out[d].ns = take(&l->done[d].ns);
		out[d].pieces = take(&l->done[d].pieces);
		out[d].last_bytes = l->done[d].last_bytes;
		out[d].last_ns = l->done[d].last_ns;
	}
}

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int serve(struct lane *l, int kind, long long off, void *buf, int count, MPI_Datatype dt, long long *n);

int collio_lane_serve(uintptr_t h, int kind, long long off, void *buf, int count, MPI_Datatype dt, long long *n)
{
	struct lane **p = slot_of(h);
	struct lane *l = p != NULL ? __atomic_load_n(p, __ATOMIC_ACQUIRE) : NULL;
	if (l == NULL)
		return 0;
	/* busy before armed, as take clears armed before it reads busy. */
	__atomic_add_fetch(&l->busy, 1, __ATOMIC_SEQ_CST);
	int served = __atomic_load_n(&l->armed[kind], __ATOMIC_SEQ_CST) && serve(l, kind, off, buf, count, dt, n);
	__atomic_sub_fetch(&l->busy, 1, __ATOMIC_RELEASE);
	return served;
}

static int serve(struct lane *l, int kind, long long off, void *buf, int count, MPI_Datatype dt, long long *n)
{
	if (dt != l->dt[kind] || l->calls_left[kind] == 0)
		return 0;
	long long size = l->dtsize[kind], et = l->etsize[kind];
	if (off < 0 || count < 0 || et <= 0 || off > (LLONG_MAX - l->base[kind]) / et)
		return 0; /* Go names the problem */
	long long want = (long long)count * size, pos = l->base[kind] + off * et, got = 0;
	if (want > 0 && buf == NULL)
		return 0;
	if (pos > LLONG_MAX - want)
		return 0;
	long long t0 = now_ns();
	while (got < want) {
		size_t left = (size_t)(want - got);
		ssize_t k = kind == COLLIO_LANE_WRITE_ALL ? pwrite(l->fd, (const char *)buf + got, left, (off_t)(pos + got))
							  : pread(l->fd, (char *)buf + got, left, (off_t)(pos + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 || (k == 0 && kind == COLLIO_LANE_WRITE_ALL))
			return 0; /* Go redoes the call and reports its error */
		if (k == 0) {
			/* End of file: the rest reads as zeros, not counted. */
			memset((char *)buf + got, 0, (size_t)(want - got));
			break;
		}
		got += k;
	}
	long long dt_ns = now_ns() - t0;
	if (l->calls_left[kind] > 0)
		l->calls_left[kind]--;
	struct collio_lane_calls *c = &l->done[kind];
	/* Counted as requested, as Go counts a call's bytes. */
	__atomic_add_fetch(&c->bytes, want, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->moved, got, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->ns, dt_ns, __ATOMIC_RELAXED);
	if (want > 0)
		__atomic_add_fetch(&c->pieces, 1, __ATOMIC_RELAXED);
	c->last_bytes = want;
	c->last_ns = dt_ns;
	__atomic_add_fetch(&c->calls, 1, __ATOMIC_RELEASE);
	*n = got;
	return 1;
}
