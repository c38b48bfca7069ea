/* capi: collio's own C API (collio.h), its interplay with MPI_File_*,
 * the per-path hints configuration (COLLIO_HINTS_CONFIG) and pass-through
 * to the host MPI-IO (config rules and COLLIO_PASSTHROUGH). Needs libcollio
 * linked. */
#include <sys/stat.h>

#include "t.h"
#include "collio.h"

static void expect_hint(MPI_File fh, const char *key, const char *want)
{
	MPI_Info info;
	char val[MPI_MAX_INFO_VAL + 1];
	int flag = 0;
	CHECK(MPI_File_get_info(fh, &info));
	CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag));
	EXPECT(flag && strcmp(val, want) == 0, "hint %s is %s, want %s", key, flag ? val : "unset", want);
	CHECK(MPI_Info_free(&info));
}

static void own_api(const char *dir)
{
	collio_file f, g;
	MPI_File mf;
	MPI_Offset n, size, pos;
	MPI_Info info;
	MPI_Datatype ftype;
	int buf[100], got[100], rc;
	char msg[256];

	for (int i = 0; i < 100; i++)
		buf[i] = t_val(t_rank, i);
	CHECK(collio_open(MPI_COMM_WORLD, t_path(dir, "capi.dat"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &f));
	CHECK(collio_write_at_all(f, (MPI_Offset)t_rank * 400, buf, 100, MPI_INT, &n));
	EXPECT(n == 400, "wrote %lld bytes", (long long)n);
	CHECK(collio_read_at_all(f, (MPI_Offset)t_rank * 400, got, 100, MPI_INT, &n));
	EXPECT(n == 400 && memcmp(buf, got, 400) == 0, "read back");
	CHECK(collio_sync(f));
	CHECK(collio_get_size(f, &size));
	EXPECT(size == (MPI_Offset)t_size * 400, "size %lld", (long long)size);
	CHECK(collio_file_get_info(f, &info));
	CHECK(MPI_Info_free(&info));

	/* A view after that data: rank r owns every t_size-th int. */
	CHECK(MPI_Type_vector(1, 1, t_size, MPI_INT, &ftype));
	{
		MPI_Datatype rs;
		CHECK(MPI_Type_create_resized(ftype, 0, (MPI_Aint)t_size * 4, &rs));
		MPI_Type_free(&ftype);
		ftype = rs;
	}
	CHECK(MPI_Type_commit(&ftype));
	CHECK(collio_set_view(f, (MPI_Offset)t_size * 400 + t_rank * 4, MPI_INT, ftype, MPI_INFO_NULL));
	CHECK(collio_seek(f, 10, MPI_SEEK_SET));
	CHECK(collio_write_all(f, buf, 10, MPI_INT, &n));
	CHECK(collio_get_position(f, &pos));
	EXPECT(pos == 20, "position %lld", (long long)pos);
	CHECK(collio_seek(f, 10, MPI_SEEK_SET));
	CHECK(collio_read(f, got, 10, MPI_INT, &n));
	EXPECT(n == 40 && memcmp(buf, got, 40) == 0, "read through the view");
	CHECK(collio_set_size(f, 10000));
	CHECK(collio_preallocate(f, 12000));
	CHECK(collio_get_size(f, &size));
	EXPECT(size == 12000, "size %lld", (long long)size);

	/* The same handle through MPI_File_*. */
	mf = collio_file_to_mpi(f);
	EXPECT(collio_is_collio_file(mf), "collio_open gives a collio file");
	CHECK(MPI_File_read_at(mf, 10, got, 10, MPI_INT, MPI_STATUS_IGNORE));
	EXPECT(memcmp(buf, got, 40) == 0, "MPI_File_read_at on a collio_file");
	CHECK(collio_close(&f));
	EXPECT(f == COLLIO_FILE_NULL, "closed handle");
	EXPECT(!collio_is_collio_file(mf), "closed file is no longer a collio file");

	/* And the other way. */
	CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(dir, "capi.dat"), MPI_MODE_RDONLY, MPI_INFO_NULL, &mf));
	CHECK(collio_file_from_mpi(mf, &g));
	CHECK(collio_read_at(g, (MPI_Offset)t_rank * 400, got, 100, MPI_INT, &n));
	EXPECT(got[0] == buf[0], "collio_read_at on an MPI_File");
	CHECK(MPI_File_close(&mf));

	rc = collio_open(MPI_COMM_WORLD, t_path(dir, "missing.dat"), MPI_MODE_RDONLY, MPI_INFO_NULL, &f);
	EXPECT(rc == MPI_ERR_NO_SUCH_FILE, "rc %d", rc);
	EXPECT(collio_last_error(msg, sizeof msg) > 0 && strstr(msg, "missing.dat") != NULL, "last error: %s", msg);
	MPI_Type_free(&ftype);
}

