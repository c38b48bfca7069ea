/* Nonblocking requests: the generalized requests of collio's nonblocking
 * transfers, and the MPI_Wait, MPI_Test (all, any, some) and
 * MPI_Request_free that libcollio interposes to apply the file's error
 * handler to them. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

#include "shim_internal.h"
#include "_cgo_export.h"

/* Nonblocking calls return a generalized request. Independent ones run
 * their I/O when they are started and complete it at once; collective
 * ones (MPI_File_i*_all) progress on their own in Go (adio's nonblocking
 * transfers), which completes the request when the transfer is done.
 * MPI_Wait/MPI_Test read the byte count and error through greq_query.
 *
 * Errors found after the start go to the file's error handler, as for
 * blocking calls: collio's MPI_Wait, MPI_Test and their all/any/some forms
 * recognise collio's requests and apply it (Open MPI would otherwise
 * send a generalized request's error to MPI_COMM_WORLD's handler, by
 * default fatal). A wait that does not pass through them (PMPI_Wait
 * itself) gets the error code back through MPI_COMM_WORLD's handler. */
struct greq {
	long long n;
	int cls;                   /* the transfer's error class, once finished */
	struct noted_error noted;  /* its message */
	uintptr_t token;           /* the Go side; 0 once finished or for done requests */
	MPI_Request req;
	MPI_File fh;
	const char *name;
	int refs;                  /* the request's, and each wrapper's holding it */
	struct greq *next;         /* active collective requests */
};

static pthread_mutex_t greq_mu = PTHREAD_MUTEX_INITIALIZER;
static struct greq *greq_active;
static __thread int greq_wrapped; /* inside collio's MPI_Wait & co. */

static void greq_unref(struct greq *g)
{
	pthread_mutex_lock(&greq_mu);
	int last = --g->refs == 0;
	if (last) {
		for (struct greq **p = &greq_active; *p != NULL; p = &(*p)->next)
			if (*p == g) {
				*p = g->next;
				break;
			}
	}
	pthread_mutex_unlock(&greq_mu);
	if (last)
		free(g);
}

/* greq_hold finds a collective request of collio's and holds it. */
static struct greq *greq_hold(MPI_Request r)
{
	struct greq *found = NULL;
	if (r == MPI_REQUEST_NULL)
		return NULL;
	pthread_mutex_lock(&greq_mu);
	for (struct greq *g = greq_active; g != NULL; g = g->next)
		if (g->req == r && g->refs > 0) {
			g->refs++;
			found = g;
			break;
		}
	pthread_mutex_unlock(&greq_mu);
	return found;
}

/* greq_take_token clears and returns g's token: whoever takes it releases
 * or finishes the transfer (a freed request's free_fn may run on the
 * thread that completes it). */
static uintptr_t greq_take_token(struct greq *g)
{
	pthread_mutex_lock(&greq_mu);
	uintptr_t t = g->token;
	g->token = 0;
	pthread_mutex_unlock(&greq_mu);
	return t;
}

static void greq_finish(struct greq *g)
{
	uintptr_t t = greq_take_token(g);
	if (t == 0)
		return;
	g->cls = collioGoIFinish(t, &g->n);
	collioGoIRelease(t);
	if (g->cls != MPI_SUCCESS)
		g->noted = shim_noted;
}

static int greq_query(void *extra, MPI_Status *st)
{
	struct greq *g = extra;
	greq_finish(g);
	if (st != MPI_STATUS_IGNORE) {
		PMPI_Status_set_elements_x(st, MPI_BYTE, (MPI_Count)g->n);
		PMPI_Status_set_cancelled(st, 0);
		st->MPI_SOURCE = MPI_UNDEFINED;
		st->MPI_TAG = MPI_UNDEFINED;
		/* Open MPI raises a status's error through the request's
		 * handler: inside collio's waits the file's handler is applied
		 * instead (greq_error). */
		st->MPI_ERROR = greq_wrapped ? MPI_SUCCESS : g->cls;
	}
	return greq_wrapped ? MPI_SUCCESS : g->cls;
}

static int greq_free(void *extra)
{
	struct greq *g = extra;
	uintptr_t t = greq_take_token(g);
	if (t != 0) /* never waited for */
		collioGoIRelease(t);
	greq_unref(g);
	return MPI_SUCCESS;
}

static int greq_cancel(void *extra, int complete)
{
	(void)extra;
	(void)complete;
	return MPI_SUCCESS; /* a started transfer runs to its end */
}

void collio_greq_ready(void *g) { PMPI_Grequest_complete(((struct greq *)g)->req); }

int shim_done_request(long long n, MPI_Request *req)
{
	struct greq *g = calloc(1, sizeof *g);
	int rc;
	if (g == NULL)
		return MPI_ERR_NO_MEM;
	g->n = n;
	g->refs = 1;
	rc = PMPI_Grequest_start(greq_query, greq_free, greq_cancel, g, req);
	if (rc != MPI_SUCCESS) {
		free(g);
		return rc;
	}
	return PMPI_Grequest_complete(*req);
}

