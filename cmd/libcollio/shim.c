/* The C side of libcollio.
 *
 * It defines the whole MPI_File_* family with the prototypes of the host
 * mpi.h (so the compiler checks them), the public collio_* C API of
 * collio.h, and the MPI glue that is easier to write in C: statuses,
 * generalized requests, error handlers, the shared-file-pointer window.
 *
 * A handle is ours when its address lies in the PROT_NONE reservation made
 * by collio_handle_base. Every other handle (MPI_FILE_NULL, files opened
 * through the host MPI-IO because their path is passed through) goes to the
 * host's PMPI_File_* function unchanged.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "shim.h"
#include "collio.h"
#include "_cgo_export.h"

/* ---------------------------------------------------------------- handles */

/* 2^16 handles, 64 bytes apart: a 4 MiB reservation, never touched. */
#define COLLIO_SPAN ((size_t)1 << 22)

static char *handle_base;
static pthread_once_t handle_once = PTHREAD_ONCE_INIT;

static void reserve_handles(void)
{
	void *p = mmap(NULL, COLLIO_SPAN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p != MAP_FAILED)
		handle_base = p;
}

void *collio_handle_base(void)
{
	pthread_once(&handle_once, reserve_handles);
	return handle_base;
}

size_t collio_handle_span(void) { return COLLIO_SPAN; }

int collio_is_ours(const void *h)
{
	const char *b = handle_base;
	return b != NULL && (const char *)h >= b && (const char *)h < b + COLLIO_SPAN;
}

#define OURS(fh) collio_is_ours((const void *)(fh))
#define H(fh) ((uintptr_t)(fh))

/* ------------------------------------------------------------ error codes */

/* The error a Go export reported on this thread: fail (main.go) runs on
 * the thread of the C call that entered Go and notes the class and the
 * message here, and the MPI_File_* function returning the class takes them
 * (take_error). Per thread, so that concurrent calls on several threads
 * cannot swap messages; cleared when an intercepted call starts
 * (VIA_COLLIO), so an error found in C never gets an older call's text. */
struct noted_error {
	int set, cls;
	char msg[MPI_MAX_ERROR_STRING]; /* shortened to fit MPI_Add_error_string */
	char full[1024];                /* for COLLIO_VERBOSE and MPI_ERRORS_ARE_FATAL */
};
static __thread struct noted_error noted;

static void copy_text(char *dst, size_t size, const char *src, int n)
{
	size_t k = n > 0 && src != NULL ? (size_t)n : 0;
	if (k > size - 1)
		k = size - 1;
	if (k > 0)
		memcpy(dst, src, k);
	dst[k] = '\0';
}

void collio_note_error(int cls, const char *full, int nfull, const char *msg, int nmsg)
{
	noted.cls = cls;
	copy_text(noted.msg, sizeof noted.msg, msg, nmsg);
	copy_text(noted.full, sizeof noted.full, full, nfull);
	noted.set = 1;
}

/* Error codes registered with the host MPI (MPI_Add_error_code and
 * MPI_Add_error_string), so that MPI_Error_string on a code a collio call
 * returned gives collio's message, and MPI_Error_class its class.
 *
 * Bounded: each MPI error class has a pool of at most codes_limit() codes
 * (COLLIO_ERROR_CODES, default 64; 0 returns plain classes), made when
 * first needed. A message equal to one a code of the class holds gets that
 * code again; a new message takes a new code while the pool is not full,
 * then the least recently returned code of the class, whose string
 * MPI_Add_error_string replaces (MPI-3.1 8.5 allows replacing a string;
 * Open MPI 4.1 copies the new one over the old). A long run therefore adds
 * at most codes_limit() codes per class (COLLIO_ERROR_CODES, 0 to 4096,
 * parsed in Go like every switch variable), and a code kept by the program
 * while codes_limit() newer distinct errors of its class happened shows the
 * text of a newer one (its class stays right). One mutex guards the pools;
 * the host MPI calls are made under it. */
struct code_slot {
	int code;
	unsigned long used; /* codes_clock when last returned */
	char msg[MPI_MAX_ERROR_STRING];
};
struct code_pool {
	int n;
	struct code_slot *slot; /* codes_limit() entries, n in use */
};
static struct code_pool code_pools[MPI_ERR_LASTCODE + 1];
static int codes_per_class = -1;
static unsigned long codes_clock;
static pthread_mutex_t codes_mu = PTHREAD_MUTEX_INITIALIZER;

/* Under codes_mu. */
static int codes_limit(void)
{
	if (codes_per_class < 0)
		codes_per_class = collioGoEnvInt((char *)"COLLIO_ERROR_CODES");
	return codes_per_class;
}

/* collio_error_code returns a code of class cls whose string is msg, or
 * cls itself when there is no message, codes are off, or the host MPI
 * refuses (MPI not initialised, or finalised). */
static int collio_error_code(int cls, const char *msg)
{
	int code = cls, init = 0, fin = 0, limit;
	struct code_pool *p;
	struct code_slot *s = NULL;
	if (msg == NULL || *msg == '\0' || cls <= MPI_SUCCESS || cls > MPI_ERR_LASTCODE)
		return cls;
	if (PMPI_Initialized(&init) != MPI_SUCCESS || !init || PMPI_Finalized(&fin) != MPI_SUCCESS || fin)
		return cls;
	pthread_mutex_lock(&codes_mu);
	limit = codes_limit();
	p = &code_pools[cls];
	if (limit == 0)
		goto out;
	if (p->slot == NULL && (p->slot = calloc((size_t)limit, sizeof *p->slot)) == NULL)
		goto out;
	for (int i = 0; i < p->n; i++) {
		if (strcmp(p->slot[i].msg, msg) == 0) {
			s = &p->slot[i];
			goto found;
		}
	}
	if (p->n < limit) {
		int c;
		if (PMPI_Add_error_code(cls, &c) != MPI_SUCCESS)
			goto out;
		s = &p->slot[p->n++];
		s->code = c;
	} else {
		s = &p->slot[0];
		for (int i = 1; i < p->n; i++)
			if (p->slot[i].used < s->used)
				s = &p->slot[i];
	}
	s->msg[0] = '\0'; /* until the host MPI has the new string */
	if (PMPI_Add_error_string(s->code, msg) != MPI_SUCCESS) {
		s->used = 0; /* the next to reuse */
		goto out;
	}
	snprintf(s->msg, sizeof s->msg, "%s", msg);
found:
	s->used = ++codes_clock;
	code = s->code;
out:
	pthread_mutex_unlock(&codes_mu);
	return code;
}

/* take_error turns class cls, the result of a call, into the code to
 * return: a registered code with the message noted on this thread when it
 * is cls's, else cls. The full message goes to full (empty without one). */
static int take_error(int cls, char *full, size_t size)
{
	int code = cls;
	full[0] = '\0';
	if (cls == MPI_SUCCESS)
		return cls;
	if (noted.set && noted.cls == cls) {
		code = collio_error_code(cls, noted.msg);
		snprintf(full, size, "%s", noted.full);
	}
	noted.set = 0;
	return code;
}

/* ---------------------------------------------------------------- tracing */