static void config_and_passthrough(const char *dir)
{
	char cfg[4096], cdir[4096], hdir[4096], edir[4096];
	MPI_File fh;
	MPI_Info info;
	int v = t_val(t_rank, 7);

	snprintf(cfg, sizeof cfg, "%s/hints.json", dir);
	snprintf(cdir, sizeof cdir, "%s/cfg", dir);
	snprintf(hdir, sizeof hdir, "%s/host", dir);
	snprintf(edir, sizeof edir, "%s/env", dir);
	if (t_rank == 0) {
		FILE *fp = fopen(cfg, "w");
		if (fp == NULL)
			FAIL("cannot write %s", cfg);
		fprintf(fp,
			"{\"rules\": [\n"
			"  {\"prefix\": \"%s/\", \"hints\": {\"cb_buffer_size\": \"3m\", \"ind_rd_buffer_size\": \"2m\"}},\n"
			"  {\"directory\": \"%s\", \"hints\": {\"ind_wr_buffer_size\": \"1m\"}},\n"
			"  {\"path\": \"%s/exact.dat\", \"hints\": {\"cb_buffer_size\": \"5m\", \"romio_cb_write\": \"DISABLE\"}},\n"
			"  {\"prefix\": \"%s/\", \"override\": false, \"hints\": {\"ind_rd_buffer_size\": \"1m\"}},\n"
			"  {\"prefix\": \"%s/\", \"passthrough\": true}\n"
			"]}\n",
			cdir, cdir, cdir, cdir, hdir);
		fclose(fp);
		mkdir(cdir, 0755);
		mkdir(hdir, 0755);
		mkdir(edir, 0755);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	setenv("COLLIO_HINTS_CONFIG", cfg, 1);

	/* Config hints override the program's, except override:false rules. */
	CHECK(MPI_Info_create(&info));
	CHECK(MPI_Info_set(info, "cb_buffer_size", "1048576"));
	CHECK(MPI_Info_set(info, "ind_rd_buffer_size", "65536"));
	CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(cdir, "a.dat"), MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh));
	EXPECT(collio_is_collio_file(fh), "a.dat is served by collio");
	expect_hint(fh, "cb_buffer_size", "3145728");
	expect_hint(fh, "ind_wr_buffer_size", "1048576");
	expect_hint(fh, "ind_rd_buffer_size", "2097152");
	CHECK(MPI_File_close(&fh));
	CHECK(MPI_Info_free(&info));
	CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(cdir, "exact.dat"), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
			    &fh));
	expect_hint(fh, "cb_buffer_size", "5242880");
	expect_hint(fh, "romio_cb_write", "disable");
	expect_hint(fh, "ind_wr_buffer_size", "1048576");
	CHECK(MPI_File_close(&fh));

	/* A passthrough rule: the host MPI-IO serves the file. */
	CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(hdir, "p.dat"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
	EXPECT(!collio_is_collio_file(fh) && fh != MPI_FILE_NULL, "p.dat is passed through");
	CHECK(MPI_File_write_at_all(fh, t_rank * 4, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
	EXPECT(MPI_File_f2c(MPI_File_c2f(fh)) == fh, "c2f/f2c of a passed-through file");
	CHECK(MPI_File_close(&fh));

	/* COLLIO_PASSTHROUGH. */
	setenv("COLLIO_PASSTHROUGH", edir, 1);
	CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(edir, "q.dat"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
	EXPECT(!collio_is_collio_file(fh) && fh != MPI_FILE_NULL, "q.dat is passed through");
	CHECK(MPI_File_write_at_all(fh, t_rank * 4, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
	CHECK(MPI_File_close(&fh));
	MPI_Barrier(MPI_COMM_WORLD);
	if (t_rank == 0)
		CHECK(MPI_File_delete(t_path(edir, "q.dat"), MPI_INFO_NULL));
	unsetenv("COLLIO_PASSTHROUGH");

	/* Back to collio: the passed-through file is readable by it. */
	CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(hdir, "p.dat"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
	unsetenv("COLLIO_HINTS_CONFIG");
	{
		int got = 0;
		MPI_File g;
		CHECK(MPI_File_close(&fh));
		CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(hdir, "p.dat"), MPI_MODE_RDONLY, MPI_INFO_NULL, &g));
		EXPECT(collio_is_collio_file(g), "p.dat through collio without the config");
		CHECK(MPI_File_read_at(g, t_rank * 4, &got, 1, MPI_INT, MPI_STATUS_IGNORE));
		EXPECT(got == v, "read %d", got);
		CHECK(MPI_File_close(&g));
	}
}

/* ROMIO_HINTS is read; a malformed COLLIO_HINTS_CONFIG only warns. */
static void env_hints(const char *dir)
{
	char rh[4096], bad[4096];
	MPI_File fh;
	snprintf(rh, sizeof rh, "%s/romio-hints", dir);
	snprintf(bad, sizeof bad, "%s/bad.json", dir);
	if (t_rank == 0) {
		FILE *a = fopen(rh, "w"), *b = fopen(bad, "w");
		if (a == NULL || b == NULL)
			FAIL("cannot write hint files");
		fprintf(a, "# system hints\nromio_ds_write disable\nind_wr_buffer_size 262144\n");
		fprintf(b, "{\"rules\": [ not json");
		fclose(a);
		fclose(b);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	setenv("ROMIO_HINTS", rh, 1);
	setenv("COLLIO_HINTS_CONFIG", bad, 1);
	CHECK(MPI_File_open(MPI_COMM_WORLD, t_path(dir, "env.dat"), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
			    &fh));
	EXPECT(collio_is_collio_file(fh), "env.dat is served by collio");
	expect_hint(fh, "romio_ds_write", "disable");
	expect_hint(fh, "ind_wr_buffer_size", "262144");
	CHECK(MPI_File_close(&fh));
	unsetenv("ROMIO_HINTS");
	unsetenv("COLLIO_HINTS_CONFIG");
}

int main(int argc, char **argv)
{
	const char *dir = t_init(&argc, &argv, "capi");
	EXPECT(collio_loaded(), "libcollio is linked");
	own_api(dir);
	config_and_passthrough(dir);
	env_hints(dir);
	t_done();
	return 0;
}