/* shim_collective_start starts a nonblocking collective transfer (MPI_File_i*_all)
 * that progresses in Go and completes its request when done. */
int shim_collective_start(MPI_File fh, const char *name, int op, MPI_Offset off, const void *buf, int count,
			  MPI_Datatype dt, MPI_Request *req)
{
	struct greq *g = calloc(1, sizeof *g);
	int rc;
	if (g == NULL)
		return shim_file_error(fh, MPI_ERR_NO_MEM, name);
	g->fh = fh;
	g->name = name;
	g->refs = 1;
	rc = PMPI_Grequest_start(greq_query, greq_free, greq_cancel, g, &g->req);
	if (rc != MPI_SUCCESS) {
		free(g);
		return shim_file_error(fh, rc, name);
	}
	pthread_mutex_lock(&greq_mu);
	g->next = greq_active;
	greq_active = g;
	pthread_mutex_unlock(&greq_mu);
	rc = collioGoIStart(H(fh), op, (long long)off, (void *)buf, count, (void *)dt, g, &g->token);
	if (rc != MPI_SUCCESS) {
		struct noted_error keep = shim_noted;
		MPI_Request r = g->req;
		PMPI_Grequest_complete(r);
		PMPI_Request_free(&r); /* frees g through greq_free */
		*req = MPI_REQUEST_NULL;
		shim_noted = keep;
		return shim_file_error(fh, rc, name);
	}
	*req = g->req;
	return MPI_SUCCESS;
}

/* greq_error applies the file's error handler to a finished request's
 * error, with its message; MPI_SUCCESS if it had none. */
static int greq_error(struct greq *g)
{
	if (g->cls == MPI_SUCCESS)
		return MPI_SUCCESS;
	shim_noted = g->noted;
	return shim_file_error(g->fh, g->cls, g->name);
}

/* collio's MPI_Wait and MPI_Test families: requests of collio's nonblocking
 * collective transfers report their errors through the file's handler
 * (see struct greq); every other request is the host's business. */

/* hold_all holds collio's requests among reqs[0..n): held[i] or NULL. */
static int hold_all(int n, MPI_Request reqs[], struct greq **held)
{
	int any = 0;
	for (int i = 0; i < n; i++) {
		held[i] = reqs != NULL ? greq_hold(reqs[i]) : NULL;
		any |= held[i] != NULL;
	}
	return any;
}

/* settle applies the file's handler to the held requests that completed
 * with an error and drops the holds. It returns MPI_ERR_IN_STATUS, with
 * each status's MPI_ERROR set, when statuses are given; the first error
 * otherwise; or rc. */
static int settle(int n, struct greq **held, MPI_Status statuses[], int rc)
{
	int first = MPI_SUCCESS;
	for (int i = 0; i < n; i++) {
		struct greq *g = held[i];
		if (g == NULL)
			continue;
		int code = greq_error(g);
		if (statuses != MPI_STATUSES_IGNORE)
			statuses[i].MPI_ERROR = code;
		if (first == MPI_SUCCESS)
			first = code;
		greq_unref(g);
	}
	if (first == MPI_SUCCESS)
		return rc;
	return statuses != MPI_STATUSES_IGNORE ? MPI_ERR_IN_STATUS : first;
}

/* greq_block waits, without spinning, for the transfer behind g when it
 * has not finished yet (PMPI_Wait would poll the progress engine on a core
 * the transfer's own threads need). */
static void greq_block(struct greq *g)
{
	pthread_mutex_lock(&greq_mu);
	uintptr_t t = g->token;
	pthread_mutex_unlock(&greq_mu);
	if (t != 0)
		collioGoIWait(t);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
	struct greq *g = request != NULL ? greq_hold(*request) : NULL;
	if (g == NULL)
		return PMPI_Wait(request, status);
	greq_block(g);
	greq_wrapped++;
	int rc = PMPI_Wait(request, status);
	greq_wrapped--;
	if (rc == MPI_SUCCESS) {
		rc = greq_error(g);
		if (status != MPI_STATUS_IGNORE)
			status->MPI_ERROR = rc;
	}
	greq_unref(g);
	return rc;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	struct greq *g = request != NULL ? greq_hold(*request) : NULL;
	if (g == NULL)
		return PMPI_Test(request, flag, status);
	greq_wrapped++;
	int rc = PMPI_Test(request, flag, status);
	greq_wrapped--;
	if (rc == MPI_SUCCESS && *flag) {
		rc = greq_error(g);
		if (status != MPI_STATUS_IGNORE)
			status->MPI_ERROR = rc;
	}
	greq_unref(g);
	return rc;
}

/* Up to this many requests are checked without allocating. */
#define HELD_STACK 64