static int verbose_level = -1;

int collio_verbose(void)
{
	if (verbose_level < 0)
		verbose_level = collioGoEnvInt((char *)"COLLIO_VERBOSE");
	return verbose_level;
}

int collio_world_rank(void)
{
	int init = 0, fin = 0, rank = -1;
	PMPI_Initialized(&init);
	PMPI_Finalized(&fin);
	if (init && !fin)
		PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	return rank;
}

static void trace(const char *name, const char *where)
{
	if (collio_verbose() > 0)
		fprintf(stderr, "collio[%d]: %s -> %s\n", collio_world_rank(), name, where);
}

/* Every intercepted call on a collio file starts with VIA_COLLIO, which
 * also forgets an error noted on this thread by an earlier call (below). */
#define VIA_COLLIO(name) (noted.set = 0, trace(name, "collio"))
#define VIA_HOST(name) trace(name, "host MPI-IO")

/* ---------------------------------------------------------- error handlers */

/* File error handlers made with MPI_File_create_errhandler, so collio can
 * call their function for its own files. Entries are never removed: a
 * handler can outlive the user's handle (MPI_Errhandler_free while a file
 * still uses it); a new handler at a reused address replaces the entry. */
struct eh_entry {
	MPI_Errhandler eh;
	MPI_File_errhandler_function *fn;
	int fortran; /* fn takes Fortran arguments (MPI_Fint *file, MPI_Fint *code) */
};
static struct eh_entry *eh_table;
static int eh_len, eh_cap;
static pthread_mutex_t eh_mu = PTHREAD_MUTEX_INITIALIZER;
/* Serialises the use of MPI_FILE_NULL's handler slot in retain. */
static pthread_mutex_t eh_null_mu = PTHREAD_MUTEX_INITIALIZER;

static void eh_remember(MPI_Errhandler eh, MPI_File_errhandler_function *fn, int fortran)
{
	pthread_mutex_lock(&eh_mu);
	for (int i = 0; i < eh_len; i++) {
		if (eh_table[i].eh == eh) {
			eh_table[i].fn = fn;
			eh_table[i].fortran = fortran;
			pthread_mutex_unlock(&eh_mu);
			return;
		}
	}
	if (eh_len == eh_cap) {
		int cap = eh_cap ? 2 * eh_cap : 8;
		struct eh_entry *t = realloc(eh_table, (size_t)cap * sizeof *t);
		if (t == NULL) {
			pthread_mutex_unlock(&eh_mu);
			return;
		}
		eh_table = t;
		eh_cap = cap;
	}
	eh_table[eh_len].eh = eh;
	eh_table[eh_len].fn = fn;
	eh_table[eh_len].fortran = fortran;
	eh_len++;
	pthread_mutex_unlock(&eh_mu);
}

void collio_remember_fortran_errhandler(MPI_Errhandler eh, void *fn)
{
	eh_remember(eh, (MPI_File_errhandler_function *)fn, 1);
}

static MPI_File_errhandler_function *eh_lookup(MPI_Errhandler eh, int *fortran)
{
	MPI_File_errhandler_function *fn = NULL;
	pthread_mutex_lock(&eh_mu);
	for (int i = 0; i < eh_len; i++) {
		if (eh_table[i].eh == eh) {
			fn = eh_table[i].fn;
			*fortran = eh_table[i].fortran;
		}
	}
	pthread_mutex_unlock(&eh_mu);
	return fn;
}

/* The handler of MPI_FILE_NULL (the default for new files), with a
 * reference the caller releases. */
MPI_Errhandler collio_default_errhandler(void)
{
	MPI_Errhandler eh = MPI_ERRORS_RETURN;
	pthread_mutex_lock(&eh_null_mu);
	if (PMPI_File_get_errhandler(MPI_FILE_NULL, &eh) != MPI_SUCCESS)
		eh = MPI_ERRORS_RETURN;
	pthread_mutex_unlock(&eh_null_mu);
	return eh;
}

/* Takes a reference on eh with public calls only: install it on
 * MPI_FILE_NULL, get it back (which retains), restore the old one. This
 * also checks that eh is a file error handler. */
int collio_errhandler_retain(MPI_Errhandler eh)
{
	MPI_Errhandler old, got;
	int rc;
	pthread_mutex_lock(&eh_null_mu);
	rc = PMPI_File_get_errhandler(MPI_FILE_NULL, &old);
	if (rc != MPI_SUCCESS)
		goto out;
	rc = PMPI_File_set_errhandler(MPI_FILE_NULL, eh);
	if (rc != MPI_SUCCESS) {
		PMPI_Errhandler_free(&old);
		goto out;
	}
	rc = PMPI_File_get_errhandler(MPI_FILE_NULL, &got);
	PMPI_File_set_errhandler(MPI_FILE_NULL, old);
	PMPI_Errhandler_free(&old);
out:
	pthread_mutex_unlock(&eh_null_mu);
	return rc;
}

void collio_errhandler_release(MPI_Errhandler eh)
{
	if (eh != MPI_ERRHANDLER_NULL && eh != NULL)
		PMPI_Errhandler_free(&eh);
}

/* code_valid reports whether code is an error code or class of the host
 * MPI (asking about another one would call MPI_COMM_WORLD's handler). */
static int code_valid(int code)
{
	int *last = NULL, flag = 0;
	if (code < 0)
		return 0;
	if (code <= MPI_ERR_LASTCODE)
		return 1;
	if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag) != MPI_SUCCESS || !flag || last == NULL)
		return 0;
	return code <= *last;
}

/* invoke applies handler eh to error code on file fh (MPI_FILE_NULL for
 * open and delete) and returns the code for the caller to return. msg is
 * collio's message for it (empty: the host's text for code is printed). */
static int invoke(MPI_File fh, MPI_Errhandler eh, int code, const char *name, const char *msg)
{
	if (code == MPI_SUCCESS)
		return code;
	if (collio_verbose() > 0 || eh == MPI_ERRORS_ARE_FATAL) {
		char host[MPI_MAX_ERROR_STRING];
		int n = 0;
		if (msg == NULL || *msg == '\0') {
			snprintf(host, sizeof host, "error code %d", code);
			if (code_valid(code))
				PMPI_Error_string(code, host, &n);
			msg = host;
		}
		fprintf(stderr, "collio[%d]: %s failed: %s\n", collio_world_rank(), name, msg);
	}
	if (eh == MPI_ERRORS_RETURN)
		return code;
	if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRHANDLER_NULL || eh == NULL) {
		/* The class: an exit status the shell can tell apart. */
		int cls = code;
		if (code_valid(code) && PMPI_Error_class(code, &cls) != MPI_SUCCESS)
			cls = code;
		PMPI_Abort(MPI_COMM_WORLD, cls);
		return code;
	}
	int fortran = 0;
	MPI_File_errhandler_function *fn = eh_lookup(eh, &fortran);
	if (fn != NULL && fortran) {
		MPI_Fint f = MPI_File_c2f(fh), c = (MPI_Fint)code;
		((void (*)(MPI_Fint *, MPI_Fint *))(void *)fn)(&f, &c);
	} else if (fn != NULL) {
		MPI_File f = fh;
		int c = code;
		fn(&f, &c);
	}
	return code;
}

