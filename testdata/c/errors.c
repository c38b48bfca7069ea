/* errors: the error codes MPI_File_* functions return, and the files' error
 * handlers, seen from C.
 *
 *   errors OUTDIR             the checks below
 *   errors OUTDIR fatal-open  MPI_ERRORS_ARE_FATAL on MPI_FILE_NULL, then an
 *                             open of OUTDIR/missing.dat: must abort
 *   errors OUTDIR fatal-file  MPI_ERRORS_ARE_FATAL on a file opened read-only
 *                             (OUTDIR/ro.dat), then a write to it: must abort
 *   errors OUTDIR badenv VAR  under collio, with VAR set to a value collio
 *                             does not accept: MPI_File_open must fail
 *
 * Every error's MPI_Error_class is checked with every implementation that
 * reports the error; under collio, its MPI_Error_string must also hold
 * collio's message (operation, path, rank and the problem), from a code
 * collio registered with the host MPI (the host's texts are its own). Open
 * MPI 4.1's OMPIO accepts a negative displacement and negative offsets
 * (MPI_SUCCESS), so those run under collio only, as do the errors made by
 * collio's faulty: driver (ENOSPC, EIO, a bad collio_fault hint).
 *
 * Under collio also: 10,000 errors with distinct messages add at most
 * COLLIO_ERROR_CODES (default 64) codes to the host MPI, and each code names
 * its own error when returned; two threads failing at once (with
 * MPI_THREAD_MULTIPLE) each get their own messages. With
 * COLLIO_ERROR_CODES=0, collio returns the plain classes. */
#include <pthread.h>
#include <stdarg.h>
#include <unistd.h>

#include "t.h"

#define MANY 10000

static int codes_limit(void)
{
	const char *v = getenv("COLLIO_ERROR_CODES");
	return v != NULL && *v != '\0' ? atoi(v) : 64;
}

/* Under collio, error codes carry collio's messages (not COLLIO_ERROR_CODES=0). */
static int codes_on(void) { return collio_loaded() && codes_limit() > 0; }

static int class_of(int rc)
{
	int c = -1;
	MPI_Error_class(rc, &c);
	return c;
}

static const char *text_of(int rc)
{
	static __thread char buf[4][MPI_MAX_ERROR_STRING];
	static __thread int next;
	char *s = buf[next++ % 4];
	int n = 0;
	s[0] = '\0';
	MPI_Error_string(rc, s, &n);
	return s;
}

static int last_used_code(void)
{
	int *v = NULL, flag = 0;
	CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
	EXPECT(flag && v != NULL, "MPI_LASTUSEDCODE is not set");
	return *v;
}

/* collio_last_error, looked up: the preloaded run's binary is not linked with it. */
static const char *last_error(void)
{
	static char buf[4096];
	int (*fn)(char *, int) = (int (*)(char *, int))dlsym(RTLD_DEFAULT, "collio_last_error");
	buf[0] = '\0';
	if (fn != NULL)
		fn(buf, sizeof buf);
	return buf;
}

/* expect_error checks that rc is an error of class cls (with every MPI-IO
 * when host is 1, under collio only otherwise) and, under collio, that its
 * MPI_Error_string holds each of the strings after what (up to a NULL). */
static void expect_error(int rc, int cls, int host, const char *what, ...)
{
	const char *s, *w;
	va_list ap;
	if (!collio_loaded() && !host)
		return;
	EXPECT(rc != MPI_SUCCESS, "%s returned MPI_SUCCESS", what);
	EXPECT(class_of(rc) == cls, "%s: class %d, want %d (%s)", what, class_of(rc), cls, text_of(rc));
	if (!collio_loaded())
		return;
	if (!codes_on()) {
		EXPECT(rc == cls, "%s: COLLIO_ERROR_CODES=0 returned code %d, want the class %d", what, rc, cls);
		return;
	}
	EXPECT(rc > MPI_ERR_LASTCODE, "%s: returned the class %d, want a code registered by collio", what, rc);
	s = text_of(rc);
	EXPECT(strlen(s) < MPI_MAX_ERROR_STRING, "%s: text of %zu bytes", what, strlen(s));
	va_start(ap, what);
	while ((w = va_arg(ap, const char *)) != NULL)
		EXPECT(strstr(s, w) != NULL, "%s: MPI_Error_string is \"%s\"; want it to contain \"%s\"", what, s, w);
	va_end(ap);
}

