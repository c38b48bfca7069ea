/* misc: info and hints, get_group, get_amode, atomicity, c2f/f2c,
 * get_type_extent, delete, error classes and error handlers, the Go
 * runtime's monitor thread under SCHED_BATCH. Files: info.dat, ro.dat. */
#include "t.h"

#include <dirent.h>
#include <sched.h>
#include <unistd.h>

static int eh_calls, eh_code;
static MPI_File eh_file;

static void on_error(MPI_File *fh, int *code, ...)
{
	eh_calls++;
	eh_code = *code;
	eh_file = *fh;
}

static int class_of(int rc)
{
	int c = -1;
	MPI_Error_class(rc, &c);
	return c;
}

static void info_and_handles(const char *dir)
{
	MPI_Info info, used;
	MPI_File fh, back;
	MPI_Group g, wg;
	int amode = MPI_MODE_CREATE | MPI_MODE_RDWR, got, flag, cmp;
	char val[MPI_MAX_INFO_VAL + 1];
	MPI_Aint ext;

	CHECK(MPI_Info_create(&info));
	CHECK(MPI_Info_set(info, "cb_buffer_size", "1048576"));
	CHECK(MPI_Info_set(info, "cb_nodes", "banana")); /* invalid: warned about, ignored */
	CHECK(MPI_Info_set(info, "not_a_hint_anyone_knows", "x"));
	CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(dir, "info.dat"), amode, info, &fh));
	CHECK(MPI_Info_free(&info));

	CHECK(MPI_File_get_info(fh, &used));
	CHECK(MPI_Info_get(used, "cb_buffer_size", MPI_MAX_INFO_VAL, val, &flag));
	if (collio_loaded())
		EXPECT(flag && strcmp(val, "1048576") == 0, "cb_buffer_size is %s", flag ? val : "unset");
	CHECK(MPI_Info_free(&used));

	CHECK(MPI_Info_create(&info));
	CHECK(MPI_Info_set(info, "cb_buffer_size", "2097152"));
	CHECK(MPI_File_set_info(fh, info));
	CHECK(MPI_Info_free(&info));
	CHECK(MPI_File_get_info(fh, &used));
	CHECK(MPI_Info_get(used, "cb_buffer_size", MPI_MAX_INFO_VAL, val, &flag));
	if (collio_loaded())
		EXPECT(flag && strcmp(val, "2097152") == 0, "cb_buffer_size after set_info is %s", flag ? val : "unset");
	CHECK(MPI_Info_free(&used));

	CHECK(MPI_File_get_amode(fh, &got));
	EXPECT(got == amode, "amode %d", got);
	CHECK(MPI_File_get_group(fh, &g));
	CHECK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	CHECK(MPI_Group_compare(g, wg, &cmp));
	EXPECT(cmp == MPI_IDENT, "group compare %d", cmp);
	MPI_Group_free(&g);
	MPI_Group_free(&wg);

	CHECK(MPI_File_set_atomicity(fh, 1));
	CHECK(MPI_File_get_atomicity(fh, &flag));
	EXPECT(flag == 1, "atomicity %d", flag);
	{
		int v = t_val(t_rank, 0);
		CHECK(MPI_File_write_at(fh, t_rank * 4, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
	}
	CHECK(MPI_File_set_atomicity(fh, 0));
	CHECK(MPI_File_get_atomicity(fh, &flag));
	EXPECT(flag == 0, "atomicity %d", flag);

	back = MPI_File_f2c(MPI_File_c2f(fh));
	EXPECT(back == fh, "c2f/f2c round trip");
	EXPECT(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL, "f2c(c2f(MPI_FILE_NULL))");

	CHECK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
	EXPECT(ext == sizeof(double), "type extent %ld", (long)ext);
	CHECK(MPI_File_close(&fh));
}

static void errors(const char *dir)
{
	MPI_File fh;
	MPI_Errhandler eh, got;
	int rc;
	char *gone = t_path(dir, "gone.dat"), *ro = t_path(dir, "ro.dat");

	/* The default error handler of files is MPI_ERRORS_RETURN. */
	CHECK(MPI_File_open(MPI_COMM_WORLD, gone, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
	CHECK(MPI_File_close(&fh));
	rc = MPI_File_open(MPI_COMM_WORLD, gone, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
	EXPECT(rc != MPI_SUCCESS && fh == MPI_FILE_NULL, "excl open of an existing file fails");
	EXPECT(class_of(rc) == MPI_ERR_FILE_EXISTS, "class %d", class_of(rc));
	MPI_Barrier(MPI_COMM_WORLD);
	if (t_rank == 0)
		CHECK(MPI_File_delete(gone, MPI_INFO_NULL));
	MPI_Barrier(MPI_COMM_WORLD);
	rc = MPI_File_open(MPI_COMM_WORLD, gone, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
	EXPECT(rc != MPI_SUCCESS && fh == MPI_FILE_NULL, "open of a deleted file fails");
	EXPECT(class_of(rc) == MPI_ERR_NO_SUCH_FILE, "class %d", class_of(rc));
	rc = MPI_File_delete(gone, MPI_INFO_NULL);
	EXPECT(class_of(rc) == MPI_ERR_NO_SUCH_FILE, "delete of a missing file: class %d", class_of(rc));
	rc = MPI_File_open(MPI_COMM_WORLD, gone, MPI_MODE_RDONLY | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
	EXPECT(class_of(rc) == MPI_ERR_AMODE, "bad amode: class %d", class_of(rc));

	/* A user handler on MPI_FILE_NULL sees open errors. */
	CHECK(MPI_File_create_errhandler(on_error, &eh));
	CHECK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
	eh_calls = 0;
	rc = MPI_File_open(MPI_COMM_WORLD, gone, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
	EXPECT(rc != MPI_SUCCESS && eh_calls == 1 && eh_file == MPI_FILE_NULL, "handler called for open (%d)", eh_calls);
	EXPECT(class_of(eh_code) == MPI_ERR_NO_SUCH_FILE, "handler code class %d", class_of(eh_code));
	CHECK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));

	/* ... and one on a file sees that file's errors. */
	CHECK(MPI_File_open(MPI_COMM_WORLD, ro, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
	{
		int v = t_val(t_rank, 1);
		CHECK(MPI_File_write_at_all(fh, t_rank * 4, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
	}
	CHECK(MPI_File_close(&fh));
	CHECK(MPI_File_open(MPI_COMM_WORLD, ro, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
	CHECK(MPI_File_get_errhandler(fh, &got));
	EXPECT(got == MPI_ERRORS_RETURN, "a new file's handler is MPI_ERRORS_RETURN");
	CHECK(MPI_Errhandler_free(&got));
	CHECK(MPI_File_set_errhandler(fh, eh));
	CHECK(MPI_File_get_errhandler(fh, &got));
	EXPECT(got == eh, "get_errhandler returns the handler set");
	CHECK(MPI_Errhandler_free(&got));
	eh_calls = 0;
	{
		int v = 1;
		rc = MPI_File_write_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
	}
	EXPECT(rc != MPI_SUCCESS && eh_calls == 1 && eh_file == fh, "handler called for a write to a read-only file");
	if (collio_loaded())
		EXPECT(class_of(rc) == MPI_ERR_READ_ONLY, "class %d", class_of(rc));
	/* The handler survives the application's free while the file uses it. */
	CHECK(MPI_Errhandler_free(&eh));
	CHECK(MPI_File_call_errhandler(fh, MPI_ERR_OTHER));
	EXPECT(eh_calls == 2 && eh_code == MPI_ERR_OTHER, "call_errhandler (%d calls, code %d)", eh_calls, eh_code);
	{
		int v[2];
		MPI_Status st;
		CHECK(MPI_File_read_at(fh, 0, v, 1, MPI_INT, &st));
		EXPECT(v[0] == t_val(0, 1), "read back %d", v[0]);
	}
	CHECK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
	CHECK(MPI_File_close(&fh));
	EXPECT(eh_calls == 2, "no other handler call (%d)", eh_calls);
}

/* collio only: a bad argument on one rank fails a collective call on every
 * rank (instead of hanging the others), and split collectives are checked.
 * collio_error_agreement=immediate: every call agrees at once. (By default
 * a call that does independent I/O without communicating, as the repeated
 * writes below would, fails at once only where the argument was bad, and
 * on every rank at the next synchronizing call: docs/errors.md.) */
static void one_rank_errors(const char *dir)
{
	MPI_File fh;
	MPI_Info info;
	int v[4] = {1, 2, 3, 4}, rc;
	MPI_Status st;
	MPI_Info_create(&info);
	MPI_Info_set(info, "collio_error_agreement", "immediate");
	CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(dir, "err.dat"), MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
			    info, &fh));
	MPI_Info_free(&info);
	rc = MPI_File_write_at_all(fh, 0, v, t_rank == t_size - 1 ? -1 : 4, MPI_INT, &st);
	EXPECT(rc != MPI_SUCCESS, "write_at_all with a bad count on one rank fails everywhere");
	if (t_rank == t_size - 1)
		EXPECT(class_of(rc) == MPI_ERR_COUNT, "class %d", class_of(rc));
	rc = MPI_File_read_all(fh, t_rank == 0 ? NULL : v, 4, MPI_INT, &st);
	EXPECT(rc != MPI_SUCCESS, "read_all with a NULL buffer on rank 0 fails everywhere");
	rc = MPI_File_write_ordered(fh, v, t_rank == 0 ? -2 : 1, MPI_INT, &st);
	EXPECT(rc != MPI_SUCCESS, "write_ordered with a bad count on rank 0 fails everywhere");
	rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, t_rank == 0 ? "external32" : "native", MPI_INFO_NULL);
	EXPECT(rc != MPI_SUCCESS, "set_view with an unsupported datarep on rank 0 fails everywhere");
	if (t_rank == 0)
		EXPECT(class_of(rc) == MPI_ERR_UNSUPPORTED_DATAREP, "class %d", class_of(rc));
	/* The file is still usable. */
	CHECK(MPI_File_write_at_all(fh, t_rank * 16, v, 4, MPI_INT, &st));
	CHECK(MPI_File_write_all_begin(fh, v, 4, MPI_INT));
	rc = MPI_File_write_all_begin(fh, v, 4, MPI_INT);
	EXPECT(rc != MPI_SUCCESS, "a second split collective is refused");
	rc = MPI_File_read_all_end(fh, v, &st);
	EXPECT(rc != MPI_SUCCESS, "an _end that does not match the _begin is refused");
	CHECK(MPI_File_write_all_end(fh, v, &st));
	rc = MPI_File_write_all_end(fh, v, &st);
	EXPECT(rc != MPI_SUCCESS, "an _end without _begin is refused");
	CHECK(MPI_File_close(&fh));
}

/* nice_of reads a thread's nice value (field 19 of its stat line). */
static int nice_of(const char *tid)
{
	char path[64], line[1024];
	int nice = 0;
	snprintf(path, sizeof path, "/proc/self/task/%s/stat", tid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return 0;
	if (fgets(line, sizeof line, f) != NULL) {
		char *p = strrchr(line, ')'); /* the command name may hold spaces */
		int field = 2;
		for (; p != NULL && *p != '\0'; p++)
			if (*p == ' ' && ++field == 19) {
				nice = atoi(p + 1);
				break;
			}
	}
	fclose(f);
	return nice;
}

/* quiet_monitor: once MPI is initialised, libcollio has moved the Go
 * runtime's monitor thread to SCHED_BATCH (with the threads it started
 * since, which inherit it): some thread is, the main thread is not, no
 * thread has another policy, and no nice value changed. (The first
 * nonblocking or split collective call puts the monitor back.) */
static void quiet_monitor(void)
{
	const char *off = getenv("COLLIO_QUIET_MONITOR");
	if (!collio_loaded() || (off != NULL && strcmp(off, "0") == 0))
		return;
	char self[32];
	snprintf(self, sizeof self, "%d", (int)getpid());
	int base = nice_of(self), batch = 0, other = 0, renice = 0;
	DIR *d = opendir("/proc/self/task");
	EXPECT(d != NULL, "cannot list /proc/self/task");
	if (d == NULL)
		return;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (e->d_name[0] == '.')
			continue;
		int policy = sched_getscheduler(atoi(e->d_name));
		if (policy == SCHED_BATCH)
			batch++;
		else if (policy != SCHED_OTHER && policy != -1) /* -1: the thread ended */
			other++;
		renice += nice_of(e->d_name) != base;
	}
	closedir(d);
	EXPECT(batch >= 1 && other == 0 && renice == 0, "threads under SCHED_BATCH: %d, under other policies: %d, "
	       "with a nice value other than the process's %d: %d", batch, other, base, renice);
	EXPECT(sched_getscheduler(0) == SCHED_OTHER, "the main thread's policy is %d", sched_getscheduler(0));
}

int main(int argc, char **argv)
{
	const char *dir = t_init(&argc, &argv, "misc");
	quiet_monitor(); /* before any nonblocking or split call gives the monitor back */
	info_and_handles(dir);
	errors(dir);
	if (collio_loaded())
		one_rank_errors(dir);
	t_done();
	return 0;
}