/* file_error reports class cls, the result of a call on fh, through the
 * file's error handler, as a code with collio's message (take_error); a
 * handle that is not (or no longer) a collio file uses MPI_FILE_NULL's
 * handler. It returns the code for the caller to return. */
static int file_error(MPI_File fh, int cls, const char *name)
{
	char msg[sizeof noted.full];
	void *eh = NULL;
	int code;
	if (cls == MPI_SUCCESS)
		return cls;
	code = take_error(cls, msg, sizeof msg);
	if (fh != MPI_FILE_NULL && OURS(fh) && collioGoErrhandler(H(fh), &eh) == MPI_SUCCESS && eh != NULL &&
	    collio_errhandler_retain((MPI_Errhandler)eh) == MPI_SUCCESS) {
		code = invoke(fh, (MPI_Errhandler)eh, code, name, msg);
		collio_errhandler_release((MPI_Errhandler)eh);
		return code;
	}
	MPI_Errhandler d = collio_default_errhandler();
	code = invoke(MPI_FILE_NULL, d, code, name, msg);
	collio_errhandler_release(d);
	return code;
}

/* arg_error is file_error for an error found in C (a NULL output pointer,
 * ...), with the message "collio: NAME: WHAT". */
static int arg_error(MPI_File fh, int cls, const char *name, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int n = snprintf(msg, sizeof msg, "collio: %s: %s", name, what);
	if (n < 0 || n >= (int)sizeof msg)
		n = (int)strlen(msg);
	collio_note_error(cls, msg, n, msg, n);
	collioGoSetLastError(msg);
	return file_error(fh, cls, name);
}

/* --------------------------------------------------------------- statuses */

static void set_status(MPI_Status *st, long long n)
{
	if (st == MPI_STATUS_IGNORE)
		return;
	PMPI_Status_set_elements_x(st, MPI_BYTE, (MPI_Count)n);
	PMPI_Status_set_cancelled(st, 0);
	st->MPI_SOURCE = MPI_UNDEFINED;
	st->MPI_TAG = MPI_UNDEFINED;
}

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
		g->noted = noted;
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

static int done_request(long long n, MPI_Request *req)
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

/* greq_error applies the file's error handler to a finished request's
 * error, with its message; MPI_SUCCESS if it had none. */
static int greq_error(struct greq *g)
{
	if (g->cls == MPI_SUCCESS)
		return MPI_SUCCESS;
	noted = g->noted;
	return file_error(g->fh, g->cls, g->name);
}

/* -------------------------------------------------------------- transfers */

static int blocking(MPI_File fh, const char *name, int op, MPI_Offset off, const void *buf, int count,
		    MPI_Datatype dt, MPI_Status *st)
{
	long long n = 0;
	int rc;
	VIA_COLLIO(name);
	int lane = -1;
	if ((op & COLLIO_XKIND) == COLLIO_XAT_ALL)
		lane = (op & COLLIO_XREAD) ? COLLIO_LANE_READ_ALL : COLLIO_LANE_WRITE_ALL;
	else if (op == (COLLIO_XAT | COLLIO_XREAD))
		lane = COLLIO_LANE_READ;
	if (lane >= 0 && collio_lane_serve(H(fh), lane, (long long)off, (void *)buf, count, dt, &n)) {
		set_status(st, n);
		return MPI_SUCCESS;
	}
	rc = collioGoXfer(H(fh), op, (long long)off, (void *)buf, count, (void *)dt, &n);
	set_status(st, n);
	return file_error(fh, rc, name);
}

static int collective_start(MPI_File fh, const char *name, int op, MPI_Offset off, const void *buf, int count,
			    MPI_Datatype dt, MPI_Request *req)
{
	struct greq *g = calloc(1, sizeof *g);
	int rc;
	if (g == NULL)
		return file_error(fh, MPI_ERR_NO_MEM, name);
	g->fh = fh;
	g->name = name;
	g->refs = 1;
	rc = PMPI_Grequest_start(greq_query, greq_free, greq_cancel, g, &g->req);
	if (rc != MPI_SUCCESS) {
		free(g);
		return file_error(fh, rc, name);
	}
	pthread_mutex_lock(&greq_mu);
	g->next = greq_active;
	greq_active = g;
	pthread_mutex_unlock(&greq_mu);
	rc = collioGoIStart(H(fh), op, (long long)off, (void *)buf, count, (void *)dt, g, &g->token);
	if (rc != MPI_SUCCESS) {
		struct noted_error keep = noted;
		MPI_Request r = g->req;
		PMPI_Grequest_complete(r);
		PMPI_Request_free(&r); /* frees g through greq_free */
		*req = MPI_REQUEST_NULL;
		noted = keep;
		return file_error(fh, rc, name);
	}
	*req = g->req;
	return MPI_SUCCESS;
}

static int nonblocking(MPI_File fh, const char *name, int op, MPI_Offset off, const void *buf, int count,
		       MPI_Datatype dt, MPI_Request *req)
{
	long long n = 0;
	int rc;
	VIA_COLLIO(name);
	if (req == NULL)
		return arg_error(fh, MPI_ERR_REQUEST, name, "request is NULL");
	int kind = op & COLLIO_XKIND;
	if (kind == COLLIO_XAT_ALL || kind == COLLIO_XALL)
		return collective_start(fh, name, op, off, buf, count, dt, req);
	rc = collioGoXfer(H(fh), op, (long long)off, (void *)buf, count, (void *)dt, &n);
	if (rc == MPI_SUCCESS)
		rc = done_request(n, req);
	if (rc != MPI_SUCCESS)
		*req = MPI_REQUEST_NULL;
	return file_error(fh, rc, name);
}

static int split_begin(MPI_File fh, const char *name, int op, MPI_Offset off, const void *buf, int count,
		       MPI_Datatype dt)
{
	long long n = 0;
	VIA_COLLIO(name);
	return file_error(fh, collioGoXfer(H(fh), op | COLLIO_XSPLIT, (long long)off, (void *)buf, count, (void *)dt, &n),
			  name);
}

static int split_end(MPI_File fh, const char *name, int op, MPI_Status *st)
{
	long long n = 0;
	int rc;
	VIA_COLLIO(name);
	rc = collioGoSplitEnd(H(fh), op, &n);
	set_status(st, n);
	return file_error(fh, rc, name);
}

/* Explicit offsets. */

int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
		     MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_at");
		return PMPI_File_read_at(fh, offset, buf, count, datatype, status);
	}
	return blocking(fh, "MPI_File_read_at", COLLIO_XAT | COLLIO_XREAD, offset, buf, count, datatype, status);
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
			 MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_at_all");
		return PMPI_File_read_at_all(fh, offset, buf, count, datatype, status);
	}
	return blocking(fh, "MPI_File_read_at_all", COLLIO_XAT_ALL | COLLIO_XREAD, offset, buf, count, datatype,
			status);
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
		      MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_at");
		return PMPI_File_write_at(fh, offset, buf, count, datatype, status);
	}
	return blocking(fh, "MPI_File_write_at", COLLIO_XAT, offset, buf, count, datatype, status);
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
			  MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_at_all");
		return PMPI_File_write_at_all(fh, offset, buf, count, datatype, status);
	}
	return blocking(fh, "MPI_File_write_at_all", COLLIO_XAT_ALL, offset, buf, count, datatype, status);
}

