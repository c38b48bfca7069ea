! MPI-IO from Fortran through mpif.h (compiled with -DUSE_MPIF_H) or
! `use mpi`: collective writes and reads through darray and subarray views,
! write_at_all, independent writes and reads at the individual file
! pointer, nonblocking calls, set_view/get_view with a blank-padded datarep,
! a PMPI_ name, MPI_BOTTOM (use mpi only), the shared file pointer and split
! collectives, hints through an info object, error returns and a Fortran
! error handler.
!
!   mpirun -np N fbasic OUTDIR
!
! Each file's content is checked here against the values the ranks wrote;
! run.sh also compares the files of the host MPI-IO's run with collio's.
! COLLIO_EXPECT=1 (0) fails the run unless collio (the host MPI-IO) served
! the calls: only collio reports collio_* hints in MPI_File_get_info.

module fcount
  implicit none
  integer :: handler_calls = 0, handler_code = 0, handler_file = -1
end module fcount

subroutine on_error(fh, code)
  use fcount
  implicit none
  integer :: fh, code
  handler_calls = handler_calls + 1
  handler_code = code
  handler_file = fh
end subroutine on_error

program fbasic
  use fcount
#ifdef USE_MPIF_H
  implicit none
  include 'mpif.h'
#else
  use mpi
  implicit none
#endif
  character(len=*), parameter :: prog = 'fbasic'
  integer, parameter :: nx = 10, ny = 7, nat = 5, nind = 8
  integer :: ierr, rank, np, fh, info, i, j, k, ftype, eh, eh2
  integer :: dims(2), coords(2), gsizes(2), distribs(2), dargs(2), psizes(2)
  integer :: lstart(2), lsize(2), subsizes(2), starts(2)
  integer :: status(MPI_STATUS_SIZE), req, cnt, etype2, ftype2, amode
  integer(kind=MPI_OFFSET_KIND) :: off, disp, fsize
  integer(kind=MPI_ADDRESS_KIND) :: ext
#ifndef USE_MPIF_H
  integer(kind=MPI_ADDRESS_KIND) :: addr(1)
  integer :: btype