static MPI_Info fault_info(const char *rules)
{
	MPI_Info info;
	CHECK(MPI_Info_create(&info));
	CHECK(MPI_Info_set(info, "collio_fault", rules));
	return info;
}

static void write_file(const char *path)
{
	MPI_File fh;
	int v = t_val(t_rank, 0);
	CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
	CHECK(MPI_File_write_at_all(fh, t_rank * 4, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
	CHECK(MPI_File_close(&fh));
}

static void simple_errors(const char *dir)
{
	char rank_s[32], faulty[4200];
	char *missing = t_path(dir, "missing.dat"), *ed = t_path(dir, "e.dat"), *ro = t_path(dir, "ro.dat");
	MPI_File fh;
	MPI_Info info;
	int rc, v[4] = {1, 2, 3, 4};

	snprintf(rank_s, sizeof rank_s, "(rank %d)", t_rank);

	rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
	EXPECT(fh == MPI_FILE_NULL, "a failed open leaves MPI_FILE_NULL");
	/* (Whose rank: rank 0 checks, and every rank returns its error.) */
	expect_error(rc, MPI_ERR_NO_SUCH_FILE, 1, "open of a missing file", "collio: open ", missing, "(rank ",
		     "no such file", NULL);
	rc = MPI_File_open(MPI_COMM_WORLD, ed, MPI_MODE_RDONLY | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
	expect_error(rc, MPI_ERR_AMODE, 1, "open with a bad amode", "collio: open ", "access mode", NULL);
	rc = MPI_File_delete(missing, MPI_INFO_NULL);
	expect_error(rc, MPI_ERR_NO_SUCH_FILE, 1, "delete of a missing file", "collio: delete ", missing, NULL);

	CHECK(MPI_File_open(MPI_COMM_WORLD, ed, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
	rc = MPI_File_write_at(fh, 0, v, -1, MPI_INT, MPI_STATUS_IGNORE);
	expect_error(rc, MPI_ERR_COUNT, 1, "write_at with count -1", "collio: write_at ", ed, rank_s,
		     "count -1 is negative", NULL);
	/* ROMIO's test/error.c: the message names the displacement. */
	rc = collio_loaded() ? MPI_File_set_view(fh, -1, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL) : MPI_SUCCESS;
	expect_error(rc, MPI_ERR_ARG, 0, "set_view with displacement -1", "collio: set_view ", ed, rank_s,
		     "invalid displacement -1: must be >= 0", NULL);
	rc = collio_loaded()
		     ? MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL)
		     : MPI_SUCCESS;
	expect_error(rc, MPI_ERR_ARG, 0, "set_view at MPI_DISPLACEMENT_CURRENT without MPI_MODE_SEQUENTIAL",
		     "collio: set_view ", ed, "only files opened with MPI_MODE_SEQUENTIAL may use it", NULL);
	rc = collio_loaded() ? MPI_File_write_at(fh, -1, v, 1, MPI_INT, MPI_STATUS_IGNORE) : MPI_SUCCESS;
	expect_error(rc, MPI_ERR_ARG, 0, "write_at at offset -1", "collio: write_at ", ed, rank_s,
		     "offset -1 is negative", NULL);
	/* A collective call returns the lowest failing rank's error on every rank. */
	rc = collio_loaded() ? MPI_File_read_at_all(fh, -4 * (t_rank + 1), v, 1, MPI_INT, MPI_STATUS_IGNORE)
			     : MPI_SUCCESS;
	expect_error(rc, MPI_ERR_ARG, 0, "read_at_all at a negative offset", "collio: read_at_all ", "(rank 0)",
		     "offset -4 is negative", NULL);
	rc = collio_loaded() ? MPI_File_seek(fh, -8, MPI_SEEK_SET) : MPI_SUCCESS;
	expect_error(rc, MPI_ERR_ARG, 0, "seek to -8", "collio: seek ", "offset -8 is negative", NULL);
	CHECK(MPI_File_close(&fh));
	rc = MPI_File_open(MPI_COMM_WORLD, ed, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
	expect_error(rc, MPI_ERR_FILE_EXISTS, 1, "exclusive open of an existing file", "collio: open ", ed,
		     "file exists", NULL);

	write_file(ro);
	CHECK(MPI_File_open(MPI_COMM_WORLD, ro, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
	rc = MPI_File_write_at(fh, 0, v, 1, MPI_INT, MPI_STATUS_IGNORE);
	expect_error(rc, MPI_ERR_READ_ONLY, 1, "write_at to a read-only file", "collio: write_at ", ro, rank_s,
		     "read-only", NULL);
	/* (OMPIO returns MPI_SUCCESS on some ranks here.) */
	rc = collio_loaded() ? MPI_File_write_at_all(fh, 0, v, 1, MPI_INT, MPI_STATUS_IGNORE) : MPI_SUCCESS;
	expect_error(rc, MPI_ERR_READ_ONLY, 0, "write_at_all to a read-only file", "collio: write_at_all ", ro,
		     "read-only", NULL);
	CHECK(MPI_File_close(&fh));

	if (!collio_loaded())
		return;
	/* collio's faulty: driver: a bad rule, ENOSPC, EIO. */
	snprintf(faulty, sizeof faulty, "faulty:%s", t_path(dir, "faulty.dat"));
	info = fault_info("bogus=1");
	rc = MPI_File_open(MPI_COMM_WORLD, faulty, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
	CHECK(MPI_Info_free(&info));
	expect_error(rc, MPI_ERR_INFO_VALUE, 0, "open with a bad collio_fault hint", "collio: open ",
		     "collio_fault=\"bogus=1\"", "unknown fault", NULL);
	info = fault_info("enospc_after=0");
	/* Independent within the collective call, whatever the node count (on
	 * several nodes the automatic choice is two-phase, whose error every
	 * rank has at once): its error is agreed later, so close reports it again. */
	CHECK(MPI_Info_set(info, "romio_cb_write", "disable"));
	CHECK(MPI_File_open(MPI_COMM_WORLD, faulty, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
	CHECK(MPI_Info_free(&info));
	rc = MPI_File_write_at_all(fh, 0, v, 4, MPI_INT, MPI_STATUS_IGNORE);
	expect_error(rc, MPI_ERR_NO_SPACE, 0, "write_at_all on a full disk", "collio: write_at_all ",
		     "no space left on device", "injected by fault rule enospc_after=0", NULL);
	/* The close reports it again, in a message too long for MPI_Error_string. */
	rc = MPI_File_close(&fh);
	expect_error(rc, MPI_ERR_NO_SPACE, 0, "close after a full disk", "collio: close ", "no space left", NULL);
	if (codes_on() && strlen(last_error()) >= MPI_MAX_ERROR_STRING) {
		const char *s = text_of(rc);
		EXPECT(strlen(s) > 200 && strcmp(s + strlen(s) - 3, "...") == 0,
		       "a message of %zu bytes is cut to end in \"...\": %s", strlen(last_error()), s);
		/* A long path keeps its end. */
		EXPECT(strstr(s, "/faulty.dat (rank ") != NULL, "the cut message: %s", s);
	}
	info = fault_info("eio_call=write:1+");
	CHECK(MPI_File_open(MPI_COMM_WORLD, faulty, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
	CHECK(MPI_Info_free(&info));
	rc = MPI_File_write_at(fh, 0, v, 4, MPI_INT, MPI_STATUS_IGNORE);
	expect_error(rc, MPI_ERR_IO, 0, "write_at with an I/O error", "collio: write_at ", rank_s, "I/O error",
		     "injected by fault rule eio_call=write:1+", NULL);
	MPI_File_close(&fh);
}

static int eh_calls, eh_code;
static MPI_File eh_file;
static char eh_text[MPI_MAX_ERROR_STRING];

static void on_error(MPI_File *fh, int *code, ...)
{
	int n = 0;
	eh_calls++;
	eh_code = *code;
	eh_file = *fh;
	MPI_Error_string(*code, eh_text, &n);
}

static void handlers(const char *dir)
{
	char *missing = t_path(dir, "missing.dat"), *ro = t_path(dir, "ro.dat");
	MPI_Errhandler eh, got;
	MPI_File fh;
	int rc, v = 1;

	CHECK(MPI_File_create_errhandler(on_error, &eh));
	/* MPI_FILE_NULL's handler: open errors, and new files' handler. */
	CHECK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
	eh_calls = 0;
	rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
	EXPECT(eh_calls == 1 && eh_file == MPI_FILE_NULL && eh_code == rc,
	       "the handler on MPI_FILE_NULL is called for open (%d calls, code %d of %d)", eh_calls, eh_code, rc);
	EXPECT(class_of(eh_code) == MPI_ERR_NO_SUCH_FILE, "handler's code: class %d", class_of(eh_code));
	if (codes_on())
		EXPECT(strstr(eh_text, missing) != NULL, "the handler's MPI_Error_string names the file: %s", eh_text);
	CHECK(MPI_File_open(MPI_COMM_WORLD, ro, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
	CHECK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
	CHECK(MPI_File_get_errhandler(fh, &got));
	EXPECT(got == eh, "a new file takes MPI_FILE_NULL's handler");
	CHECK(MPI_Errhandler_free(&got));
	CHECK(MPI_Errhandler_free(&eh)); /* the file keeps it */

	/* The file's handler: called with the file and the code returned. */
	eh_calls = 0;
	rc = MPI_File_write_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
	EXPECT(eh_calls == 1 && eh_file == fh && eh_code == rc,
	       "the file's handler is called for its errors (%d calls, code %d of %d)", eh_calls, eh_code, rc);
	EXPECT(class_of(rc) == MPI_ERR_READ_ONLY, "class %d", class_of(rc));
	if (codes_on())
		EXPECT(strstr(eh_text, "read-only") != NULL && strstr(eh_text, ro) != NULL,
		       "the handler's MPI_Error_string: %s", eh_text);
	/* MPI_File_call_errhandler with that code. */
	eh_text[0] = '\0';
	CHECK(MPI_File_call_errhandler(fh, rc));
	EXPECT(eh_calls == 2 && eh_file == fh && eh_code == rc, "call_errhandler (%d calls, code %d)", eh_calls, eh_code);
	if (codes_on())
		EXPECT(strstr(eh_text, "read-only") != NULL, "call_errhandler: MPI_Error_string: %s", eh_text);
	CHECK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
	rc = MPI_File_write_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
	EXPECT(rc != MPI_SUCCESS && eh_calls == 2, "no handler call after MPI_ERRORS_RETURN (%d)", eh_calls);
	CHECK(MPI_File_close(&fh));
}

/* many_errors: MANY errors with distinct messages (negative offsets; collio
 * only, see the top) must not add more than COLLIO_ERROR_CODES codes. */
static void many_errors(const char *dir)
{
	MPI_File fh;
	int v = 1, rc, first = MPI_SUCCESS, before, after, limit = codes_limit();
	char want[64];
	double t;

	CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(dir, "many.dat"),
			    MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
	before = last_used_code();
	t = MPI_Wtime();
	for (int i = 1; i <= MANY; i++) {
		rc = MPI_File_write_at(fh, -(MPI_Offset)i, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
		if (class_of(rc) != MPI_ERR_ARG)
			FAIL("error %d: class %d, want MPI_ERR_ARG", i, class_of(rc));
		if (codes_on()) {
			snprintf(want, sizeof want, "offset -%d is negative", i);
			if (strstr(text_of(rc), want) == NULL)
				FAIL("error %d: MPI_Error_string is \"%s\"; want \"%s\"", i, text_of(rc), want);
		}
		if (i == 1)
			first = rc;
	}
	t = (MPI_Wtime() - t) / MANY;
	after = last_used_code();
	EXPECT(after - before <= limit, "%d errors added %d codes (limit %d per class)", MANY, after - before, limit);
	if (codes_on()) {
		/* A code's string was replaced by a newer error's of its class. */
		EXPECT(class_of(first) == MPI_ERR_ARG, "the first error's class is now %d", class_of(first));
		EXPECT(strstr(text_of(first), "offset -1 is negative") == NULL,
		       "after %d errors the first code still has its text (limit %d)", MANY, limit);
		/* The same message gets the same code. */
		rc = MPI_File_write_at(fh, -3, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
		EXPECT(MPI_File_write_at(fh, -3, &v, 1, MPI_INT, MPI_STATUS_IGNORE) == rc, "the same error, another code");
	}
	CHECK(MPI_File_close(&fh));
	if (t_rank == 0)
		printf("errors: %d errors, %.2f us each (MPI_Error_string included), %d codes added to the host MPI\n",
		       MANY, 1e6 * t, after - before);
}

/* Two threads fail at once, each on its own file, with errors of two
 * classes: each code must name its own thread's error. */
struct worker {
	MPI_File fh;
	int count; /* 1: bad counts (MPI_ERR_COUNT), 0: bad offsets (MPI_ERR_ARG) */
	char bad[512];
};

static void *work(void *arg)
{
	struct worker *w = arg;
	char want[64];
	int v = 1, rc;
	for (int i = 1; i <= 2000 && w->bad[0] == '\0'; i++) {
		if (w->count) {
			rc = MPI_File_write_at(w->fh, 0, &v, -i, MPI_INT, MPI_STATUS_IGNORE);
			snprintf(want, sizeof want, "count -%d is negative", i);
		} else {
			rc = MPI_File_write_at(w->fh, -(MPI_Offset)i, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
			snprintf(want, sizeof want, "offset -%d is negative", i);
		}
		if (class_of(rc) != (w->count ? MPI_ERR_COUNT : MPI_ERR_ARG) || strstr(text_of(rc), want) == NULL)
			snprintf(w->bad, sizeof w->bad, "error %d: class %d, MPI_Error_string \"%s\"; want \"%s\"", i,
				 class_of(rc), text_of(rc), want);
	}
	return NULL;
}

static void threads(const char *dir)
{
	struct worker w[2];
	pthread_t th[2];
	char name[64];
	for (int k = 0; k < 2; k++) {
		memset(&w[k], 0, sizeof w[k]);
		w[k].count = k;
		snprintf(name, sizeof name, "thread.%d.%d.dat", t_rank, k);
		CHECK(MPI_File_open(MPI_COMM_SELF, t_path(dir, name), MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
				    MPI_INFO_NULL, &w[k].fh));
	}
	for (int k = 0; k < 2; k++)
		EXPECT(pthread_create(&th[k], NULL, work, &w[k]) == 0, "pthread_create");
	for (int k = 0; k < 2; k++) {
		pthread_join(th[k], NULL);
		EXPECT(w[k].bad[0] == '\0', "thread %d: %s", k, w[k].bad);
		CHECK(MPI_File_close(&w[k].fh));
	}
}

static void fatal(const char *dir, const char *mode)
{
	MPI_File fh;
	int rc = MPI_SUCCESS, v = 1;
	if (strcmp(mode, "fatal-open") == 0) {
		CHECK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL));
		rc = MPI_File_open(MPI_COMM_WORLD, t_path(dir, "missing.dat"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
	} else if (strcmp(mode, "fatal-file") == 0) {
		write_file(t_path(dir, "ro.dat"));
		CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(dir, "ro.dat"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
		CHECK(MPI_File_set_errhandler(fh, MPI_ERRORS_ARE_FATAL));
		rc = MPI_File_write_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
	} else {
		FAIL("unknown mode %s", mode);
	}
	/* Not reached: the exit status 0 tells run.sh. */
	fprintf(stderr, "NOT ABORTED: %s returned %d\n", mode, rc);
	MPI_Finalize();
	exit(0);
}

/* bad_env: collio's switch variable name holds a value it does not accept
 * (a typo such as COLLIO_STATS=ture). Every open fails on every rank with
 * MPI_ERR_ARG naming the variable, the value and what is accepted (rank
 * 0's: the lowest with the bad value), creates nothing and leaves nothing
 * open; MPI_Finalize works. */
static void bad_env(const char *dir, const char *name)
{
	const char *v = getenv(name);
	char want[256];
	EXPECT(collio_loaded(), "badenv runs under collio");
	EXPECT(v != NULL, "%s is not set", name);
	snprintf(want, sizeof want, "%s=\"%s\" is not valid; accepted: ", name, v);
	for (int i = 0; i < 2; i++) {
		MPI_File fh = MPI_FILE_NULL;
		int rc = MPI_File_open(MPI_COMM_WORLD, t_path(dir, "env.dat"), MPI_MODE_CREATE | MPI_MODE_WRONLY,
				       MPI_INFO_NULL, &fh);
		EXPECT(fh == MPI_FILE_NULL, "a failed open leaves MPI_FILE_NULL");
		expect_error(rc, MPI_ERR_ARG, 0, "open with a bad environment variable", "collio: open ", "(rank 0)",
			     want, NULL);
	}
	EXPECT(access(t_path(dir, "env.dat"), F_OK) != 0, "the failed open created the file");
	t_done();
	exit(0);
}

int main(int argc, char **argv)
{
	int provided = MPI_THREAD_SINGLE;
	const char *dir = t_init_thread(&argc, &argv, "errors", MPI_THREAD_MULTIPLE, &provided);
	if (argc > 3 && strcmp(argv[2], "badenv") == 0)
		bad_env(dir, argv[3]);
	if (argc > 2)
		fatal(dir, argv[2]);
	simple_errors(dir);
	handlers(dir);
	if (collio_loaded())
		many_errors(dir);
	if (collio_loaded() && codes_on() && provided == MPI_THREAD_MULTIPLE)
		threads(dir);
	else if (collio_loaded() && codes_on() && t_rank == 0)
		printf("errors: skip threads: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
	t_done();
	return 0;
}