int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
		      MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iread_at");
		return PMPI_File_iread_at(fh, offset, buf, count, datatype, request);
	}
	return nonblocking(fh, "MPI_File_iread_at", COLLIO_XAT | COLLIO_XREAD, offset, buf, count, datatype, request);
}

int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
		       MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iwrite_at");
		return PMPI_File_iwrite_at(fh, offset, buf, count, datatype, request);
	}
	return nonblocking(fh, "MPI_File_iwrite_at", COLLIO_XAT, offset, buf, count, datatype, request);
}

int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
			  MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iread_at_all");
		return PMPI_File_iread_at_all(fh, offset, buf, count, datatype, request);
	}
	return nonblocking(fh, "MPI_File_iread_at_all", COLLIO_XAT_ALL | COLLIO_XREAD, offset, buf, count, datatype,
			   request);
}

int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
			   MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iwrite_at_all");
		return PMPI_File_iwrite_at_all(fh, offset, buf, count, datatype, request);
	}
	return nonblocking(fh, "MPI_File_iwrite_at_all", COLLIO_XAT_ALL, offset, buf, count, datatype, request);
}

/* Individual file pointer. */

int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read");
		return PMPI_File_read(fh, buf, count, datatype, status);
	}
	return blocking(fh, "MPI_File_read", COLLIO_XIND | COLLIO_XREAD, 0, buf, count, datatype, status);
}

int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_all");
		return PMPI_File_read_all(fh, buf, count, datatype, status);
	}
	return blocking(fh, "MPI_File_read_all", COLLIO_XALL | COLLIO_XREAD, 0, buf, count, datatype, status);
}

int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write");
		return PMPI_File_write(fh, buf, count, datatype, status);
	}
	return blocking(fh, "MPI_File_write", COLLIO_XIND, 0, buf, count, datatype, status);
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_all");
		return PMPI_File_write_all(fh, buf, count, datatype, status);
	}
	return blocking(fh, "MPI_File_write_all", COLLIO_XALL, 0, buf, count, datatype, status);
}

int MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iread");
		return PMPI_File_iread(fh, buf, count, datatype, request);
	}
	return nonblocking(fh, "MPI_File_iread", COLLIO_XIND | COLLIO_XREAD, 0, buf, count, datatype, request);
}

int MPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iwrite");
		return PMPI_File_iwrite(fh, buf, count, datatype, request);
	}
	return nonblocking(fh, "MPI_File_iwrite", COLLIO_XIND, 0, buf, count, datatype, request);
}

int MPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iread_all");
		return PMPI_File_iread_all(fh, buf, count, datatype, request);
	}
	return nonblocking(fh, "MPI_File_iread_all", COLLIO_XALL | COLLIO_XREAD, 0, buf, count, datatype, request);
}

int MPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iwrite_all");
		return PMPI_File_iwrite_all(fh, buf, count, datatype, request);
	}
	return nonblocking(fh, "MPI_File_iwrite_all", COLLIO_XALL, 0, buf, count, datatype, request);
}

/* Shared file pointer. */

int MPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_shared");
		return PMPI_File_read_shared(fh, buf, count, datatype, status);
	}
	return blocking(fh, "MPI_File_read_shared", COLLIO_XSHARED | COLLIO_XREAD, 0, buf, count, datatype, status);
}

int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_shared");
		return PMPI_File_write_shared(fh, buf, count, datatype, status);
	}
	return blocking(fh, "MPI_File_write_shared", COLLIO_XSHARED, 0, buf, count, datatype, status);
}

int MPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iread_shared");
		return PMPI_File_iread_shared(fh, buf, count, datatype, request);
	}
	return nonblocking(fh, "MPI_File_iread_shared", COLLIO_XSHARED | COLLIO_XREAD, 0, buf, count, datatype,
			   request);
}

int MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_iwrite_shared");
		return PMPI_File_iwrite_shared(fh, buf, count, datatype, request);
	}
	return nonblocking(fh, "MPI_File_iwrite_shared", COLLIO_XSHARED, 0, buf, count, datatype, request);
}

int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_ordered");
		return PMPI_File_read_ordered(fh, buf, count, datatype, status);
	}
	return blocking(fh, "MPI_File_read_ordered", COLLIO_XORDERED | COLLIO_XREAD, 0, buf, count, datatype, status);
}

int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_ordered");
		return PMPI_File_write_ordered(fh, buf, count, datatype, status);
	}
	return blocking(fh, "MPI_File_write_ordered", COLLIO_XORDERED, 0, buf, count, datatype, status);
}

/* Split collectives. */

int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_at_all_begin");
		return PMPI_File_read_at_all_begin(fh, offset, buf, count, datatype);
	}
	return split_begin(fh, "MPI_File_read_at_all_begin", COLLIO_XAT_ALL | COLLIO_XREAD, offset, buf, count,
			   datatype);
}

int MPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_at_all_end");
		return PMPI_File_read_at_all_end(fh, buf, status);
	}
	return split_end(fh, "MPI_File_read_at_all_end", COLLIO_XAT_ALL | COLLIO_XREAD, status);
}

int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_at_all_begin");
		return PMPI_File_write_at_all_begin(fh, offset, buf, count, datatype);
	}
	return split_begin(fh, "MPI_File_write_at_all_begin", COLLIO_XAT_ALL, offset, buf, count, datatype);
}

int MPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_at_all_end");
		return PMPI_File_write_at_all_end(fh, buf, status);
	}
	return split_end(fh, "MPI_File_write_at_all_end", COLLIO_XAT_ALL, status);
}

int MPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_all_begin");
		return PMPI_File_read_all_begin(fh, buf, count, datatype);
	}
	return split_begin(fh, "MPI_File_read_all_begin", COLLIO_XALL | COLLIO_XREAD, 0, buf, count, datatype);
}

int MPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_all_end");
		return PMPI_File_read_all_end(fh, buf, status);
	}
	return split_end(fh, "MPI_File_read_all_end", COLLIO_XALL | COLLIO_XREAD, status);
}

int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_all_begin");
		return PMPI_File_write_all_begin(fh, buf, count, datatype);
	}
	return split_begin(fh, "MPI_File_write_all_begin", COLLIO_XALL, 0, buf, count, datatype);
}

int MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_all_end");
		return PMPI_File_write_all_end(fh, buf, status);
	}
	return split_end(fh, "MPI_File_write_all_end", COLLIO_XALL, status);
}

int MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_ordered_begin");
		return PMPI_File_read_ordered_begin(fh, buf, count, datatype);
	}
	return split_begin(fh, "MPI_File_read_ordered_begin", COLLIO_XORDERED | COLLIO_XREAD, 0, buf, count, datatype);
}

int MPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_read_ordered_end");
		return PMPI_File_read_ordered_end(fh, buf, status);
	}
	return split_end(fh, "MPI_File_read_ordered_end", COLLIO_XORDERED | COLLIO_XREAD, status);
}