static struct greq **held_array(int n, struct greq **stack)
{
	if (n <= HELD_STACK)
		return stack;
	return malloc((size_t)n * sizeof(struct greq *));
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
	struct greq *stack[HELD_STACK], **held = held_array(count, stack);
	if (held == NULL || !hold_all(count, requests, held)) {
		if (held != stack)
			free(held);
		return PMPI_Waitall(count, requests, statuses);
	}
	int all_ours = 1;
	for (int i = 0; i < count; i++)
		all_ours &= held[i] != NULL || requests[i] == MPI_REQUEST_NULL;
	if (all_ours) /* else the program's own requests need the progress engine */
		for (int i = 0; i < count; i++)
			if (held[i] != NULL)
				greq_block(held[i]);
	greq_wrapped++;
	int rc = PMPI_Waitall(count, requests, statuses);
	greq_wrapped--;
	rc = settle(count, held, statuses, rc);
	if (held != stack)
		free(held);
	return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
	struct greq *stack[HELD_STACK], **held = held_array(count, stack);
	if (held == NULL || !hold_all(count, requests, held)) {
		if (held != stack)
			free(held);
		return PMPI_Testall(count, requests, flag, statuses);
	}
	greq_wrapped++;
	int rc = PMPI_Testall(count, requests, flag, statuses);
	greq_wrapped--;
	if (!*flag) {
		for (int i = 0; i < count; i++)
			if (held[i] != NULL)
				greq_unref(held[i]);
	} else {
		rc = settle(count, held, statuses, rc);
	}
	if (held != stack)
		free(held);
	return rc;
}

static int any_settle(int count, struct greq **held, int index, MPI_Status *status, int rc)
{
	int code = MPI_SUCCESS;
	for (int i = 0; i < count; i++) {
		if (held[i] == NULL)
			continue;
		if (i == index && rc == MPI_SUCCESS) {
			code = greq_error(held[i]);
			if (code != MPI_SUCCESS && status != MPI_STATUS_IGNORE)
				status->MPI_ERROR = code;
		}
		greq_unref(held[i]);
	}
	return code != MPI_SUCCESS ? code : rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
	struct greq *stack[HELD_STACK], **held = held_array(count, stack);
	if (held == NULL || !hold_all(count, requests, held)) {
		if (held != stack)
			free(held);
		return PMPI_Waitany(count, requests, index, status);
	}
	greq_wrapped++;
	int rc = PMPI_Waitany(count, requests, index, status);
	greq_wrapped--;
	rc = any_settle(count, held, *index, status, rc);
	if (held != stack)
		free(held);
	return rc;
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
	struct greq *stack[HELD_STACK], **held = held_array(count, stack);
	if (held == NULL || !hold_all(count, requests, held)) {
		if (held != stack)
			free(held);
		return PMPI_Testany(count, requests, index, flag, status);
	}
	greq_wrapped++;
	int rc = PMPI_Testany(count, requests, index, flag, status);
	greq_wrapped--;
	rc = any_settle(count, held, *flag ? *index : MPI_UNDEFINED, status, rc);
	if (held != stack)
		free(held);
	return rc;
}

static int some_settle(int count, struct greq **held, int outcount, const int indices[], MPI_Status statuses[], int rc)
{
	/* Waitsome's statuses are by position in indices, not by request. */
	int first = MPI_SUCCESS;
	for (int k = 0; outcount != MPI_UNDEFINED && k < outcount; k++) {
		struct greq *g = held[indices[k]];
		if (g == NULL)
			continue;
		int code = greq_error(g);
		if (code != MPI_SUCCESS) {
			if (statuses != MPI_STATUSES_IGNORE)
				statuses[k].MPI_ERROR = code;
			if (first == MPI_SUCCESS)
				first = code;
		}
	}
	for (int i = 0; i < count; i++)
		if (held[i] != NULL)
			greq_unref(held[i]);
	if (first == MPI_SUCCESS)
		return rc;
	return statuses != MPI_STATUSES_IGNORE ? MPI_ERR_IN_STATUS : first;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
	struct greq *stack[HELD_STACK], **held = held_array(incount, stack);
	if (held == NULL || !hold_all(incount, requests, held)) {
		if (held != stack)
			free(held);
		return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
	}
	greq_wrapped++;
	int rc = PMPI_Waitsome(incount, requests, outcount, indices, statuses);
	greq_wrapped--;
	rc = some_settle(incount, held, *outcount, indices, statuses, rc);
	if (held != stack)
		free(held);
	return rc;
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
	struct greq *stack[HELD_STACK], **held = held_array(incount, stack);
	if (held == NULL || !hold_all(incount, requests, held)) {
		if (held != stack)
			free(held);
		return PMPI_Testsome(incount, requests, outcount, indices, statuses);
	}
	greq_wrapped++;
	int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
	greq_wrapped--;
	rc = some_settle(incount, held, *outcount, indices, statuses, rc);
	if (held != stack)
		free(held);
	return rc;
}

/* A collective transfer whose request is freed before it completes goes
 * on; the file no longer counts it as not waited for. */
int MPI_Request_free(MPI_Request *request)
{
	struct greq *g = request != NULL ? greq_hold(*request) : NULL;
	if (g != NULL) {
		uintptr_t t = greq_take_token(g);
		if (t != 0)
			collioGoIRelease(t);
		greq_unref(g);
	}
	return PMPI_Request_free(request);
}