#endif
  integer, allocatable :: lbuf(:), rbuf(:), whole(:)
  integer :: at(nat), atr(nat), ind(nind), indr(nind)
  character(len=4096) :: dir
  character(len=32) :: rep, expect
  character(len=MPI_MAX_INFO_VAL) :: val
  logical :: flag, collio
  external :: on_error

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  if (command_argument_count() < 1) call fail('usage: fbasic OUTDIR')
  call get_command_argument(1, dir)
  call get_environment_variable('COLLIO_EXPECT', expect)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)

  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'cb_buffer_size', '1048576', ierr)
  call MPI_Info_set(info, 'romio_cb_write', 'enable', ierr)

  ! darray: an nx x ny global array in blocks over a 2-D process grid,
  ! each element holding its global (0-based, Fortran order) index.
  dims = 0
  call MPI_Dims_create(np, 2, dims, ierr)
  gsizes = (/ nx, ny /)
  distribs = MPI_DISTRIBUTE_BLOCK
  dargs = MPI_DISTRIBUTE_DFLT_DARG
  psizes = dims
  call MPI_Type_create_darray(np, rank, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_FORTRAN, &
       MPI_INTEGER, ftype, ierr)
  call check(ierr, 'type_create_darray')
  call MPI_Type_commit(ftype, ierr)
  ! The process grid is row-major (MPI-3.1 4.1.4); blocks are ceil(g/p).
  coords(1) = rank / dims(2)
  coords(2) = mod(rank, dims(2))
  do k = 1, 2
     lstart(k) = coords(k) * ((gsizes(k) + dims(k) - 1) / dims(k))
     lsize(k) = max(0, min(gsizes(k), lstart(k) + (gsizes(k) + dims(k) - 1) / dims(k)) - lstart(k))
  end do
  allocate(lbuf(nx * ny), rbuf(nx * ny), whole(nx * ny))
  k = 0
  do j = 0, lsize(2) - 1
     do i = 0, lsize(1) - 1
        k = k + 1
        lbuf(k) = (lstart(1) + i) + nx * (lstart(2) + j)
     end do
  end do
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/darray.dat', MPI_MODE_CREATE + MPI_MODE_RDWR, info, fh, ierr)
  call check(ierr, 'open darray.dat')
  call check_served(fh)
  disp = 0
  call MPI_File_set_view(fh, disp, MPI_INTEGER, ftype, 'native', info, ierr)
  call check(ierr, 'set_view darray')
  call MPI_File_write_all(fh, lbuf, lsize(1) * lsize(2), MPI_INTEGER, status, ierr)
  call check(ierr, 'write_all darray')
  call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
  if (cnt /= lsize(1) * lsize(2)) call fail('write_all darray: status count')
  rbuf = -1
  call MPI_File_set_view(fh, disp, MPI_INTEGER, ftype, 'native', info, ierr)
  call MPI_File_read_all(fh, rbuf, lsize(1) * lsize(2), MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(ierr, 'read_all darray')
  if (any(rbuf(1:lsize(1) * lsize(2)) /= lbuf(1:lsize(1) * lsize(2)))) call fail('read_all darray: wrong data')
  call MPI_File_close(fh, ierr)
  call check(ierr, 'close darray.dat')
  if (fh /= MPI_FILE_NULL) call fail('close did not set MPI_FILE_NULL')
  call check_whole('darray.dat', 0, 0)
  call MPI_Type_free(ftype, ierr)

  ! subarray: columns split over the ranks, the datarep a blank-padded
  ! variable; the view read back with get_view.
  subsizes = (/ nx, ny / np /)
  if (rank < mod(ny, np)) subsizes(2) = subsizes(2) + 1
  starts = (/ 0, rank * (ny / np) + min(rank, mod(ny, np)) /)
  call MPI_Type_create_subarray(2, gsizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INTEGER, ftype, ierr)
  call MPI_Type_commit(ftype, ierr)
  k = 0
  do j = 0, subsizes(2) - 1
     do i = 0, nx - 1
        k = k + 1
        lbuf(k) = i + nx * (starts(2) + j) + 1000
     end do
  end do
  rep = 'native'
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/subarray.dat', MPI_MODE_CREATE + MPI_MODE_WRONLY, &
       MPI_INFO_NULL, fh, ierr)
  call check(ierr, 'open subarray.dat')
  disp = 16
  call MPI_File_set_view(fh, disp, MPI_INTEGER, ftype, rep, MPI_INFO_NULL, ierr)
  call check(ierr, 'set_view subarray')
  rep = 'x'
  call MPI_File_get_view(fh, disp, etype2, ftype2, rep, ierr)
  call check(ierr, 'get_view')
  if (disp /= 16 .or. rep /= 'native' .or. etype2 /= MPI_INTEGER) call fail('get_view: ' // rep)
  off = 0
  call MPI_File_get_byte_offset(fh, off, disp, ierr)
  call check(ierr, 'get_byte_offset')
  if (disp /= 16 + 4 * nx * starts(2)) call fail('get_byte_offset')
  call MPI_File_write_all(fh, lbuf, nx * subsizes(2), MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(ierr, 'write_all subarray')
  ! (Other ranks' writes are visible after sync, barrier, sync: MPI-3.1 13.6.1.)
  call MPI_File_sync(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_sync(fh, ierr)
  call MPI_File_get_size(fh, fsize, ierr)
  call check(ierr, 'get_size')
  if (fsize /= 16 + 4 * nx * ny) call fail('get_size after write_all subarray')
  ! The profiling name reaches the same file.
  fsize = -1
  call PMPI_File_get_size(fh, fsize, ierr)
  call check(ierr, 'PMPI_File_get_size')
  if (fsize /= 16 + 4 * nx * ny) call fail('PMPI_File_get_size')
  call MPI_File_get_amode(fh, amode, ierr)
  if (amode /= MPI_MODE_CREATE + MPI_MODE_WRONLY) call fail('get_amode')
  call MPI_File_close(fh, ierr)
  call check(ierr, 'close subarray.dat')
  call check_whole('subarray.dat', 16, 1000)
  call MPI_Type_free(ftype, ierr)

  ! write_at_all, then independent reads of a neighbour's part.
  do k = 1, nat
     at(k) = rank * 100 + k
  end do
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/at.dat', MPI_MODE_CREATE + MPI_MODE_RDWR, info, fh, ierr)
  call check(ierr, 'open at.dat')
  off = rank * nat * 4
  call MPI_File_write_at_all(fh, off, at, nat, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(ierr, 'write_at_all')
  call MPI_File_sync(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_sync(fh, ierr)
  off = mod(rank + 1, np) * nat * 4
  call MPI_File_read_at(fh, off, atr, nat, MPI_INTEGER, status, ierr)
  call check(ierr, 'read_at')
  call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
  if (cnt /= nat) call fail('read_at: status count')
  do k = 1, nat
     if (atr(k) /= mod(rank + 1, np) * 100 + k) call fail('read_at: wrong data')
  end do
  call MPI_File_close(fh, ierr)

  ! Independent writes at the individual file pointer of an integer view,
  ! one nonblocking; then nonblocking reads.
  do k = 1, nind
     ind(k) = rank * 1000 + k
  end do
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/ind.dat', MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, &
       fh, ierr)
  call check(ierr, 'open ind.dat')
  disp = 8
  call MPI_File_set_view(fh, disp, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
  off = rank * nind
  call MPI_File_seek(fh, off, MPI_SEEK_SET, ierr)
  call check(ierr, 'seek')
  call MPI_File_write(fh, ind, nind / 2, MPI_INTEGER, status, ierr)
  call check(ierr, 'write')
  call MPI_File_iwrite(fh, ind(nind / 2 + 1), nind / 2, MPI_INTEGER, req, ierr)
  call check(ierr, 'iwrite')
  call MPI_Wait(req, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
  if (cnt /= nind / 2) call fail('iwrite: status count')
  call MPI_File_get_position(fh, off, ierr)
  if (off /= (rank + 1) * nind) call fail('get_position after write')
  call MPI_File_sync(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_sync(fh, ierr)
  off = mod(rank + np - 1, np) * nind
  indr = -1
  call MPI_File_iread_at(fh, off, indr, nind, MPI_INTEGER, req, ierr)
  call check(ierr, 'iread_at')
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  do k = 1, nind
     if (indr(k) /= mod(rank + np - 1, np) * 1000 + k) call fail('iread_at: wrong data')
  end do
#ifndef USE_MPIF_H
  ! MPI_BOTTOM with a datatype of absolute addresses (use mpi only: with
  ! mpif.h's implicit interfaces gfortran refuses the scalar MPI_BOTTOM
  ! where arrays are passed elsewhere).
  call MPI_Get_address(ind, addr(1), ierr)
  call MPI_Type_create_hindexed(1, (/ nind /), addr, MPI_INTEGER, btype, ierr)
  call MPI_Type_commit(btype, ierr)
  off = (np + rank) * nind
  call MPI_File_write_at_all(fh, off, MPI_BOTTOM, 1, btype, MPI_STATUS_IGNORE, ierr)
  call check(ierr, 'write_at_all from MPI_BOTTOM')
  call MPI_File_sync(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_sync(fh, ierr)
  indr = -1
  call MPI_File_read_at(fh, off, indr, nind, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  if (any(indr /= ind)) call fail('write_at_all from MPI_BOTTOM: wrong data')
  call MPI_Type_free(btype, ierr)
#endif
  call MPI_File_close(fh, ierr)

  ! Shared pointer and split collectives: write_ordered of 1 + rank
  ! integers, seek_shared and get_position_shared, a split write_at_all
  ! after them, a split read_all back, atomicity, group, type extent, size.
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/ord.dat', MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, &
       fh, ierr)
  call check(ierr, 'open ord.dat')
  disp = 0
  call MPI_File_set_view(fh, disp, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
  ind = rank + 1
  call MPI_File_write_ordered(fh, ind, rank + 1, MPI_INTEGER, status, ierr)
  call check(ierr, 'write_ordered')
  call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
  if (cnt /= rank + 1) call fail('write_ordered: status count')
  call MPI_File_get_position_shared(fh, off, ierr)
  call check(ierr, 'get_position_shared')
  if (off /= np * (np + 1) / 2) call fail('get_position_shared after write_ordered')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  off = 0
  call MPI_File_seek_shared(fh, off, MPI_SEEK_END, ierr)
  call check(ierr, 'seek_shared')
  call MPI_File_get_position_shared(fh, off, ierr)
  if (off /= np * (np + 1) / 2) call fail('get_position_shared after seek_shared')
  at = rank * 100 + (/ (k, k = 1, nat) /)
  off = np * (np + 1) / 2 + rank * 2
  call MPI_File_write_at_all_begin(fh, off, at, 2, MPI_INTEGER, ierr)
  call check(ierr, 'write_at_all_begin')
  call MPI_File_write_at_all_end(fh, at, status, ierr)
  call check(ierr, 'write_at_all_end')
  call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
  if (cnt /= 2) call fail('write_at_all_end: status count')
  call MPI_File_sync(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_sync(fh, ierr)
  off = np * (np + 1) / 2 + mod(rank + 1, np) * 2
  call MPI_File_seek(fh, off, MPI_SEEK_SET, ierr)
  atr = -1
  call MPI_File_read_all_begin(fh, atr, 2, MPI_INTEGER, ierr)
  call check(ierr, 'read_all_begin')
  call MPI_File_read_all_end(fh, atr, MPI_STATUS_IGNORE, ierr)
  call check(ierr, 'read_all_end')
  if (atr(1) /= mod(rank + 1, np) * 100 + 1 .or. atr(2) /= mod(rank + 1, np) * 100 + 2) &
       call fail('read_all_end: wrong data')
  call MPI_File_set_info(fh, info, ierr)
  call check(ierr, 'set_info')
  call MPI_File_set_atomicity(fh, .true., ierr)
  call check(ierr, 'set_atomicity')
  call MPI_File_get_atomicity(fh, flag, ierr)
  if (.not. flag) call fail('get_atomicity after set_atomicity(.true.)')
  call MPI_File_set_atomicity(fh, .false., ierr)
  call MPI_File_get_atomicity(fh, flag, ierr)
  if (flag) call fail('get_atomicity after set_atomicity(.false.)')
  call MPI_File_get_group(fh, i, ierr)
  call check(ierr, 'get_group')
  call MPI_Group_size(i, cnt, ierr)
  if (cnt /= np) call fail('get_group: size')
  call MPI_Group_free(i, ierr)
  call MPI_File_get_type_extent(fh, MPI_INTEGER, ext, ierr)
  call check(ierr, 'get_type_extent')
  if (ext /= 4) call fail('get_type_extent')
  fsize = 4 * (np * (np + 1) / 2 + 2 * np) + 8
  call MPI_File_set_size(fh, fsize, ierr)
  call check(ierr, 'set_size')
  call MPI_File_get_size(fh, off, ierr)
  if (off /= fsize) call fail('get_size after set_size')
  call MPI_File_close(fh, ierr)

  ! Hints: collio reports cb_buffer_size as given and its own collio_* keys.
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/at.dat', MPI_MODE_RDONLY, info, fh, ierr)
  call MPI_File_get_info(fh, i, ierr)
  call check(ierr, 'get_info')
  call MPI_Info_get(i, 'cb_buffer_size', MPI_MAX_INFO_VAL, val, flag, ierr)
  collio = served(fh)
  if (collio .and. (.not. flag .or. val /= '1048576')) call fail('get_info: cb_buffer_size is ' // trim(val))
  call MPI_Info_free(i, ierr)

  ! Errors: a write to a read-only file (through a Fortran error handler),
  ! a negative count, a missing file.
  call MPI_File_create_errhandler(on_error, eh, ierr)
  call check(ierr, 'create_errhandler')
  call MPI_File_set_errhandler(fh, eh, ierr)
  call check(ierr, 'set_errhandler')
  call MPI_File_get_errhandler(fh, eh2, ierr)
  call check(ierr, 'get_errhandler')
  if (eh2 /= eh) call fail('get_errhandler returned another handler')
  call MPI_Errhandler_free(eh2, ierr)
  off = 0
  call MPI_File_write_at(fh, off, at, 1, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call expect_class(ierr, MPI_ERR_READ_ONLY, 'write_at to a read-only file', 'read-only')
  if (handler_calls /= 1) call fail('the Fortran error handler was not called')
  if (handler_file /= fh .or. handler_code /= ierr) call fail('the Fortran error handler got wrong arguments')
  call MPI_File_call_errhandler(fh, MPI_ERR_OTHER, ierr)
  if (handler_calls /= 2 .or. handler_code /= MPI_ERR_OTHER) call fail('call_errhandler did not reach the handler')
  call MPI_File_close(fh, ierr)
  call MPI_Errhandler_free(eh, ierr)
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/at.dat', MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  off = 0
  call MPI_File_write_at(fh, off, at, -1, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call expect_class(ierr, MPI_ERR_COUNT, 'write_at with count -1', 'count -1 is negative')
  call MPI_File_close(fh, ierr)
  fh = -7
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/missing.dat', MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
  call expect_class(ierr, MPI_ERR_NO_SUCH_FILE, 'open of a missing file', 'no such file')
  ! (Open MPI 4.1's mpif.h binding leaves fh as it was.)
  if (collio .and. fh /= MPI_FILE_NULL) call fail('a failed open did not give MPI_FILE_NULL')

  ! delete: a scratch file.
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/scratch.dat', MPI_MODE_CREATE + MPI_MODE_WRONLY, &
       MPI_INFO_NULL, fh, ierr)
  call MPI_File_close(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
     call MPI_File_delete(trim(dir) // '/scratch.dat  ', MPI_INFO_NULL, ierr)
     call check(ierr, 'delete')
  end if

  call MPI_Info_free(info, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a)', 'PASS fbasic (', np, ' ranks)'
  call MPI_Finalize(ierr)

contains

#include "checks.inc"

  subroutine check_served(f)
    integer, intent(in) :: f
    if (expect == '1' .and. .not. served(f)) call fail('COLLIO_EXPECT=1 but the host MPI-IO serves the file')
    if (expect == '0' .and. served(f)) call fail('COLLIO_EXPECT=0 but collio serves the file')
  end subroutine check_served

  ! expect_class checks rc's error class, and under collio its message.
  subroutine expect_class(rc, want, what, text)
    integer, intent(in) :: rc, want
    character(len=*), intent(in) :: what, text
    integer :: c, n, e
    character(len=MPI_MAX_ERROR_STRING) :: s
    if (rc == MPI_SUCCESS) call fail(what // ' succeeded')
    call MPI_Error_class(rc, c, e)
    if (c /= want) call fail(what // ': wrong error class')
    call MPI_Error_string(rc, s, n, e)
    if (collio .and. (index(s(1:n), 'collio: ') == 0 .or. index(s(1:n), text) == 0)) &
         call fail(what // ': message ' // s(1:n))
  end subroutine expect_class

  ! check_whole: rank 0 reads the nx*ny integers of the file after skip
  ! bytes and finds the k-th (from 0) equal to k + add.
  subroutine check_whole(name, skip, add)
    character(len=*), intent(in) :: name
    integer, intent(in) :: skip, add
    integer :: f, e, m
    integer(kind=MPI_OFFSET_KIND) :: o
    if (rank /= 0) return
    call MPI_File_open(MPI_COMM_SELF, trim(dir) // '/' // name, MPI_MODE_RDONLY, MPI_INFO_NULL, f, e)
    call check(e, 'open ' // name // ' to check it')
    o = skip
    whole = -1
    call MPI_File_read_at(f, o, whole, nx * ny, MPI_INTEGER, MPI_STATUS_IGNORE, e)
    call check(e, 'read_at ' // name)
    do m = 1, nx * ny
       if (whole(m) /= m - 1 + add) call fail(name // ': wrong content')
    end do
    call MPI_File_close(f, e)
  end subroutine check_whole

end program fbasic