int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_ordered_begin");
		return PMPI_File_write_ordered_begin(fh, buf, count, datatype);
	}
	return split_begin(fh, "MPI_File_write_ordered_begin", COLLIO_XORDERED, 0, buf, count, datatype);
}

int MPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_write_ordered_end");
		return PMPI_File_write_ordered_end(fh, buf, status);
	}
	return split_end(fh, "MPI_File_write_ordered_end", COLLIO_XORDERED, status);
}

/* ------------------------------------------------------- open, close, ... */

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
	uintptr_t h = 0;
	int rc, inter = 0;
	if (filename != NULL && collioGoRoute((char *)filename)) {
		void *merged = NULL;
		VIA_HOST("MPI_File_open");
		collioGoHostInfo((char *)filename, (void *)info, &merged);
		if (merged == NULL)
			return PMPI_File_open(comm, filename, amode, info, fh);
		MPI_Info mi = (MPI_Info)merged;
		rc = PMPI_File_open(comm, filename, amode, mi, fh);
		PMPI_Info_free(&mi);
		return rc;
	}
	VIA_COLLIO("MPI_File_open");
	if (fh == NULL)
		return arg_error(MPI_FILE_NULL, MPI_ERR_ARG, "MPI_File_open", "fh is NULL");
	*fh = MPI_FILE_NULL;
	if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
		return arg_error(MPI_FILE_NULL, MPI_ERR_COMM, "MPI_File_open",
				 "comm is MPI_COMM_NULL, not a communicator, or an intercommunicator");
	if (filename == NULL)
		return arg_error(MPI_FILE_NULL, MPI_ERR_ARG, "MPI_File_open", "filename is NULL");
	rc = collioGoOpen((void *)comm, (char *)filename, amode, (void *)info, 0, &h);
	if (rc != MPI_SUCCESS)
		return file_error(MPI_FILE_NULL, rc, "MPI_File_open");
	*fh = (MPI_File)h;
	return MPI_SUCCESS;
}

int MPI_File_close(MPI_File *fh)
{
	char msg[sizeof noted.full];
	void *eh = NULL;
	MPI_File old;
	int rc;
	if (fh == NULL || !OURS(*fh)) {
		VIA_HOST("MPI_File_close");
		return PMPI_File_close(fh);
	}
	VIA_COLLIO("MPI_File_close");
	old = *fh;
	rc = collioGoClose(H(old), &eh);
	if (eh == NULL) /* not an open collio file */
		return file_error(MPI_FILE_NULL, rc, "MPI_File_close");
	*fh = MPI_FILE_NULL;
	rc = take_error(rc, msg, sizeof msg);
	rc = invoke(old, (MPI_Errhandler)eh, rc, "MPI_File_close", msg);
	collio_errhandler_release((MPI_Errhandler)eh);
	return rc;
}

int MPI_File_delete(const char *filename, MPI_Info info)
{
	if (filename != NULL && collioGoRoute((char *)filename)) {
		VIA_HOST("MPI_File_delete");
		return PMPI_File_delete(filename, info);
	}
	VIA_COLLIO("MPI_File_delete");
	if (filename == NULL)
		return arg_error(MPI_FILE_NULL, MPI_ERR_ARG, "MPI_File_delete", "filename is NULL");
	return file_error(MPI_FILE_NULL, collioGoDelete((char *)filename, (void *)info), "MPI_File_delete");
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_set_size");
		return PMPI_File_set_size(fh, size);
	}
	VIA_COLLIO("MPI_File_set_size");
	return file_error(fh, collioGoSetSize(H(fh), (long long)size, 0), "MPI_File_set_size");
}

int MPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_preallocate");
		return PMPI_File_preallocate(fh, size);
	}
	VIA_COLLIO("MPI_File_preallocate");
	return file_error(fh, collioGoSetSize(H(fh), (long long)size, 1), "MPI_File_preallocate");
}

int MPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
	long long n = 0;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_size");
		return PMPI_File_get_size(fh, size);
	}
	VIA_COLLIO("MPI_File_get_size");
	if (size == NULL)
		return arg_error(fh, MPI_ERR_ARG, "MPI_File_get_size", "size is NULL");
	rc = collioGoSize(H(fh), &n);
	if (rc == MPI_SUCCESS)
		*size = (MPI_Offset)n;
	return file_error(fh, rc, "MPI_File_get_size");
}

int MPI_File_get_group(MPI_File fh, MPI_Group *group)
{
	void *comm = NULL;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_group");
		return PMPI_File_get_group(fh, group);
	}
	VIA_COLLIO("MPI_File_get_group");
	if (group == NULL)
		return arg_error(fh, MPI_ERR_ARG, "MPI_File_get_group", "group is NULL");
	rc = collioGoComm(H(fh), &comm);
	if (rc == MPI_SUCCESS)
		rc = PMPI_Comm_group((MPI_Comm)comm, group);
	return file_error(fh, rc, "MPI_File_get_group");
}

int MPI_File_get_amode(MPI_File fh, int *amode)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_amode");
		return PMPI_File_get_amode(fh, amode);
	}
	VIA_COLLIO("MPI_File_get_amode");
	if (amode == NULL)
		return arg_error(fh, MPI_ERR_ARG, "MPI_File_get_amode", "amode is NULL");
	return file_error(fh, collioGoAmode(H(fh), amode), "MPI_File_get_amode");
}

int MPI_File_set_info(MPI_File fh, MPI_Info info)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_set_info");
		return PMPI_File_set_info(fh, info);
	}
	VIA_COLLIO("MPI_File_set_info");
	return file_error(fh, collioGoSetInfo(H(fh), (void *)info), "MPI_File_set_info");
}

int MPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
	void *info = NULL;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_info");
		return PMPI_File_get_info(fh, info_used);
	}
	VIA_COLLIO("MPI_File_get_info");
	if (info_used == NULL)
		return arg_error(fh, MPI_ERR_ARG, "MPI_File_get_info", "info_used is NULL");
	rc = collioGoGetInfo(H(fh), &info);
	if (rc == MPI_SUCCESS)
		*info_used = (MPI_Info)info;
	return file_error(fh, rc, "MPI_File_get_info");
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep,
		      MPI_Info info)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_set_view");
		return PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
	}
	VIA_COLLIO("MPI_File_set_view");
	return file_error(fh,
			  collioGoSetView(H(fh), (long long)disp, (void *)etype, (void *)filetype, (char *)datarep,
					  (void *)info),
			  "MPI_File_set_view");
}

/* Returned derived types are new handles the caller frees (MPI-3.1 13.3). */
static int view_type_out(MPI_Datatype t, MPI_Datatype *out)
{
	if (collio_type_is_named(t)) {
		*out = t;
		return MPI_SUCCESS;
	}
	return PMPI_Type_dup(t, out);
}

int MPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype, char *datarep)
{
	long long d = 0;
	void *et = NULL, *ft = NULL;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_view");
		return PMPI_File_get_view(fh, disp, etype, filetype, datarep);
	}
	VIA_COLLIO("MPI_File_get_view");
	if (disp == NULL || etype == NULL || filetype == NULL || datarep == NULL)
		return arg_error(fh, MPI_ERR_ARG, "MPI_File_get_view", "disp, etype, filetype or datarep is NULL");
	rc = collioGoGetView(H(fh), &d, &et, &ft, datarep);
	if (rc == MPI_SUCCESS)
		rc = view_type_out((MPI_Datatype)et, etype);
	if (rc == MPI_SUCCESS) {
		rc = view_type_out((MPI_Datatype)ft, filetype);
		if (rc != MPI_SUCCESS && !collio_type_is_named(*etype))
			PMPI_Type_free(etype);
	}
	if (rc == MPI_SUCCESS)
		*disp = (MPI_Offset)d;
	return file_error(fh, rc, "MPI_File_get_view");
}

int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_seek");
		return PMPI_File_seek(fh, offset, whence);
	}
	VIA_COLLIO("MPI_File_seek");
	return file_error(fh, collioGoSeek(H(fh), (long long)offset, whence, 0), "MPI_File_seek");
}

int MPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
	long long p = 0;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_position");
		return PMPI_File_get_position(fh, offset);
	}
	VIA_COLLIO("MPI_File_get_position");
	if (offset == NULL)
		return arg_error(fh, MPI_ERR_ARG, "MPI_File_get_position", "offset is NULL");
	rc = collioGoPosition(H(fh), &p, 0);
	if (rc == MPI_SUCCESS)
		*offset = (MPI_Offset)p;
	return file_error(fh, rc, "MPI_File_get_position");
}

int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_seek_shared");
		return PMPI_File_seek_shared(fh, offset, whence);
	}
	VIA_COLLIO("MPI_File_seek_shared");
	return file_error(fh, collioGoSeek(H(fh), (long long)offset, whence, 1), "MPI_File_seek_shared");
}

int MPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
	long long p = 0;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_position_shared");
		return PMPI_File_get_position_shared(fh, offset);
	}
	VIA_COLLIO("MPI_File_get_position_shared");
	if (offset == NULL)
		return arg_error(fh, MPI_ERR_ARG, "MPI_File_get_position_shared", "offset is NULL");
	rc = collioGoPosition(H(fh), &p, 1);
	if (rc == MPI_SUCCESS)
		*offset = (MPI_Offset)p;
	return file_error(fh, rc, "MPI_File_get_position_shared");
}

int MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
	long long d = 0;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_byte_offset");
		return PMPI_File_get_byte_offset(fh, offset, disp);
	}
	VIA_COLLIO("MPI_File_get_byte_offset");
	if (disp == NULL)
		return arg_error(fh, MPI_ERR_ARG, "MPI_File_get_byte_offset", "disp is NULL");
	rc = collioGoByteOffset(H(fh), (long long)offset, &d);
	if (rc == MPI_SUCCESS)
		*disp = (MPI_Offset)d;
	return file_error(fh, rc, "MPI_File_get_byte_offset");
}

int MPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
	MPI_Aint lb;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_type_extent");
		return PMPI_File_get_type_extent(fh, datatype, extent);
	}
	VIA_COLLIO("MPI_File_get_type_extent");
	rc = collioGoValid(H(fh));
	if (rc == MPI_SUCCESS && extent == NULL)
		return arg_error(fh, MPI_ERR_ARG, "MPI_File_get_type_extent", "extent is NULL");
	if (rc == MPI_SUCCESS && datatype == MPI_DATATYPE_NULL)
		return arg_error(fh, MPI_ERR_TYPE, "MPI_File_get_type_extent", "datatype is MPI_DATATYPE_NULL");
	/* Only the "native" representation is supported: the memory extent. */
	if (rc == MPI_SUCCESS)
		rc = PMPI_Type_get_extent(datatype, &lb, extent);
	return file_error(fh, rc, "MPI_File_get_type_extent");
}

int MPI_File_set_atomicity(MPI_File fh, int flag)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_set_atomicity");
		return PMPI_File_set_atomicity(fh, flag);
	}
	VIA_COLLIO("MPI_File_set_atomicity");
	return file_error(fh, collioGoAtomicity(H(fh), 1, &flag), "MPI_File_set_atomicity");
}

int MPI_File_get_atomicity(MPI_File fh, int *flag)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_get_atomicity");
		return PMPI_File_get_atomicity(fh, flag);
	}
	VIA_COLLIO("MPI_File_get_atomicity");
	if (flag == NULL)
		return arg_error(fh, MPI_ERR_ARG, "MPI_File_get_atomicity", "flag is NULL");
	return file_error(fh, collioGoAtomicity(H(fh), 0, flag), "MPI_File_get_atomicity");
}

int MPI_File_sync(MPI_File fh)
{
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_sync");
		return PMPI_File_sync(fh);
	}
	VIA_COLLIO("MPI_File_sync");
	return file_error(fh, collioGoSync(H(fh)), "MPI_File_sync");
}

/* ------------------------------------------------- handles and handlers */

MPI_Fint MPI_File_c2f(MPI_File file)
{
	if (!OURS(file))
		return PMPI_File_c2f(file);
	return (MPI_Fint)collioGoFint(H(file));
}

MPI_File MPI_File_f2c(MPI_Fint file)
{
	uintptr_t h = collioGoFromFint((int)file);
	if (h == 1)
		return MPI_FILE_NULL; /* a collio index that is not open */
	if (h != 0)
		return (MPI_File)h;
	return PMPI_File_f2c(file);
}

int MPI_File_create_errhandler(MPI_File_errhandler_function *function, MPI_Errhandler *errhandler)
{
	int rc = PMPI_File_create_errhandler(function, errhandler);
	if (rc == MPI_SUCCESS)
		eh_remember(*errhandler, function, 0);
	return rc;
}

int MPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
	void *old = NULL;
	int rc;
	if (!OURS(file)) {
		VIA_HOST("MPI_File_set_errhandler");
		return PMPI_File_set_errhandler(file, errhandler);
	}
	VIA_COLLIO("MPI_File_set_errhandler");
	rc = collioGoValid(H(file));
	if (rc != MPI_SUCCESS)
		return file_error(file, rc, "MPI_File_set_errhandler");
	/* Retaining also checks that this is a file error handler. */
	if (collio_errhandler_retain(errhandler) != MPI_SUCCESS)
		return arg_error(file, MPI_ERR_ARG, "MPI_File_set_errhandler", "errhandler is not a file error handler");
	rc = collioGoSwapErrhandler(H(file), (void *)errhandler, &old);
	if (rc != MPI_SUCCESS) {
		collio_errhandler_release(errhandler);
		return file_error(file, rc, "MPI_File_set_errhandler");
	}
	collio_errhandler_release((MPI_Errhandler)old);
	return MPI_SUCCESS;
}

int MPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
	void *eh = NULL;
	int rc;
	if (!OURS(file)) {
		VIA_HOST("MPI_File_get_errhandler");
		return PMPI_File_get_errhandler(file, errhandler);
	}
	VIA_COLLIO("MPI_File_get_errhandler");
	if (errhandler == NULL)
		return arg_error(file, MPI_ERR_ARG, "MPI_File_get_errhandler", "errhandler is NULL");
	rc = collioGoErrhandler(H(file), &eh);
	if (rc == MPI_SUCCESS)
		rc = collio_errhandler_retain((MPI_Errhandler)eh); /* the caller's reference */
	if (rc == MPI_SUCCESS)
		*errhandler = (MPI_Errhandler)eh;
	return file_error(file, rc, "MPI_File_get_errhandler");
}

int MPI_File_call_errhandler(MPI_File fh, int errorcode)
{
	void *eh = NULL;
	int rc;
	if (!OURS(fh)) {
		VIA_HOST("MPI_File_call_errhandler");
		return PMPI_File_call_errhandler(fh, errorcode);
	}
	VIA_COLLIO("MPI_File_call_errhandler");
	rc = collioGoErrhandler(H(fh), &eh);
	if (rc != MPI_SUCCESS)
		return file_error(fh, rc, "MPI_File_call_errhandler");
	if (collio_errhandler_retain((MPI_Errhandler)eh) != MPI_SUCCESS)
		return MPI_ERR_INTERN;
	invoke(fh, (MPI_Errhandler)eh, errorcode, "MPI_File_call_errhandler", NULL);
	collio_errhandler_release((MPI_Errhandler)eh);
	return MPI_SUCCESS;
}

/* --------------------------------------------------------------- finalize */

static int go_opened;

void collio_note_open(void) { __atomic_store_n(&go_opened, 1, __ATOMIC_RELAXED); }

/* MPI_Finalize first waits for the E10 cache's deferred closes: their copies
 * run in Go goroutines that the process exit would cut short. Every rank
 * then returns the same result (the largest error class of any rank), and
 * a rank whose copies failed says why. MPI is the program's: the call goes
 * on to PMPI_Finalize in any case. */
