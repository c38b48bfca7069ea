! Offsets whose byte positions overflow an MPI_Offset, from Fortran through
! mpif.h (compiled with -DUSE_MPIF_H) or `use mpi`.
!
!   mpirun -np N foverflow OUTDIR
!
! With 8-byte etypes, etype offset 2**61+1 is byte 2**64+8. The host MPI-IO
! multiplies unchecked, writes at byte 8 and returns MPI_SUCCESS, so this
! program runs under collio only (run.sh): every such call must fail with
! MPI_ERR_ARG and collio's message naming the offset, and nothing may be
! written. Collective calls where only the last rank passes the offset
! (write_at_all, read_at_all, iwrite_at_all) fail on every rank; independent
! calls (write_at, read_at, a write whose end passes 2**63-1), seek and
! get_byte_offset on the rank that makes them.

program foverflow
#ifdef USE_MPIF_H
  implicit none
  include 'mpif.h'
#else
  use mpi
  implicit none
#endif
  character(len=*), parameter :: prog = 'foverflow'
  integer(kind=MPI_OFFSET_KIND), parameter :: wrap = 2_MPI_OFFSET_KIND**61 + 1_MPI_OFFSET_KIND
  ! (2**63-1)/8: byte 2**63-8, where one etype ends at 2**63.
  integer(kind=MPI_OFFSET_KIND), parameter :: last = 1152921504606846975_MPI_OFFSET_KIND
  integer(kind=MPI_OFFSET_KIND) :: off, disp
  integer :: ierr, rank, np, fh, bad, req, c, e2
  integer :: fsize
  double precision :: v(2)
  character(len=4096) :: dir
  character(len=64) :: wrapped, lasttext, badrank

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  if (command_argument_count() < 1) call fail('usage: foverflow OUTDIR')
  call get_command_argument(1, dir)
  ! MPI_Wait's error goes through the communicator's handler.
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  bad = np - 1
  write (wrapped, '(a,i0)') 'offset ', wrap
  write (lasttext, '(a,i0)') 'offset ', last
  write (badrank, '(a,i0,a)') '(rank ', bad, ')'
  v = (/ 1d0, 2d0 /)

  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/foverflow.dat', MPI_MODE_CREATE + MPI_MODE_RDWR, &
       MPI_INFO_NULL, fh, ierr)
  call check(ierr, 'open')
  if (.not. served(fh)) call fail('collio only: the host MPI-IO writes these calls at wrapped offsets')
  disp = 0
  call MPI_File_set_view(fh, disp, MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, 'native', MPI_INFO_NULL, ierr)
  call check(ierr, 'set_view')

  off = rank
  if (rank == bad) off = wrap
  call MPI_File_write_at_all(fh, off, v, 1, MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE, ierr)
  call expect_arg(ierr, 'write_at_all with one rank at 2**61+1', 'collio: write_at_all ', trim(badrank), &
       trim(wrapped))
  call MPI_File_read_at_all(fh, off, v, 1, MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE, ierr)
  call expect_arg(ierr, 'read_at_all with one rank at 2**61+1', 'collio: read_at_all ', trim(badrank), &
       trim(wrapped))
  call MPI_File_iwrite_at_all(fh, off, v, 1, MPI_DOUBLE_PRECISION, req, ierr)
  call check(ierr, 'iwrite_at_all')
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call MPI_Error_class(ierr, c, e2)
  if (ierr == MPI_SUCCESS .or. c /= MPI_ERR_ARG) call fail('iwrite_at_all with one rank at 2**61+1: MPI_Wait')

  call MPI_File_write_at(fh, wrap, v, 1, MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE, ierr)
  call expect_arg(ierr, 'write_at at 2**61+1', 'collio: write_at ', trim(wrapped), 'out of range')
  call MPI_File_read_at(fh, wrap, v, 1, MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE, ierr)
  call expect_arg(ierr, 'read_at at 2**61+1', 'collio: read_at ', trim(wrapped), 'out of range')
  call MPI_File_write_at(fh, last, v, 2, MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE, ierr)
  call expect_arg(ierr, 'write_at of 16 bytes at the last etype', 'collio: write_at ', trim(lasttext), '2^63-1')
  call MPI_File_seek(fh, wrap, MPI_SEEK_SET, ierr)
  call expect_arg(ierr, 'seek to 2**61+1', 'collio: seek ', trim(wrapped), 'out of range')
  call MPI_File_get_byte_offset(fh, wrap, disp, ierr)
  call expect_arg(ierr, 'get_byte_offset of 2**61+1', 'collio: get_byte_offset ', trim(wrapped), 'out of range')

  call MPI_File_close(fh, ierr)
  call check(ierr, 'close')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
     inquire (file=trim(dir) // '/foverflow.dat', size=fsize)
     if (fsize /= 0) call fail('foverflow.dat is not empty: nothing may be written')
     write (*, '(a,i0,a)') 'PASS foverflow (collio, ', np, ' ranks)'
  end if
  call MPI_Finalize(ierr)

contains

#include "checks.inc"

  ! expect_arg checks that rc is of class MPI_ERR_ARG and that its message
  ! holds t1, t2 and t3.
  subroutine expect_arg(rc, what, t1, t2, t3)
    integer, intent(in) :: rc
    character(len=*), intent(in) :: what, t1, t2, t3
    integer :: cls, n, e
    character(len=MPI_MAX_ERROR_STRING) :: s
    if (rc == MPI_SUCCESS) call fail(what // ' succeeded')
    call MPI_Error_class(rc, cls, e)
    call MPI_Error_string(rc, s, n, e)
    if (cls /= MPI_ERR_ARG) call fail(what // ': not MPI_ERR_ARG: ' // s(1:n))
    if (index(s(1:n), t1) == 0 .or. index(s(1:n), t2) == 0 .or. index(s(1:n), t3) == 0) &
         call fail(what // ': message ' // s(1:n) // '; want ' // t1 // ', ' // t2 // ', ' // t3)
  end subroutine expect_arg

end program foverflow