int MPI_Finalize(void)
{
	int init = 0, fin = 0, mine = MPI_SUCCESS, all, rc, rank;
	double t0, t1;

	PMPI_Initialized(&init);
	PMPI_Finalized(&fin);
	if (!init || fin)
		return PMPI_Finalize(); /* erroneous: the host reports it */
	rank = collio_world_rank();
	t0 = PMPI_Wtime();
	/* Without a collio open, skip the first call into Go on this thread
	 * (about 1 ms); the Allreduce is still needed: other ranks may have
	 * opened files on their own communicators. */
	if (__atomic_load_n(&go_opened, __ATOMIC_RELAXED))
		mine = collioGoFinalize();
	t1 = PMPI_Wtime();
	all = mine;
	if (PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
		all = mine;
	if (collio_verbose() > 0)
		fprintf(stderr, "collio[%d]: MPI_Finalize -> collio: deferred closes %.3f ms, agreement %.3f ms\n",
			rank, 1e3 * (t1 - t0), 1e3 * (PMPI_Wtime() - t1));
	if (mine != MPI_SUCCESS) {
		/* In full: the message ends with how to recover the data. */
		int n = collioGoLastError(NULL, 0);
		char *msg = malloc((size_t)n + 1);
		if (msg != NULL)
			collioGoLastError(msg, n + 1);
		fprintf(stderr, "collio[%d]: MPI_Finalize failed: %s\n", rank, msg != NULL ? msg : "(out of memory)");
		free(msg);
	} else if (all != MPI_SUCCESS) {
		collioGoSetLastError("collio: MPI_Finalize: a deferred close failed on another rank");
		if (collio_verbose() > 0)
			fprintf(stderr, "collio[%d]: MPI_Finalize failed: a deferred close failed on another rank\n",
				rank);
	}
	rc = PMPI_Finalize();
	return all != MPI_SUCCESS ? all : rc;
}

/* ------------------------------------------------ helpers used from Go */

MPI_Datatype collio_type_byte(void) { return MPI_BYTE; }

int collio_type_is_named(MPI_Datatype t)
{
	int ni, na, nt, comb;
	if (t == MPI_DATATYPE_NULL)
		return 1;
	if (PMPI_Type_get_envelope(t, &ni, &na, &nt, &comb) != MPI_SUCCESS)
		return 1;
	return comb == MPI_COMBINER_NAMED;
}

int collio_type_keep(MPI_Datatype t, MPI_Datatype *out)
{
	if (collio_type_is_named(t)) {
		*out = t;
		return MPI_SUCCESS;
	}
	return PMPI_Type_dup(t, out);
}

void collio_type_drop(MPI_Datatype t)
{
	if (!collio_type_is_named(t))
		PMPI_Type_free(&t);
}

MPI_Info collio_info_new(void)
{
	MPI_Info info = MPI_INFO_NULL;
	if (PMPI_Info_create(&info) != MPI_SUCCESS)
		return MPI_INFO_NULL;
	return info;
}

void collio_info_put(MPI_Info info, const char *key, const char *value)
{
	if (strlen(key) < MPI_MAX_INFO_KEY && strlen(value) > 0 && strlen(value) < MPI_MAX_INFO_VAL)
		PMPI_Info_set(info, key, value);
}

MPI_Info collio_info_null(void) { return MPI_INFO_NULL; }

int collio_info_fint(MPI_Info info) { return (int)PMPI_Info_c2f(info); }

int collio_comm_group(MPI_Comm comm, MPI_Group *group) { return PMPI_Comm_group(comm, group); }

/* ------------------------------------------------------------ the C API */

const char *collio_version(void) { return COLLIO_VERSION_STRING; }

int collio_is_collio_file(MPI_File fh) { return OURS(fh) && collioGoValid(H(fh)) == MPI_SUCCESS; }

MPI_File collio_file_to_mpi(collio_file fh) { return fh == NULL ? MPI_FILE_NULL : (MPI_File)(void *)fh; }

int collio_file_from_mpi(MPI_File fh, collio_file *out)
{
	if (out == NULL)
		return MPI_ERR_ARG;
	*out = COLLIO_FILE_NULL;
	if (!collio_is_collio_file(fh))
		return MPI_ERR_FILE;
	*out = (collio_file)(void *)fh;
	return MPI_SUCCESS;
}

int collio_last_error(char *buf, int len) { return collioGoLastError(buf, len); }

int collio_open(MPI_Comm comm, const char *path, int amode, MPI_Info info, collio_file *fh)
{
	uintptr_t h = 0;
	int rc, inter = 0;
	if (fh == NULL || path == NULL)
		return MPI_ERR_ARG;
	*fh = COLLIO_FILE_NULL;
	if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
		return MPI_ERR_COMM;
	rc = collioGoOpen((void *)comm, (char *)path, amode, (void *)info, COLLIO_OPEN_CAPI, &h);
	if (rc == MPI_SUCCESS)
		*fh = (collio_file)h;
	return rc;
}

int collio_split_io_servers(MPI_Comm comm, int n, MPI_Info info, MPI_Comm *compute)
{
	void *out = NULL;
	int rc, inter = 0;
	if (compute == NULL)
		return MPI_ERR_ARG;
	*compute = MPI_COMM_NULL;
	if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
		return MPI_ERR_COMM;
	rc = collioGoSplitIOServers((void *)comm, n, (void *)info, &out);
	if (rc == MPI_SUCCESS && out != NULL)
		*compute = (MPI_Comm)out;
	return rc;
}

int collio_stop_io_servers(MPI_Comm compute)
{
	if (compute == MPI_COMM_NULL)
		return MPI_ERR_COMM;
	return collioGoStopIOServers((void *)compute);
}

int collio_close(collio_file *fh)
{
	void *eh = NULL;
	int rc;
	if (fh == NULL)
		return MPI_ERR_ARG;
	rc = collioGoClose(H(*fh), &eh);
	if (eh != NULL) {
		*fh = COLLIO_FILE_NULL;
		collio_errhandler_release((MPI_Errhandler)eh);
	}
	return rc;
}

int collio_delete(const char *path, MPI_Info info)
{
	if (path == NULL)
		return MPI_ERR_ARG;
	return collioGoDelete((char *)path, (void *)info);
}

int collio_set_view(collio_file fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, MPI_Info info)
{
	return collioGoSetView(H(fh), (long long)disp, (void *)etype, (void *)filetype, "native", (void *)info);
}

static int capi_xfer(collio_file fh, int op, MPI_Offset off, const void *buf, int count, MPI_Datatype dt,
		     MPI_Offset *nbytes)
{
	long long n = 0;
	int rc = collioGoXfer(H(fh), op, (long long)off, (void *)buf, count, (void *)dt, &n);
	if (nbytes != NULL)
		*nbytes = (MPI_Offset)n;
	return rc;
}

int collio_write_at(collio_file fh, MPI_Offset off, const void *buf, int count, MPI_Datatype type,
		    MPI_Offset *nbytes)
{
	return capi_xfer(fh, COLLIO_XAT, off, buf, count, type, nbytes);
}

int collio_read_at(collio_file fh, MPI_Offset off, void *buf, int count, MPI_Datatype type, MPI_Offset *nbytes)
{
	return capi_xfer(fh, COLLIO_XAT | COLLIO_XREAD, off, buf, count, type, nbytes);
}

int collio_write_at_all(collio_file fh, MPI_Offset off, const void *buf, int count, MPI_Datatype type,
			MPI_Offset *nbytes)
{
	return capi_xfer(fh, COLLIO_XAT_ALL, off, buf, count, type, nbytes);
}

int collio_read_at_all(collio_file fh, MPI_Offset off, void *buf, int count, MPI_Datatype type,
		       MPI_Offset *nbytes)
{
	return capi_xfer(fh, COLLIO_XAT_ALL | COLLIO_XREAD, off, buf, count, type, nbytes);
}

int collio_write(collio_file fh, const void *buf, int count, MPI_Datatype type, MPI_Offset *nbytes)
{
	return capi_xfer(fh, COLLIO_XIND, 0, buf, count, type, nbytes);
}

int collio_read(collio_file fh, void *buf, int count, MPI_Datatype type, MPI_Offset *nbytes)
{
	return capi_xfer(fh, COLLIO_XIND | COLLIO_XREAD, 0, buf, count, type, nbytes);
}

int collio_write_all(collio_file fh, const void *buf, int count, MPI_Datatype type, MPI_Offset *nbytes)
{
	return capi_xfer(fh, COLLIO_XALL, 0, buf, count, type, nbytes);
}

int collio_read_all(collio_file fh, void *buf, int count, MPI_Datatype type, MPI_Offset *nbytes)
{
	return capi_xfer(fh, COLLIO_XALL | COLLIO_XREAD, 0, buf, count, type, nbytes);
}

int collio_seek(collio_file fh, MPI_Offset off, int whence)
{
	return collioGoSeek(H(fh), (long long)off, whence, 0);
}

int collio_get_position(collio_file fh, MPI_Offset *off)
{
	long long p = 0;
	int rc;
	if (off == NULL)
		return MPI_ERR_ARG;
	rc = collioGoPosition(H(fh), &p, 0);
	*off = (MPI_Offset)p;
	return rc;
}

int collio_get_size(collio_file fh, MPI_Offset *size)
{
	long long n = 0;
	int rc;
	if (size == NULL)
		return MPI_ERR_ARG;
	rc = collioGoSize(H(fh), &n);
	*size = (MPI_Offset)n;
	return rc;
}

int collio_set_size(collio_file fh, MPI_Offset size) { return collioGoSetSize(H(fh), (long long)size, 0); }

int collio_preallocate(collio_file fh, MPI_Offset size) { return collioGoSetSize(H(fh), (long long)size, 1); }

int collio_sync(collio_file fh) { return collioGoSync(H(fh)); }

int collio_set_atomicity(collio_file fh, int flag) { return collioGoAtomicity(H(fh), 1, &flag); }

int collio_file_get_info(collio_file fh, MPI_Info *info)
{
	void *i = NULL;
	int rc;
	if (info == NULL)
		return MPI_ERR_ARG;
	rc = collioGoGetInfo(H(fh), &i);
	if (rc == MPI_SUCCESS)
		*info = (MPI_Info)i;
	return rc;
}

int collio_file_set_info(collio_file fh, MPI_Info info) { return collioGoSetInfo(H(fh), (void *)info); }

/* ------------------------------------------------- waiting for requests */

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

/* --------------------------------------------------------- thread level */

/* Nonblocking collective transfers progress on threads of their own, which
 * needs MPI_THREAD_MULTIPLE: collio asks for it when the program initialises
 * MPI (COLLIO_THREAD_MULTIPLE=0 keeps the program's level; the transfers
 * then run inside their start calls). The program gets at least what it
 * asked for. */
static int want_multiple(void)
{
	return collioGoEnvInt((char *)"COLLIO_THREAD_MULTIPLE") != 0;
}

/* After MPI starts, collioGoWarm makes what the first open on
 * MPI_COMM_WORLD needs (a duplicate, the node layout, the shared file
 * pointer window): a few milliseconds of MPI_Init instead of the open. */
int MPI_Init(int *argc, char ***argv)
{
	int provided, rc;
	if (!want_multiple())
		rc = PMPI_Init(argc, argv);
	else
		rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
	if (rc == MPI_SUCCESS)
		collioGoWarm();
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc;
	if (!want_multiple())
		rc = PMPI_Init_thread(argc, argv, required, provided);
	else
		rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, provided);
	if (rc == MPI_SUCCESS)
		collioGoWarm();
	return rc;
}

int collio_file_stats(MPI_File fh, collio_stats *st)
{
	if (st == NULL)
		return MPI_ERR_ARG;
	if (!OURS(fh))
		return MPI_ERR_FILE;
	return collioGoFileStats(H(fh), 0, st);
}

int collio_file_stats_all(MPI_File fh, collio_stats *sum, collio_stats *min, collio_stats *max)
{
	collio_stats t[3];
	int rc;
	if (!OURS(fh))
		return MPI_ERR_FILE;
	rc = collioGoFileStats(H(fh), 1, t);
	if (rc != MPI_SUCCESS)
		return rc;
	if (sum != NULL)
		*sum = t[0];
	if (min != NULL)
		*min = t[1];
	if (max != NULL)
		*max = t[2];
	return MPI_SUCCESS;
}
